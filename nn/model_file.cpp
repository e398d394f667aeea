#include "nn/model_file.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/error.h"
#include "nn/checkpoint.h"
#include "nn/layers.h"
#include "nn/weights_io.h"

namespace engine::nn {
namespace {

constexpr char MAGIC[8] = {'E', 'N', 'G', 'M', 'O', 'D', 'E', 'L'};

// What a file may ask for before its weights are read; each is far above any real model.
constexpr uint32_t MAX_INPUT_RANK = 8;
constexpr uint32_t MAX_LAYERS = 1024;
constexpr uint32_t MAX_SETTINGS = 16;
constexpr size_t MAX_NAME = 64;                        // a layer kind or a setting name
constexpr int64_t MAX_ELEMENTS = int64_t{1} << 40;     // in one sample's shape or one parameter

// The number of elements of `shape`, or -1 when an extent is below 1 or the product passes
// MAX_ELEMENTS: checked before multiplying, so a damaged file cannot overflow it.
int64_t bounded_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 1 || d > MAX_ELEMENTS / n) return -1;
    n *= d;
  }
  return n;
}

// A layer kind or a setting name as this engine writes them: letters, digits and '_'. Anything
// else is damage, and must not reach an error message (a line break would split it).
bool is_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_';
    if (!ok) return false;
  }
  return true;
}

// "layer 3 (Dense)", 1-based as in the summary table.
std::string which_layer(size_t i, const std::string& kind) {
  return "layer " + std::to_string(i + 1) + " (" + kind + ")";
}

// The layers' parameter count for `input`, found as Sequential::build finds it but without
// allocating anything (Layer::build only fixes shapes; build() will call it again): the file's
// stored count is checked against it before the model's buffers are made, so a damaged file
// never makes load_model allocate more than the file holds.
int64_t count_parameters(const std::vector<std::shared_ptr<Layer>>& layers, Shape shape,
                         const std::string& path) {
  int64_t total = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string layer = which_layer(i, layers[i]->type());
    try {
      shape = layers[i]->build(shape);
    } catch (const Error& e) {
      throw Error(path + ": " + layer + " does not fit its input: " + e.what());
    }
    ENGINE_CHECK(bounded_numel(shape) > 0, path, ": ", layer, " gives an implausible output shape ",
                 to_string(shape));
    for (const ParamSpec& spec : layers[i]->param_specs()) {
      const int64_t n = bounded_numel(spec.shape);
      ENGINE_CHECK(n > 0 && n <= MAX_ELEMENTS - total, path, ": ", layer,
                   " asks for an implausible number of parameters");
      total += n;
    }
  }
  return total;
}

Sequential read_model(const Bytes& file, const std::string& path, Device device) {
  ByteReader in(file, MAGIC, MODEL_FORMAT_VERSION, path, "model");

  const auto rank = in.get<uint32_t>("input rank");
  ENGINE_CHECK(rank >= 1 && rank <= MAX_INPUT_RANK, path, ": implausible input rank ", rank);
  Shape input(rank);
  for (auto& d : input) d = in.get<int64_t>("input shape");
  ENGINE_CHECK(bounded_numel(input) > 0, path, ": implausible input shape ", to_string(input));

  const auto layer_count = in.get<uint32_t>("layer count");
  ENGINE_CHECK(layer_count >= 1 && layer_count <= MAX_LAYERS, path, ": implausible layer count ",
               layer_count);
  std::vector<std::shared_ptr<Layer>> layers;
  for (uint32_t i = 0; i < layer_count; ++i) {
    const std::string kind = in.string(MAX_NAME, "layer kind");
    ENGINE_CHECK(is_name(kind), path, ": layer ", i + 1, " has an unreadable kind (damaged file)");
    const auto count = in.get<uint32_t>("setting count");
    ENGINE_CHECK(count <= MAX_SETTINGS, path, ": ", which_layer(i, kind), " has ", count,
                 " settings (implausible)");
    std::vector<LayerSetting> settings(count);
    for (LayerSetting& s : settings) {
      s.name = in.string(MAX_NAME, "setting name");
      ENGINE_CHECK(is_name(s.name), path, ": ", which_layer(i, kind),
                   " has an unreadable setting name (damaged file)");
      s.value = in.get<double>("setting value");
    }
    try {
      layers.push_back(layer_from_config(kind, settings));
    } catch (const Error& e) {
      throw Error(path + ": " + which_layer(i, kind) + ": " + e.what());
    }
  }

  const auto stored = in.get<uint64_t>("parameter count");
  const int64_t needed = count_parameters(layers, input, path);
  ENGINE_CHECK(stored == static_cast<uint64_t>(needed), path, ": the layers need ", needed,
               " parameters for input ", to_string(input), " but the file stores ", stored,
               " (its configuration and weights do not match)");
  // The weights' values alone take 4 bytes each: a shorter file cannot hold them, and is
  // refused before the model's buffers are allocated for them.
  ENGINE_CHECK(stored <= file.size() / sizeof(float), path, ": file is truncated (", file.size(),
               " bytes cannot hold ", stored, " parameters)");

  Sequential model(std::move(layers));
  model.build(input, device, /*seed=*/0);  // the initial weights are replaced below
  ParameterStore& store = model.parameters();
  const std::vector<float> values = read_parameter_records(in, store);
  in.expect_end("the last tensor");
  refuse_non_finite(store, values, path, "refusing the model", "the file",
                    " (save_model never writes one)");
  store.values.copy_from(Tensor::from_vector(values, store.values.shape()));
  return model;
}

