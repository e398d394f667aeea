// Sequential: a stack of layers with Keras' workflow
//   Sequential model{flatten(), dense(128, Activation::Relu), dropout(0.2f),
//                    dense(10, Activation::Softmax)};
//   model.build({28, 28}, Device::cpu(), seed);
//   model.compile(std::make_unique<Adam>(), Loss::SparseCategoricalCrossentropy);
//   model.fit(train, options);  model.evaluate(test);
#pragma once
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <vector>

#include "core/data_parallel.h"
#include "core/device_services.h"
#include "core/ops.h"
#include "nn/layer.h"
#include "nn/optimizers.h"
#include "nn/parameters.h"
#include "nn/training.h"

namespace engine::nn {

struct RunningMetrics;  // device-resident loss and metric sums (nn/train_step.h)
class GradientBuckets;  // a data-parallel step's all-reduces (nn/gradient_buckets.h)

class Sequential {
 public:
  Sequential(std::initializer_list<std::shared_ptr<Layer>> layers);
  explicit Sequential(std::vector<std::shared_ptr<Layer>> layers);

  // Fixes every shape from the per-sample input shape, allocates the flat parameter and
  // gradient buffers on `device` and initialises them (Glorot uniform kernels, zero
  // biases) from `seed`, identically on every device.
  void build(const Shape& input_shape, Device device, uint64_t seed);
  bool built() const { return store_.values.defined(); }
  Device device() const;
  const Shape& input_shape() const { return input_shape_; }
  const Shape& output_shape() const { return output_shape_; }
  // Each layer's output shape, per sample (without the batch dimension), in order.
  const std::vector<Shape>& layer_output_shapes() const { return output_shapes_; }

  // The Keras 2 summary table (layer, output shape, parameter count, totals).
  void summary(std::ostream& out) const;
  int64_t parameter_count() const { return store_.count(); }
  ParameterStore& parameters() { return store_; }
  const ParameterStore& parameters() const { return store_; }
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }

  // x: (batch, *input_shape). With `logits`, the last layer's activation is skipped so a
  // loss can fuse it (softmax + cross-entropy).
  Tensor forward(const Tensor& x, ForwardContext& ctx, bool logits = false);
  void zero_grad();
  // After backward(): zeroes the gradients that backward did not write (a parameter the
  // loss does not depend on), which zero_grad() left marked instead of zeroing.
  void zero_unreached_grads();
  // Optimizer steps taken so far: an I32 scalar on the model's device, read there by Adam's
  // bias correction and by dropout's masks (core/ops/dropout.h says why it is not a host number).
  const Tensor& step_counter() const { return step_; }
  // Sets the counter, for a run that goes on from a checkpoint.
  void set_step_counter(int64_t steps);

  void compile(std::unique_ptr<Optimizer> optimizer, Loss loss);
  // The optimizer and the loss compile() was given.
  Optimizer& optimizer();
  Loss loss() const { return loss_; }
  // One training step on the rows `index` (an I32 tensor on the model's device) of `data`:
  // forward, loss, backward, optimizer update, and the batch's loss and metric (correct rows,
  // or a regression loss's absolute errors) added to `metrics`. Device work only, so fit()
  // records it as a CUDA graph (nn/train_step.h shows a loop of your own around it).
  void train_step(const Dataset& data, const Tensor& index, RunningMetrics& metrics);
  // Seeds dropout's masks as fit() does with FitOptions::seed; for a loop of your own.
  void set_training_seed(uint64_t seed);
  // The key Dropout layer i (counted in forward order from 0) draws its masks with.
  uint64_t dropout_stream(int64_t i) const;
  // A data-parallel run's ranks (core/data_parallel.h): train_step then averages the gradients
  // over them before the update, in buckets of `bucket_bytes` (nn/gradient_buckets.h), and
  // draws the dropout masks of this rank's rows in the global batch. nullptr (the default):
  // one process. fit() sets it from FitOptions::communicator and bucket_bytes.
  void set_communicator(Communicator* communicator, int64_t bucket_bytes);
  History fit(const Dataset& train, const FitOptions& options);
  // Trains on batches from `source` (options.shuffle is the source's business).
  History fit(BatchSource& source, const FitOptions& options);
  // The mean loss over `data` and the loss's metric: accuracy, or for a regression loss the
  // mean absolute error (EvalResult::mae, accuracy then NaN).
  EvalResult evaluate(const Dataset& data, const EvalOptions& options = {});
  // Outputs of the full model (probabilities for a softmax head), in batches, no grad.
  Tensor predict(const Tensor& x, int64_t batch_size = 32);

 private:
  std::vector<std::shared_ptr<Layer>> layers_;
  std::vector<Shape> output_shapes_;  // per layer, without the batch dimension
  Shape input_shape_, output_shape_;
  ParameterStore store_;
  std::unique_ptr<Optimizer> optimizer_;
  Loss loss_ = Loss::SparseCategoricalCrossentropy;
  bool compiled_ = false;
  Tensor step_;
  uint64_t dropout_seed_ = 0;
  uint64_t seed_ = 0;
  Communicator* communicator_ = nullptr;
  std::shared_ptr<GradientBuckets> buckets_;  // with a communicator: the gradients' buckets
};

}  // namespace engine::nn
