// Fuzz target: the CIFAR-10 binary batch reader, datasets::read_cifar10_batch
// (datasets/cifar10.h).
//
// What is fuzzed: the whole batch file. A batch is nothing but 3,073-byte records (1 label
// byte, then 3 planes of 32x32 pixels), so the reader checks the file size, the record count
// and every label, then turns each record's planes into one 32x32x3 image in [0, 1]. Each input
// is read twice: with records = 0 (any whole number of records is accepted, so the fuzzer
// reaches the label checks and the pixel conversion) and with records = 1 (the count check
// refuses every other size).
//
// Why: batch files are downloaded and unpacked by hand, and a file of the text version of
// CIFAR-10, a truncated download or a stray file in the folder must give one engine::Error,
// not a crash or an out-of-bounds read. The format has so little structure that the fuzzer's
// main job here is sizes: empty, short, one byte over or under a record, many records.
// Seeds: fuzz/corpus/cifar10/ (fuzz/make_corpus.py); -max_len must be at least 3,073 to build
// a valid record, and the seeds (up to two records) make libFuzzer pick a large enough one.
//
// The contract checked: a batch that is read holds count images of 32x32x3 floats in [0, 1]
// and count labels below 10; anything but that or an engine::Error is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "core/error.h"
#include "datasets/cifar10.h"
#include "fuzz/temp_file.h"

namespace {

void check_batch(const engine::datasets::LabeledImages& batch) {
  using namespace engine::datasets;
  const auto count = static_cast<size_t>(batch.count);
  if (batch.count <= 0 || batch.rows != kCifarSide || batch.cols != kCifarSide ||
      batch.channels != kCifarChannels || batch.labels.size() != count ||
      batch.pixels.size() != count * kCifarSide * kCifarSide * kCifarChannels)
    std::abort();
  for (auto label : batch.labels)
    if (label < 0 || label > 9) std::abort();
  for (float v : batch.pixels)
    if (!(v >= 0.0f && v <= 1.0f)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static engine::fuzz::TempFile file("cifar10");
  const std::string& path = file.write(data, size);
  for (int64_t records : {0, 1}) {
    try {
      check_batch(engine::datasets::read_cifar10_batch(path, records));
    } catch (const engine::Error&) {
      // A refused file: the documented outcome for bad input.
    }
  }
  return 0;
}
