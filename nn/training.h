// What fit/evaluate take and return.
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <vector>

#include "core/tensor.h"

namespace engine::nn {

enum class Loss {
  // Integer labels (N,) against a softmax head (fused with it) or raw logits.
  SparseCategoricalCrossentropy,
  // Float targets shaped like the output, against a sigmoid head.
  BinaryCrossentropy,
};

// A labelled set, resident on the model's device: x (N, ...), y (N,) int32 or float.
struct Dataset {
  Tensor x;
  Tensor y;
  int64_t size() const { return x.defined() ? x.dim(0) : 0; }
};

struct FitOptions {
  int epochs = 1;
  int64_t batch_size = 32;
  int64_t steps_per_epoch = 0;  // 0: the whole set (the last batch may be partial)
  bool shuffle = true;
  uint64_t seed = 0;            // shuffle order and dropout masks
  const Dataset* validation = nullptr;
  bool verbose = true;          // Keras-style progress on `out`
  std::ostream* out = nullptr;  // std::cout when null
  // Record one full-batch training step as a CUDA graph and replay it for every full batch
  // (where the backend can record; the CPU cannot). A partial last batch runs op by op.
  bool use_graph = true;
};

struct EpochRecord {
  int epoch = 0;         // 1-based
  double seconds = 0.0;  // wall time of the training steps (validation excluded)
  int64_t steps = 0;
  double loss = 0.0;      // mean over the epoch's samples, as Keras reports it
  double accuracy = 0.0;  // fraction; NaN where the loss has no accuracy metric
  double val_loss = 0.0;  // NaN without validation data
  double val_accuracy = 0.0;
  double val_seconds = 0.0;
};

struct History {
  std::vector<EpochRecord> epochs;
  bool graph_replay = false;      // whether full batches ran as a replayed graph
  int64_t kernels_per_step = 0;   // kernel launches in the recorded step (0: not recorded)
};

struct EvalOptions {
  int64_t batch_size = 32;
  bool verbose = false;
  std::ostream* out = nullptr;
};

struct EvalResult {
  double loss = 0.0;
  double accuracy = 0.0;
  int64_t samples = 0;
  double seconds = 0.0;
};

}  // namespace engine::nn
