// A folder of JPEG photos in the layout of Keras' ImageDataGenerator.flow_from_directory, as
// the seed-004 Dogs-vs-Cats blog post uses it:
//
//   data/train/cats/cat.0.jpg          data/validation/cats/cat.1000.jpg
//   data/train/cats/cat.1.jpg          ...
//   ...                                data/validation/dogs/dog.1000.jpg
//   data/train/dogs/dog.0.jpg          ...
//
// Each sub-folder of the root is one class. The classes are the sub-folder names sorted, so
// the label of a photo is the index of its folder in that list (cats = 0, dogs = 1), as in
// Keras. Files are sorted by name within a class, so a run lists them in the same order on
// every machine (a directory listing's own order is arbitrary).
//
// Real photo folders hold strays: a Thumbs.db, a .png, a zero-byte or cut-off download. These
// are left out with the reason recorded (SkippedFile), and the app prints the list, rather
// than stopping a long run at file 1,873 or training on grey half-images. What cannot be
// trained on at all is an error: a missing root, no class folders, an empty class.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/jpeg_image.h"

namespace engine::datasets {

struct SkippedFile {
  std::string path;
  std::string reason;  // e.g. "not a .jpg/.jpeg file", "empty file (0 bytes), not a JPEG"
};

struct ImageFolder {
  std::string root;
  std::vector<std::string> classes;  // sub-folder names, sorted; a label indexes this
  std::vector<std::string> paths;    // every usable image, class by class, sorted by name
  std::vector<int32_t> labels;       // index into classes, per path
  std::vector<SkippedFile> skipped;  // files left out, with the reason

  int64_t size() const { return static_cast<int64_t>(paths.size()); }
};

// Lists dir/<class>/*. Throws ImageError naming the folder when dir is missing or not a
// directory, has no class sub-folders, or a class folder holds no .jpg/.jpeg file (an empty
// class would silently train a model that never predicts it). `expected_classes`, when not
// empty, must equal the classes found (validation must use the training classes), else an
// ImageError lists both. Files whose extension is not .jpg/.jpeg (any case) are skipped with
// the reason "not a .jpg/.jpeg file"; hidden files (.DS_Store) and folders inside a class
// folder are ignored. Nothing is decoded here.
ImageFolder scan_image_folder(const std::string& dir,
                              const std::vector<std::string>& expected_classes = {});

// Decodes every image of `folder` once, at height x width (decode_jpeg_file), on `workers`
// OpenMP threads (0: all cores). Files that fail with ImageError move from paths/labels to
// skipped with the message; with `strict`, the first failing file (in path order) is thrown
// instead. Returns the pixels of the images kept, count * height * width * 3 bytes in the
// order of folder.paths after the removal, so labels still line up. Throws ImageError when
// no image survives.
std::vector<uint8_t> decode_folder(ImageFolder& folder, int height, int width, int workers,
                                   bool strict);

// Lines for the app to print as warnings, separated by '\n' (no newline at the end): a count,
// then "  <path>: <reason>" per skipped file (at most `max_lines`, then how many more). Empty
// when nothing was skipped.
std::string describe_skipped(const ImageFolder& folder, size_t max_lines = 10);

}  // namespace engine::datasets
