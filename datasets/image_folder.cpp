// Listing and decoding a Keras-style folder of JPEGs (see image_folder.h).
#include "datasets/image_folder.h"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <exception>
#include <filesystem>
#include <system_error>

#include "core/logging.h"

namespace engine::datasets {
namespace {

namespace fs = std::filesystem;

struct Entry {
  std::string name;
  bool is_directory;
};

// The entries of `dir`, sorted by name. Hidden ones (".DS_Store", and the ".ipynb_checkpoints"
// folder Jupyter leaves, which would otherwise become a class) are left out.
std::vector<Entry> list_sorted(const fs::path& dir) {
  std::vector<Entry> entries;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code type_ec;  // a broken link counts as a file: it fails to decode later
    entries.push_back({std::move(name), it->is_directory(type_ec)});
  }
  if (ec) throw ImageError(dir.string() + ": cannot list the folder (" + ec.message() + ")");
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return entries;
}

bool has_jpeg_extension(const std::string& name) {
  std::string ext = fs::path(name).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg";
}

std::string join(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out + "]";
}

// ImageError messages read "<path>: <problem>"; a SkippedFile keeps the path apart.
std::string problem_of(const std::string& message, const std::string& path) {
  const std::string prefix = path + ": ";
  return message.compare(0, prefix.size(), prefix) == 0 ? message.substr(prefix.size()) : message;
}

}  // namespace

ImageFolder scan_image_folder(const std::string& dir,
                              const std::vector<std::string>& expected_classes) {
  const std::string layout = " (expected the layout <folder>/<class>/<image>.jpg, e.g. " +
                             (fs::path(dir) / "cats" / "cat.0.jpg").string() + ")";
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (!fs::exists(status)) throw ImageError(dir + ": no such folder" + layout);
  if (!fs::is_directory(status)) throw ImageError(dir + ": not a folder" + layout);

  ImageFolder folder;
  folder.root = dir;
  const std::vector<Entry> top = list_sorted(dir);
  for (const Entry& entry : top)
    if (entry.is_directory) folder.classes.push_back(entry.name);
  if (folder.classes.empty()) throw ImageError(dir + ": no class sub-folders" + layout);
  if (!expected_classes.empty() && folder.classes != expected_classes)
    throw ImageError(dir + ": has the classes " + join(folder.classes) + ", expected " +
                     join(expected_classes) + " (the training classes)");

  for (size_t label = 0; label < folder.classes.size(); ++label) {
    const fs::path class_dir = fs::path(dir) / folder.classes[label];
    int64_t images = 0, others = 0;
    for (const Entry& entry : list_sorted(class_dir)) {
      if (entry.is_directory) continue;  // the layout is one level deep: sub-folders ignored
      const std::string path = (class_dir / entry.name).string();
      if (has_jpeg_extension(entry.name)) {
        folder.paths.push_back(path);
        folder.labels.push_back(static_cast<int32_t>(label));
        ++images;
      } else {
        folder.skipped.push_back({path, "not a .jpg/.jpeg file"});
        ++others;
      }
    }
    if (images == 0) {
      std::string note;
      if (others > 0)
        note = " (" + std::to_string(others) + (others == 1 ? " other file)" : " other files)");
      throw ImageError(class_dir.string() + ": class folder '" + folder.classes[label] +
                       "' holds no .jpg/.jpeg files" + note);
    }
  }
  return folder;
}

std::vector<uint8_t> decode_folder(ImageFolder& folder, int height, int width, int workers,
                                   bool strict) {
  ENGINE_CHECK(height > 0 && width > 0, "decode_folder: the image size must be positive, got ",
               height, "x", width);
  ENGINE_CHECK(workers >= 0, "decode_folder: workers must be >= 0 (0: all cores), got ", workers);
  ENGINE_CHECK(folder.labels.size() == folder.paths.size(), "decode_folder: ", folder.paths.size(),
               " paths but ", folder.labels.size(), " labels");
  const size_t n = folder.paths.size();
  const size_t image_bytes = static_cast<size_t>(height) * static_cast<size_t>(width) * 3;
  std::vector<uint8_t> pixels(n * image_bytes);
  std::vector<std::string> errors(n);
  std::vector<uint8_t> failed(n, 0);
  // Anything but a bad file (out of memory, say) stops the whole decode. An exception must not
  // leave an OpenMP loop, so the first is kept here and rethrown after it.
  std::exception_ptr fatal;

  const int team = workers > 0 ? workers : omp_get_max_threads();
  // Dynamic schedule: photos differ in size, and so in decoding time.
#pragma omp parallel for num_threads(team) schedule(dynamic)
  for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) {
    const auto k = static_cast<size_t>(i);
    try {
      decode_jpeg_file(folder.paths[k], height, width, pixels.data() + k * image_bytes);
    } catch (const ImageError& e) {
      errors[k] = e.what();
      failed[k] = 1;
    } catch (...) {
#pragma omp critical(decode_folder_fatal)
      if (!fatal) fatal = std::current_exception();
    }
  }
  if (fatal) std::rethrow_exception(fatal);

  // Keep the good images in order, moving each one's pixels, path and label down together.
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (failed[i]) {
      if (strict) throw ImageError(errors[i]);
      folder.skipped.push_back({folder.paths[i], problem_of(errors[i], folder.paths[i])});
      continue;
    }
    if (kept != i) {
      std::copy_n(pixels.begin() + static_cast<std::ptrdiff_t>(i * image_bytes), image_bytes,
                  pixels.begin() + static_cast<std::ptrdiff_t>(kept * image_bytes));
      folder.paths[kept] = std::move(folder.paths[i]);
      folder.labels[kept] = folder.labels[i];
    }
    ++kept;
  }
  folder.paths.resize(kept);
  folder.labels.resize(kept);
  pixels.resize(kept * image_bytes);
  if (kept == 0)
    throw ImageError(folder.root + ": none of its " + std::to_string(n) +
                     " images could be decoded" +
                     (n ? " (the first: " + errors[0] + ")" : std::string()));
  return pixels;
}

std::string describe_skipped(const ImageFolder& folder, size_t max_lines) {
  const size_t count = folder.skipped.size();
  if (count == 0) return "";
  // Names are any bytes: printable() keeps each file on its one line.
  std::string out = std::to_string(count) + " of " + std::to_string(count + folder.paths.size()) +
                    " files in " + printable(folder.root) + " left out:";
  const size_t shown = std::min(count, max_lines);
  for (size_t i = 0; i < shown; ++i)
    out += "\n  " + printable(folder.skipped[i].path) + ": " + printable(folder.skipped[i].reason);
  if (shown < count) out += "\n  ... and " + std::to_string(count - shown) + " more";
  return out;
}

}  // namespace engine::datasets
