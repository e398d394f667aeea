// One training step (train_step.h), read top to bottom, and the pieces it shares with
// evaluate(): the batch's losses and the running sums.
#include "nn/train_step.h"

#include "core/autograd.h"
#include "core/nvtx.h"
#include "core/ops.h"
#include "core/profiler.h"
#include "core/rng.h"
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

bool measures_accuracy(Loss loss, const Shape& output_shape) {
  return loss == Loss::SparseCategoricalCrossentropy || numel(output_shape) == 1;
}

Tensor batch_losses(Sequential& model, Loss loss, const Tensor& x, const Tensor& y,
                    ForwardContext& ctx, Tensor* logits_out) {
  Tensor logits = model.forward(x, ctx, /*logits=*/true);
  *logits_out = measures_accuracy(loss, model.output_shape()) ? logits : Tensor();
  return loss == Loss::SparseCategoricalCrossentropy
             ? sparse_softmax_cross_entropy(logits, y)
             : sigmoid_binary_cross_entropy(logits, y.view(logits.shape()));
}

void accumulate(RunningMetrics& metrics, const Tensor& losses, const Tensor& logits, const Tensor& y) {
  NoGradGuard no_grad;
  Tensor batch_sum = Tensor::empty({}, DType::F32, losses.device());
  raw::sum(losses, batch_sum, 1.0f);
  raw::axpby(1.0f, batch_sum, 1.0f, metrics.loss_sum);
  if (logits.defined()) raw::count_correct(logits, y, metrics.correct);
}

void Sequential::set_training_seed(uint64_t seed) { dropout_seed_ = derive_seed(seed, 1); }

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
  Tensor logits, losses;
  {
    Phase forward("forward");
    losses = batch_losses(*this, loss_, x, y, ctx, &logits);
  }
  {
    Phase backward("backward");
    mean(losses).backward();
    zero_unreached_grads();
  }
  {
    Phase optimizer("optimizer");
    optimizer_->step(store_, step_);
    raw::increment(step_);
  }
  accumulate(metrics, losses.detach(), logits.defined() ? logits.detach() : logits, y);
}

}  // namespace engine::nn