// Every message on one line: a name read from a damaged file (a tensor's) may hold a line
// break or a terminal escape, which must not split or colour the error.
std::string one_line(const char* message) {
  std::string s(message);
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return s;
}

}  // namespace

bool is_model_file(const Bytes& file) {
  return file.size() >= sizeof MAGIC && std::memcmp(file.data(), MAGIC, sizeof MAGIC) == 0;
}

void save_model(const Sequential& model, const std::string& path) {
  ENGINE_CHECK(model.built(), "save_model: the model is not built");
  const Shape& input = model.input_shape();
  ENGINE_CHECK(!input.empty() && input.size() <= MAX_INPUT_RANK, path,
               ": cannot save a model whose input has rank ", input.size(), " (at most ",
               MAX_INPUT_RANK, ")");
  ByteWriter out(MAGIC, MODEL_FORMAT_VERSION);
  out.put<uint32_t>(static_cast<uint32_t>(input.size()));
  for (int64_t d : input) out.put<int64_t>(d);
  out.put<uint32_t>(static_cast<uint32_t>(model.layers().size()));
  for (const auto& layer : model.layers()) {
    const std::vector<LayerSetting> settings = layer->config();
    // A layer load_model could not make again is refused now, not when the file is read.
    try {
      layer_from_config(layer->type(), settings);
    } catch (const Error& e) {
      throw Error(path + ": cannot save layer '" + layer->name() + "' (" + layer->type() +
                  ") in a model file: " + e.what() + "; save_weights saves its weights alone");
    }
    out.string(layer->type());
    out.put<uint32_t>(static_cast<uint32_t>(settings.size()));
    for (const LayerSetting& s : settings) {
      out.string(s.name);
      out.put<double>(s.value);
    }
  }
  out.put<uint64_t>(static_cast<uint64_t>(model.parameter_count()));
  // NaN weights are refused before anything is written: a good file at `path` stays.
  refuse_non_finite(model.parameters(), model.parameters().values.to_vector(), path,
                    "not saving the model", "the weights",
                    " (nothing written; a file already there is kept)");
  write_parameter_records(out, model.parameters());
  const Bytes& file = out.finish();
  write_file_atomically(path, file.data(), file.size());
}

Sequential load_model(const std::string& path, Device device) {
  const Bytes file = read_file(path, "model");
  ENGINE_CHECK(!is_weights_file(file), path,
               ": a weights file (save_weights, --save), not a model file: it holds no layers; "
               "build the model in code and load it with load_weights()");
  try {
    return read_model(file, path, device);
  } catch (const DeviceError&) {
    throw;  // the device's own failure (out of memory ...), which apps report apart
  } catch (const Error& e) {
    throw Error(one_line(e.what()));
  }
}

}  // namespace engine::nn
