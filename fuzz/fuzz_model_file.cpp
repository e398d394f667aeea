// Fuzz target: the model file loader, nn::load_model (nn/model_file.h, format in
// docs/model_format.md).
//
// What is fuzzed: a model file, which, unlike a weights file, brings its own model: the input
// shape, each layer's kind and settings, the parameter count and the weights' records. Every
// field is a way to ask for an absurd model (a 2^31-unit Dense, a 2^31-cubed input, a kernel
// wider than its input, layers that do not fit each other) or to run past the end; the loader
// must refuse each before it allocates, with one line.
//
// As in fuzz_weights, the CRC-32 at the end would stop almost every mutation at the checksum
// check, so each input is loaded twice: as it is, and with its last 4 bytes replaced by the
// right CRC-32 (fuzz/model_file_checks.h), which lets the mutations reach the parser behind it.
//
// The contract checked: load_model returns a model, or throws engine::Error whose message is
// one line that starts with the file's path; anything else (a sanitizer report, another
// exception, a leak, a message on two lines or without the path) is a finding. A model that
// loads must also work: its layers' settings make the same layers again (layer_from_config),
// and where it is small (every shape of at most 4,096 numbers) it predicts on one sample
// without an error.
//
// Seeds (fuzz/corpus/model_file/) come from the engine's own writer, so they follow the format
// wherever it goes: ENGINE_FUZZ_WRITE_SEEDS=DIR build-fuzz/fuzz/fuzz_model_file writes a valid
// model file holding every layer kind, every activation and both paddings, and a weights file
// (refused: a weights file, named as such), then exits.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "fuzz/model_file_checks.h"
#include "fuzz/temp_file.h"
#include "nn/layers.h"
#include "nn/model_file.h"
#include "nn/weights_io.h"

namespace {

using namespace engine;

constexpr int64_t SMALL = 4096;  // numbers in a shape that predict() is run on

// The seed model: (4, 4, 1) -> Conv2D same relu (4, 4, 2) -> Conv2D valid tanh stride 2
// (2, 2, 2) -> MaxPooling2D (1, 1, 2) -> Dropout -> Flatten (2) -> Dense (3) -> Dense sigmoid
// (3) -> Dense softmax (2): 67 parameters.
nn::Sequential seed_model() {
  nn::Sequential m{nn::conv2d(2, 3, Padding::Same, Activation::Relu),
                   nn::conv2d(2, 2, Padding::Valid, Activation::Tanh, 2),
                   nn::max_pool2d(2),
                   nn::dropout(0.25f),
                   nn::flatten(),
                   nn::dense(3),
                   nn::dense(3, Activation::Sigmoid),
                   nn::dense(2, Activation::Softmax)};
  m.build({4, 4, 1}, Device::cpu(), /*seed=*/1);
  return m;
}

void write_seeds(const std::string& dir) {
  const nn::Sequential m = seed_model();
  nn::save_model(m, dir + "/valid.model");
  nn::save_weights(m, dir + "/weights_file_not_a_model.weights");
}

// A model that loaded must be one that works.
void check_loaded(nn::Sequential& model) {
  for (const auto& layer : model.layers()) {
    const std::vector<nn::LayerSetting> settings = layer->config();
    const std::vector<nn::LayerSetting> again =
        nn::layer_from_config(layer->type(), settings)->config();
    if (again.size() != settings.size()) std::abort();
    for (size_t i = 0; i < settings.size(); ++i) {
      if (again[i].name != settings[i].name || again[i].value != settings[i].value) std::abort();
    }
  }
  bool small = numel(model.input_shape()) <= SMALL;
  for (const Shape& shape : model.layer_output_shapes()) small = small && numel(shape) <= SMALL;
  if (!small) return;
  Shape batch{1};
  batch.insert(batch.end(), model.input_shape().begin(), model.input_shape().end());
  model.predict(Tensor::zeros(batch, DType::F32, Device::cpu()), 1);  // an Error here escapes
}

void load(fuzz::TempFile& file, const std::vector<uint8_t>& bytes) {
  const std::string& path = file.write(bytes.data(), bytes.size());
  std::optional<nn::Sequential> model;
  try {
    model.emplace(nn::load_model(path));
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.find('\n') != std::string::npos || message.rfind(path + ": ", 0) != 0) {
      std::fprintf(stderr, "fuzz_model_file: not one line naming the file: %s\n", message.c_str());
      std::abort();
    }
    return;
  }
  check_loaded(*model);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("ENGINE_FUZZ_WRITE_SEEDS"); dir && *dir) {
    write_seeds(dir);
    std::printf("fuzz_model_file: seeds written to %s\n", dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::TempFile file("model");
  std::vector<uint8_t> bytes(data, data + size);
  load(file, bytes);
  fuzz::fix_checksum(bytes);  // again with a correct checksum, to get past the CRC check
  load(file, bytes);
  return 0;
}
