// Fuzz target: the checkpoint loader, nn::load_checkpoint (nn/checkpoint.h, format in
// docs/checkpoints.md).
//
// What is fuzzed: a checkpoint loaded into one small compiled model, Flatten -> Dense(4, relu)
// -> Dense(2, softmax) for a 2x2 input on the CPU with Adam, trained one epoch so that its
// optimizer holds its moments. A checkpoint carries more than a weights file: the optimizer's
// name and buffers, the step counter, the run's settings, the epoch records, the loader's state;
// every length and count in it is a way to run past the end or allocate absurdly.
//
// As in fuzz_weights, the CRC-32 at the end would stop almost every mutation at the checksum
// check, so each input is loaded twice: as it is, and with its last 4 bytes replaced by the
// right CRC-32 (computed with the engine's own crc32_of, core/binary_file.h), which lets the
// mutations reach the field parser behind it.
//
// The contract checked: load_checkpoint returns, or throws engine::Error having left the
// model's weights as they were (nn/checkpoint.h promises "the model untouched"); anything else
// (a sanitizer report, another exception, changed weights after a refusal, a leak) is a finding.
//
// Seeds (fuzz/corpus/checkpoint/) come from the engine's own writer, so they follow the format
// wherever it goes: ENGINE_FUZZ_WRITE_SEEDS=DIR build-fuzz/fuzz/fuzz_checkpoint writes a valid
// checkpoint of this model, one saved mid-epoch, a weights file (refused: another magic), and
// truncated, bad-magic, newer-version and bad-checksum variants, then exits.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/binary_file.h"
#include "core/device.h"
#include "core/error.h"
#include "fuzz/model_file_checks.h"
#include "fuzz/temp_file.h"
#include "nn/checkpoint.h"
#include "nn/layers.h"
#include "nn/optimizers.h"
#include "nn/weights_io.h"

namespace {

using namespace engine;

nn::Sequential make_model() {
  nn::Sequential m{nn::flatten(), nn::dense(4, Activation::Relu), nn::dense(2, Activation::Softmax)};
  m.build({2, 2}, Device::cpu(), /*seed=*/1);
  m.compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy);
  return m;
}

// 12 samples, batches of 4: 3 steps an epoch. One epoch gives Adam its moments and the model a
// step counter, so the seeds hold every section of the format.
nn::Dataset toy_data() {
  std::vector<float> x(12 * 4);
  std::vector<int32_t> y(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) / 7.0f - 0.5f;
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int32_t>(i % 2);
  return {Tensor::from_vector(x, {12, 2, 2}), Tensor::from_ints(y, {12})};
}

nn::Sequential& model() {
  static nn::Sequential m = [] {
    nn::Sequential s = make_model();
    nn::FitOptions options;
    options.batch_size = 4;
    options.verbose = false;
    s.fit(toy_data(), options);
    return s;
  }();
  return m;
}

// Loads `bytes` as a checkpoint; a refusal must leave the weights as they were.
void load(fuzz::TempFile& file, const std::vector<uint8_t>& bytes) {
  nn::Sequential& m = model();
  fuzz::expect_unchanged_on_refusal(
      m, [&] { nn::load_checkpoint(m, file.write(bytes.data(), bytes.size())); });
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  const Bytes b = read_file(path, "seed");
  return {b.begin(), b.end()};
}

void write_seed(const std::string& dir, const char* name, const std::vector<uint8_t>& bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// The seed corpus, from the engine's own writers (see the header comment).
void write_seeds(const std::string& dir) {
  nn::Sequential& m = model();
  nn::TrainingState state;
  state.seed = 0;
  state.batch_size = 4;
  state.steps_per_epoch = 3;
  state.epoch = 2;
  nn::EpochRecord first;
  first.epoch = 1;
  first.seconds = 0.01;
  first.steps = 3;
  first.loss = 0.7;
  first.accuracy = 0.5;
  state.history.push_back(first);
  nn::save_checkpoint(m, state, dir + "/valid_epoch_boundary.ckpt");
  state.step = 2;
  state.samples = 8;
  state.loss_sum = 5.5f;
  state.correct = 4.0f;
  nn::save_checkpoint(m, state, dir + "/valid_mid_epoch.ckpt");
  nn::save_weights(m, dir + "/weights_file_not_a_checkpoint.weights");

  const std::vector<uint8_t> valid = read_bytes(dir + "/valid_epoch_boundary.ckpt");
  write_seed(dir, "empty.ckpt", {});
  write_seed(dir, "truncated_half.ckpt", {valid.begin(), valid.begin() + valid.size() / 2});
  std::vector<uint8_t> v = valid;
  v[0] ^= 0x20;
  write_seed(dir, "bad_magic.ckpt", v);
  v = valid;
  v[v.size() / 2] ^= 0x01;
  write_seed(dir, "bad_checksum.ckpt", v);
  v = valid;
  v[8] = static_cast<uint8_t>(nn::CHECKPOINT_FORMAT_VERSION + 1);  // the version follows the magic
  fuzz::fix_checksum(v);
  write_seed(dir, "newer_version.ckpt", v);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("ENGINE_FUZZ_WRITE_SEEDS"); dir && *dir) {
    write_seeds(dir);
    std::printf("fuzz_checkpoint: seeds written to %s\n", dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::TempFile file("checkpoint");
  std::vector<uint8_t> bytes(data, data + size);
  load(file, bytes);
  fuzz::fix_checksum(bytes);  // again with a correct checksum, to get past the CRC check
  load(file, bytes);
  return 0;
}
