// Saving and loading a model's weights. The format is documented in docs/weights_format.md:
// a magic string, a version, the named tensors with their shapes, and a CRC-32 of it all.
#pragma once
#include <string>
#include <vector>

#include "core/binary_file.h"
#include "nn/sequential.h"

namespace engine::nn {

constexpr uint32_t WEIGHTS_FORMAT_VERSION = 1;

// Writes every parameter of a built model. The file is written to `path.tmp` and renamed
// over `path`, so a crash mid-write never leaves a half-written file under the real name.
void save_weights(const Sequential& model, const std::string& path);

// Loads weights into a built model whose parameter names and shapes match the file.
// Throws engine::Error naming the file and the problem: missing, truncated, bad magic,
// newer version, checksum mismatch, or a different model.
void load_weights(Sequential& model, const std::string& path);

// The same weights as a NumPy archive (datasets/npy.h), one array per parameter under its name:
// np.load(path)["dense/kernel"]. For reading in Python; the engine itself reads save_weights'.
void save_weights_npz(const Sequential& model, const std::string& path);

// Whether `file` starts like a weights file (so another reader can say what it was given).
bool is_weights_file(const Bytes& file);

// The tensor records of a weights file, which checkpoints hold too (nn/checkpoint.h): the
// tensor count, then each parameter's name, shape and values, in the model's order.
void write_parameter_records(ByteWriter& out, const ParameterStore& store);
// Reads them back, checking every name and shape against `store`; returns the values in the
// layout of store.values (nothing is copied into the model).
std::vector<float> read_parameter_records(ByteReader& in, const ParameterStore& store);

}  // namespace engine::nn
