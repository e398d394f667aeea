// One training step (train_step.h), read top to bottom, and the pieces it shares with
// evaluate(): the batch's losses and the running sums.
#include "nn/train_step.h"

#include "core/autograd.h"
#include "core/nvtx.h"
#include "core/ops.h"
#include "core/profiler.h"
#include "core/rng.h"
#include "nn/gradient_buckets.h"
#include "nn/sequential.h"

namespace engine::nn {

RunningMetrics::RunningMetrics(Device device)
    : loss_sum(Tensor::zeros({}, DType::F32, device)), correct(Tensor::zeros({}, DType::F32, device)) {}

void RunningMetrics::restore(float loss, float correct_rows, int64_t sample_count) {
  raw::fill(loss_sum, loss);
  raw::fill(correct, correct_rows);
  samples = sample_count;
}

double RunningMetrics::loss() const {
  return samples ? loss_sum.item() / static_cast<double>(samples) : 0.0;
}

double RunningMetrics::accuracy(bool has_accuracy) const {
  return has_accuracy && samples ? correct.item() / static_cast<double>(samples) : NOT_MEASURED;
}

double RunningMetrics::metric(Metric measured) const {
  return accuracy(measured != Metric::None);
}

bool is_regression(Loss loss) {
  switch (loss) {
    case Loss::SparseCategoricalCrossentropy:
    case Loss::BinaryCrossentropy:
      return false;
    case Loss::MeanSquaredError:
    case Loss::MeanAbsoluteError:
      return true;
  }
  return false;
}

Metric metric_of(Loss loss, const Shape& output_shape) {
  switch (loss) {
    case Loss::SparseCategoricalCrossentropy:
      return Metric::Accuracy;
    case Loss::BinaryCrossentropy:  // binary accuracy for one output; multi-label: none
      return numel(output_shape) == 1 ? Metric::Accuracy : Metric::None;
    case Loss::MeanSquaredError:
    case Loss::MeanAbsoluteError:
      return Metric::MeanAbsoluteError;
  }
  return Metric::None;
}

const char* metric_name(Metric metric) {
  switch (metric) {
    case Metric::None: return "";
    case Metric::Accuracy: return "accuracy";
    case Metric::MeanAbsoluteError: return "mae";
  }
  return "";
}

bool measures_accuracy(Loss loss, const Shape& output_shape) {
  return metric_of(loss, output_shape) == Metric::Accuracy;
}

Tensor batch_losses(Sequential& model, Loss loss, const Tensor& x, const Tensor& y,
                    ForwardContext& ctx, Tensor* logits_out) {
  // A classification loss fuses the head's activation, so it takes the outputs before it; a
  // regression loss takes the model's output as it is.
  Tensor logits = model.forward(x, ctx, /*logits=*/!is_regression(loss));
  *logits_out = metric_of(loss, model.output_shape()) != Metric::None ? logits : Tensor();
  switch (loss) {
    case Loss::SparseCategoricalCrossentropy:
      return sparse_softmax_cross_entropy(logits, y);
    case Loss::BinaryCrossentropy:
      return sigmoid_binary_cross_entropy(logits, y.view(logits.shape()));
    case Loss::MeanSquaredError:
      return mean_squared_error(logits, y.view(logits.shape()));
    case Loss::MeanAbsoluteError:
      return mean_absolute_error(logits, y.view(logits.shape()));
  }
  return Tensor();
}

void accumulate(RunningMetrics& metrics, Loss loss, const Tensor& losses, const Tensor& logits,
                const Tensor& y) {
  NoGradGuard no_grad;
  raw::sum(losses, metrics.loss_sum, 1.0f, /*add_to_y=*/true);
  if (!logits.defined()) return;
  switch (loss) {
    case Loss::SparseCategoricalCrossentropy:
    case Loss::BinaryCrossentropy:
      raw::count_correct(logits, y, metrics.correct);
      return;
    case Loss::MeanAbsoluteError:  // the losses are the samples' mean absolute errors
      raw::sum(losses, metrics.correct, 1.0f, /*add_to_y=*/true);
      return;
    case Loss::MeanSquaredError: {
      Tensor errors = Tensor::empty(losses.shape(), DType::F32, losses.device());
      raw::mean_absolute_error_forward(logits, y.view(logits.shape()), errors);
      raw::sum(errors, metrics.correct, 1.0f, /*add_to_y=*/true);
      return;
    }
  }
}

Tensor mean_loss_seed(const Tensor& losses) {
  return Tensor::full(losses.shape(), 1.0f / static_cast<float>(losses.numel()), losses.device());
}

void Sequential::set_training_seed(uint64_t seed) { dropout_seed_ = derive_seed(seed, 1); }

uint64_t Sequential::dropout_stream(int64_t i) const {
  return derive_seed(dropout_seed_, static_cast<uint64_t>(i));
}

void Sequential::set_communicator(Communicator* communicator, int64_t bucket_bytes) {
  communicator_ = communicator;
  // The buckets are cut once, from the parameters' layout; each step only resets them.
  buckets_ = communicator ? std::make_shared<GradientBuckets>(*communicator, store_, bucket_bytes)
                          : nullptr;
}

namespace {
// A phase of the step (forward, backward, optimizer), named for Nsight's timeline (NVTX) and
// for --profile's rows (core/profiler.h).
struct Phase {
  explicit Phase(const char* name) : range(name), scope(name) {}
  NvtxRange range;
  ProfileScope scope;
};
}  // namespace

void Sequential::train_step(const Dataset& data, const Tensor& index, RunningMetrics& metrics) {
  NvtxRange range("train_step");
  // The batch: its rows gathered on the device, by an index the host never reads back.
  const Tensor x = gather_rows(data.x, index);
  const Tensor y = gather_rows(data.y, index);
  zero_grad();
  // Dropout's masks come from (seed, step counter, layer): the same masks on every device,
  // and a replayed graph draws new ones because the counter lives on the device.
  ForwardContext ctx;
  ctx.training = true;
  ctx.dropout_seed = dropout_seed_;
  ctx.step = step_;
  ctx.first_row = communicator_ ? communicator_->rank() * index.numel() : 0;
  Tensor logits, losses;
  {
    Phase forward("forward");
    losses = batch_losses(*this, loss_, x, y, ctx, &logits);
  }
  if (!communicator_) {
    Phase backward("backward");
    engine::backward(losses, mean_loss_seed(losses));
    zero_unreached_grads();
  } else {
    // Data-parallel: each group of gradients is averaged over the ranks as soon as backward
    // has written it, while backward goes on (nn/gradient_buckets.h). Every rank's batch is as
    // large, so the mean of the ranks' mean gradients is the global batch's.
    Phase backward("backward");
    GradientBuckets& buckets = *buckets_;
    buckets.start_step();
    engine::backward(losses, mean_loss_seed(losses),
                     [&buckets](const Tensor& leaf) { buckets.leaf_written(leaf); });
    zero_unreached_grads();
    buckets.finish();
  }
  {
    Phase optimizer("optimizer");
    optimizer_->step(store_, step_);
    raw::increment(step_);
  }
  accumulate(metrics, loss_, losses.detach(), logits.defined() ? logits.detach() : logits, y);
}

}  // namespace engine::nn
