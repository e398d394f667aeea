// Reading CIFAR-10 binary batches and making CIFAR-shaped synthetic data (see cifar10.h).
#include "datasets/cifar10.h"

#include <filesystem>
#include <vector>

#include "core/binary_file.h"
#include "core/error.h"

namespace engine::datasets {
namespace {

namespace fs = std::filesystem;

constexpr int kCifarClasses = 10;
constexpr int64_t kPlane = kCifarSide * kCifarSide;  // 1,024 bytes per colour plane
constexpr int64_t kTrainBatches = 5;
constexpr int64_t kSyntheticTrain = kTrainBatches * kCifarRecordsPerBatch;
constexpr int64_t kSyntheticTest = kCifarRecordsPerBatch;
const char* const kTrainNames[kTrainBatches] = {"data_batch_1.bin", "data_batch_2.bin",
                                                "data_batch_3.bin", "data_batch_4.bin",
                                                "data_batch_5.bin"};
const char* const kTestName = "test_batch.bin";

// Decodes the batch file at `path` and appends its images and labels to `out`.
void append_batch(const std::string& path, int64_t records, LabeledImages& out) {
  ENGINE_CHECK(records >= 0, "read_cifar10_batch: records must be >= 0, got ", records);
  InputFile file(path, "CIFAR-10 file " + path);
  const auto bytes = static_cast<int64_t>(file.size());
  ENGINE_CHECK(bytes > 0, file.where(), ": empty file");
  ENGINE_CHECK(bytes % kCifarRecordBytes == 0, file.where(), ": size ", bytes,
               " bytes is not a whole number of 3,073-byte records (1 label byte + 3,072 pixel "
               "bytes): truncated, or not the binary version of CIFAR-10");
  const int64_t found = bytes / kCifarRecordBytes;
  ENGINE_CHECK(records == 0 || found == records, file.where(), ": holds ", found, " records (",
               bytes, " bytes), expected ", records, " (", records, " x 3,073 bytes)");

  // Only now allocated: the checks above hold the size to what the records need.
  std::vector<uint8_t> raw(static_cast<size_t>(bytes));
  const size_t got = file.read(raw.data(), raw.size());
  ENGINE_CHECK(got == raw.size(), file.where(), ": read ", got, " of ", bytes,
               " bytes (the file was cut short while it was read)");

  const auto first = static_cast<size_t>(out.count);
  out.labels.resize(first + static_cast<size_t>(found));
  out.pixels.resize((first + static_cast<size_t>(found)) * kPlane * kCifarChannels);
  for (int64_t r = 0; r < found; ++r) {
    const uint8_t* record = raw.data() + r * kCifarRecordBytes;
    ENGINE_CHECK(record[0] < kCifarClasses, "CIFAR-10 file ", path, ": record ", r, " (byte ",
                 r * kCifarRecordBytes, ") has label ", int{record[0]}, ", not a class 0..9");
    out.labels[first + static_cast<size_t>(r)] = record[0];
    // Planar R, G, B -> interleaved (h, w, c): the engine's NHWC layout.
    float* image = out.pixels.data() + (first + static_cast<size_t>(r)) * kPlane * kCifarChannels;
    const uint8_t* planes = record + 1;
    for (int64_t p = 0; p < kPlane; ++p)
      for (int64_t c = 0; c < kCifarChannels; ++c)
        image[p * kCifarChannels + c] = static_cast<float>(planes[c * kPlane + p]) / 255.0f;
  }
  out.count += found;
  out.rows = kCifarSide;
  out.cols = kCifarSide;
  out.channels = kCifarChannels;
}

// What a user does to get the real files.
std::string fetch_hint(const std::string& data_dir) {
  return "put cifar-10-binary.tar.gz into " + (fs::path(data_dir) / "cifar10").string() +
         " and run scripts/fetch_data.sh " + data_dir;
}

CifarData load_real(const std::string& data_dir) {
  const fs::path dir = cifar10_dir(data_dir);
  std::vector<std::string> names(kTrainNames, kTrainNames + kTrainBatches);
  names.push_back(kTestName);
  // All six are looked for before any is read: a partial set names the first file it lacks.
  for (const std::string& name : names) {
    const std::string path = (dir / name).string();
    ENGINE_CHECK(path_exists(path), "missing CIFAR-10 file ", path, ": ", fetch_hint(data_dir));
  }
  CifarData data;
  for (const char* name : kTrainNames)
    append_batch((dir / name).string(), kCifarRecordsPerBatch, data.train);
  append_batch((dir / kTestName).string(), kCifarRecordsPerBatch, data.test);
  data.description = "cifar10: " + split_counts(data.train, data.test) +
                     " real CIFAR-10 images from " + dir.string();
  return data;
}

CifarData make_synthetic(uint64_t seed, const std::string& why) {
  CifarData data;
  // Train and test come from different streams of the same seed.
  data.train = make_synthetic_images(kSyntheticTrain, kCifarSide, kCifarSide, kCifarClasses, seed,
                                     kCifarChannels);
  data.test = make_synthetic_images(kSyntheticTest, kCifarSide, kCifarSide, kCifarClasses,
                                    seed ^ 0xA5A5A5A5A5A5A5A5ull, kCifarChannels);
  data.description = "synthetic: " + split_counts(data.train, data.test) +
                     " random 32x32x3 images with random labels 0-9 (seed " + std::to_string(seed) +
                     "); NOT real data, for timing only: accuracy on it means nothing" + why;
  return data;
}

}  // namespace

LabeledImages read_cifar10_batch(const std::string& path, int64_t records) {
  LabeledImages out;
  append_batch(path, records, out);
  return out;
}

std::string cifar10_dir(const std::string& data_dir) {
  return (fs::path(data_dir) / "cifar10" / "cifar-10-batches-bin").string();
}

CifarData load_cifar10(const std::string& name, const std::string& data_dir, uint64_t seed) {
  if (name == "cifar10") return load_real(data_dir);
  if (name == "synthetic") return make_synthetic(seed, "");
  ENGINE_CHECK(name == "auto", "unknown dataset '", name, "': expected cifar10, synthetic or auto");
  // The folder decides, not one file in it: once it is there, a missing or unreadable batch is
  // an error naming that file, never a silent switch to synthetic data. A data folder that
  // cannot be searched is an error too (path_exists), not a folder that is not there.
  if (path_exists(cifar10_dir(data_dir))) return load_real(data_dir);
  return make_synthetic(
      seed, " (CIFAR-10 is not in " + cifar10_dir(data_dir) + ": " + fetch_hint(data_dir) + ")");
}

}  // namespace engine::datasets
