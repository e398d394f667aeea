#include "nn/weights_io.h"

#include <cstring>

#include "core/error.h"
#include "datasets/npy.h"
#include "nn/checkpoint.h"
#include "nn/model_file.h"

namespace engine::nn {
namespace {

constexpr char MAGIC[8] = {'E', 'N', 'G', 'W', 'G', 'H', 'T', 'S'};

}  // namespace

bool is_weights_file(const Bytes& file) {
  return file.size() >= sizeof MAGIC && std::memcmp(file.data(), MAGIC, sizeof MAGIC) == 0;
}

void write_parameter_records(ByteWriter& out, const ParameterStore& store) {
  out.put<uint32_t>(static_cast<uint32_t>(store.params.size()));
  const std::vector<float> values = store.values.to_vector();  // one copy off the device
  size_t offset = 0;
  for (const Parameter& p : store.params) {
    out.string(p.name);
    out.put<uint32_t>(static_cast<uint32_t>(p.value.ndim()));
    for (int64_t d : p.value.shape()) out.put<int64_t>(d);
    const auto n = static_cast<size_t>(p.value.numel());
    out.bytes(values.data() + offset, n * sizeof(float));
    offset += n;
  }
}

std::vector<float> read_parameter_records(ByteReader& in, const ParameterStore& store) {
  const std::string& path = in.path();
  const auto count = in.get<uint32_t>("tensor count");
  ENGINE_CHECK(count == store.params.size(), path, ": holds ", count, " tensors but the model has ",
               store.params.size(), " (a different model)");
  std::vector<float> flat;
  flat.reserve(static_cast<size_t>(store.count()));
  for (const Parameter& p : store.params) {
    const std::string name = in.string(4095, "tensor name");
    ENGINE_CHECK(name == p.name, path, ": tensor '", name, "' where the model has '", p.name, "'");
    const auto ndim = in.get<uint32_t>("tensor rank");
    ENGINE_CHECK(ndim <= 8, path, ": implausible rank ", ndim, " for '", name, "'");
    Shape shape(ndim);
    for (auto& d : shape) d = in.get<int64_t>("tensor shape");
    ENGINE_CHECK(shape == p.value.shape(), path, ": '", name, "' has shape ", to_string(shape),
                 " in the file but ", to_string(p.value.shape()), " in the model");
    const size_t n = static_cast<size_t>(p.value.numel());
    flat.resize(flat.size() + n);
    in.bytes(flat.data() + flat.size() - n, n * sizeof(float), "tensor data");
  }
  return flat;
}

void save_weights(const Sequential& model, const std::string& path) {
  ENGINE_CHECK(model.built(), "save_weights: the model is not built");
  // NaN weights are refused before anything is written: a good file at `path` stays.
  const ParameterStore& store = model.parameters();
  refuse_non_finite(store, store.values.to_vector(), path, "not saving the weights", "the weights",
                    " (nothing written; a file already there is kept)");
  ByteWriter out(MAGIC, WEIGHTS_FORMAT_VERSION);
  write_parameter_records(out, model.parameters());
  const Bytes& file = out.finish();
  write_file_atomically(path, file.data(), file.size());
}

void load_weights(Sequential& model, const std::string& path) {
  ENGINE_CHECK(model.built(), "load_weights: the model is not built");
  const Bytes file = read_file(path, "weights");
  ENGINE_CHECK(!is_model_file(file), path,
               ": a model file (save_model, --save-model), not a weights file: load it with "
               "load_model(), which rebuilds the model too");
  ByteReader in(file, MAGIC, WEIGHTS_FORMAT_VERSION, path, "weights");
  ParameterStore& store = model.parameters();
  const std::vector<float> flat = read_parameter_records(in, store);
  in.expect_end("the last tensor");
  refuse_non_finite(store, flat, path, "refusing the weights", "the file",
                    " (save_weights never writes one)");
  // Parameters are laid out in the same order in the flat buffer: one copy moves them all.
  store.values.copy_from(Tensor::from_vector(flat, store.values.shape()));
}

void save_weights_npz(const Sequential& model, const std::string& path) {
  const ParameterStore& store = model.parameters();
  refuse_non_finite(store, store.values.to_vector(), path, "not saving the weights", "the weights",
                    " (nothing written; a file already there is kept)");
  std::vector<std::pair<std::string, Tensor>> arrays;
  for (const Parameter& p : model.parameters().params) arrays.emplace_back(p.name, p.value);
  datasets::write_npz(path, arrays);
}

}  // namespace engine::nn
