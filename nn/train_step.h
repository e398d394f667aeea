// One training step, the heart of fit(), and what a loop of your own calls instead:
//
//   model.set_training_seed(seed);                  // dropout masks, as fit() would draw them
//   RunningMetrics metrics(model.device());
//   for (each batch) {
//     model.train_step(data, rows_of_the_batch, metrics);
//     metrics.samples += rows_in_the_batch;         // the host counts: a replayed graph cannot
//   }
//   metrics.loss(), metrics.accuracy(true)          // the epoch's means (reads the device)
//   metrics.metric(Metric::MeanAbsoluteError)       // ... or a regression loss's "mae"
//
// A step is device work only (train_step.cpp): gather the batch's rows -> forward -> loss
// -> backward -> optimizer update -> add the batch's loss and its metric (correct
// predictions, or absolute errors) to `metrics`. Nothing waits for the device, so on a GPU
// the whole step can be recorded once as a CUDA graph and replayed (fit() does,
// nn/training.cpp).
#pragma once
#include <cstdint>
#include <limits>

#include "core/tensor.h"
#include "nn/training.h"

namespace engine::nn {

class Sequential;
struct ForwardContext;

// A metric a run did not measure (no accuracy for a multi-output sigmoid head, no validation).
constexpr double NOT_MEASURED = std::numeric_limits<double>::quiet_NaN();

// The metric a loss reports beside itself, summed on the device batch by batch.
enum class Metric {
  None,               // a multi-output sigmoid head (multi-label)
  Accuracy,           // argmax for sparse labels, threshold 0.5 for a single sigmoid output
  MeanAbsoluteError,  // the regression losses: Keras' "mae"
};
Metric metric_of(Loss loss, const Shape& output_shape);
// Its name in the progress line and the records: "accuracy", "mae" ("" for None).
const char* metric_name(Metric metric);

// Device-resident sums over an epoch: the per-sample losses, and the metric's sum in
// `correct`: the correct rows (accuracy), or the samples' mean absolute errors (mae). A
// replayed graph writes to the addresses it was recorded with, so fit() keeps one of these
// for the whole run and resets it each epoch.
struct RunningMetrics {
  Tensor loss_sum, correct;
  int64_t samples = 0;  // the host counts them: no read of the device

  explicit RunningMetrics(Device device);
  void reset() { restore(0.0f, 0.0f, 0); }
  // Sets the sums to where a checkpoint left them.
  void restore(float loss, float correct_rows, int64_t sample_count);
  // The means so far; each reads a scalar from the device.
  double loss() const;
  double accuracy(bool has_accuracy) const;
  // The metric's mean: correct / samples; NOT_MEASURED for Metric::None.
  double metric(Metric metric) const;
};

// Whether the loss has an accuracy: argmax for sparse labels, threshold 0.5 for a single
// sigmoid output; a multi-output sigmoid head (multi-label) has none.
bool measures_accuracy(Loss loss, const Shape& output_shape);

// The per-sample losses of a batch (N,): a classification loss's from the model's
// pre-activation outputs (it fuses the head's activation), a regression loss's from the
// model's output as it is. `logits_out` gets those outputs where the loss has a metric.
Tensor batch_losses(Sequential& model, Loss loss, const Tensor& x, const Tensor& y,
                    ForwardContext& ctx, Tensor* logits_out);

// Adds a batch's losses and its metric (batch_losses' `logits_out`, undefined: none) to the
// running sums, on the device: the correct predictions, or for a regression loss the samples'
// mean absolute errors.
void accumulate(RunningMetrics& metrics, Loss loss, const Tensor& losses, const Tensor& logits,
                const Tensor& y);

// The seed that starts backward at the per-sample losses (N,) as if at their mean: 1/N for
// each, the gradient of the mean. One fill, where mean(losses).backward() would run three
// kernels (the mean, a seed of 1, its broadcast back over the losses) for the same values.
Tensor mean_loss_seed(const Tensor& losses);

}  // namespace engine::nn
