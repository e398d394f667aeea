// Model files: the whole model in one file, its architecture with its weights, so that
// load_model(path) rebuilds the Sequential without the program that made it (Keras'
// model.save / load_model). The format is in docs/model_format.md: a magic string, a version,
// the input shape, each layer's kind and settings (Layer::config()), the weights in the records
// of a weights file, and a CRC-32 of it all.
//
// The loss and the optimizer are not in the file: a loaded model predicts and evaluates, and
// to train it on, call compile() as for a model built in code.
//
// Weights files (nn/weights_io.h) stay what they were: the weights alone, for a model built in
// code. Each loader names the other's files and the function that reads them.
#pragma once
#include <string>

#include "core/binary_file.h"
#include "nn/sequential.h"

namespace engine::nn {

constexpr uint32_t MODEL_FORMAT_VERSION = 1;

// Writes the built `model` through `path.tmp`, fsynced and renamed over `path`, so a crash
// mid-write leaves the previous file whole. Refuses (engine::Error) a layer that
// layer_from_config (nn/layers.h) cannot make again, such as a layer class of your own.
void save_model(const Sequential& model, const std::string& path);

// Rebuilds the model saved in `path` on `device`: its layers, built for the stored input
// shape, with the stored weights; not compiled. Throws engine::Error with one line naming the
// file and the problem (missing, truncated, bad magic, a weights file, newer version, checksum
// mismatch, an unknown layer kind, a bad setting, layers that do not fit the input shape or
// the stored parameter count, trailing bytes).
Sequential load_model(const std::string& path, Device device = Device::cpu());

// Whether `file` starts like a model file (so another reader can say what it was given).
bool is_model_file(const Bytes& file);

}  // namespace engine::nn
