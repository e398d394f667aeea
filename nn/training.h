// What fit/evaluate take and return.
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <vector>

#include "core/rng.h"
#include "core/tensor.h"

namespace engine::nn {

enum class Loss {
  // Integer labels (N,) against a softmax head (fused with it) or raw logits.
  SparseCategoricalCrossentropy,
  // Float targets shaped like the output, against a sigmoid head (fused with it, in the stable
  // form); accuracy at threshold 0.5 for a single output.
  BinaryCrossentropy,
};

// A labelled set, resident on the model's device: x (N, ...), y (N,) int32 or float.
struct Dataset {
  Tensor x;
  Tensor y;
  int64_t size() const { return x.defined() ? x.dim(0) : 0; }
};

// Where fit() takes its batches from: a resident Dataset (fit's other overload wraps one), or
// a loader that fills the batch itself each step (datasets/image_batches.h, through the app).
// fit() records one full-batch step as a CUDA graph and replays it, so what a full-batch step
// reads must stay at the same addresses: rows() and the index next() returns for a full batch.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual int64_t size() const = 0;         // samples in one pass over the data
  virtual const Dataset& rows() const = 0;  // what a step gathers its rows from
  // Called before the epoch's first next(): the epoch (1-based), its steps and batch size.
  virtual void start_epoch(int epoch, int64_t steps, int64_t batch) = 0;
  // Makes samples [first, first + count) of the epoch ready in rows() and returns the (count,)
  // I32 index of their rows there.
  virtual Tensor next(int64_t first, int64_t count) = 0;
  // Seconds the current epoch's next() calls spent waiting for data (0: resident data).
  virtual double wait_seconds() const { return 0.0; }
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

// A Dataset resident on the device, shuffled every epoch from options.seed; a full batch's row
// indices are copied into one index buffer, so every full-batch step reads the same tensor.
class ResidentBatches final : public BatchSource {
 public:
  // `data` must outlive this; options gives batch_size, shuffle and seed.
  ResidentBatches(const Dataset& data, const FitOptions& options, Device device);
  int64_t size() const override { return data_.size(); }
  const Dataset& rows() const override { return data_; }
  void start_epoch(int epoch, int64_t steps, int64_t batch) override;
  Tensor next(int64_t first, int64_t count) override;

 private:
  const Dataset& data_;
  bool shuffle_;
  Generator rng_;
  std::vector<int32_t> order_;
  Tensor step_index_, device_order_;
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
  double data_wait_seconds = 0.0;  // of `seconds`, the part the steps waited for their data
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
