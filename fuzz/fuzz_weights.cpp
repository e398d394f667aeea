// Fuzz target: the weights file loader, nn::load_weights (nn/weights_io.h, format in
// docs/weights_format.md).
//
// What is fuzzed: a weights file loaded into one small built model, Flatten -> Dense(4) for a
// 2x2 input on the CPU. Its parameters are dense/kernel (4, 4) and dense/bias (4), so a file
// that loads holds exactly those two records. The loader reads the magic "ENGWGHTS", the
// version, the tensor count, then per tensor a name length, the name, a rank, the extents and
// the float32 values, and checks the CRC-32 stored in the last 4 bytes.
//
// That checksum is a wall for a fuzzer: a random change to a valid file almost never keeps the
// CRC right, so nearly every input would be refused by the checksum check and the record
// parser behind it would never run. Each input is therefore loaded twice:
//   1. as it is, which fuzzes the checks before and including the CRC check;
//   2. with its last 4 bytes replaced by the correct CRC-32 of the bytes before them, which
//      lets the fuzzer's changes reach the record parser: lengths that run past the end,
//      absurd ranks and names, negative or huge extents, trailing bytes.
//
// Why: users load files with --load, from other builds, other models and half-copied disks;
// each must end in one engine::Error naming the problem. docs/weights_format.md also promises
// that "a refused file leaves the model's weights untouched", and this target checks it: the
// model's values are compared byte for byte before and after every refused load.
//
// The contract checked: load_weights returns, or throws engine::Error having left the weights
// as they were; anything else (a sanitizer report, another exception, a changed model after a
// refusal, a leak) is a finding. Seeds: fuzz/corpus/weights/ (fuzz/make_corpus.py).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "fuzz/model_file_checks.h"
#include "fuzz/temp_file.h"
#include "nn/layers.h"
#include "nn/weights_io.h"

namespace {

using namespace engine;

// Built once: building allocates and initialises the parameters, which is not what we fuzz.
nn::Sequential& model() {
  static nn::Sequential m = [] {
    nn::Sequential s{nn::flatten(), nn::dense(4)};
    s.build({2, 2}, Device::cpu(), /*seed=*/1);
    return s;
  }();
  return m;
}

// Loads `bytes` as a weights file; a refusal must leave the weights as they were.
void load(fuzz::TempFile& file, const std::vector<uint8_t>& bytes) {
  nn::Sequential& m = model();
  fuzz::expect_unchanged_on_refusal(
      m, [&] { nn::load_weights(m, file.write(bytes.data(), bytes.size())); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::TempFile file("weights");
  std::vector<uint8_t> bytes(data, data + size);
  load(file, bytes);

  // Again with a correct checksum, to get past the CRC check (see the header comment).
  fuzz::fix_checksum(bytes);
  load(file, bytes);
  return 0;
}
