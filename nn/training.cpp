// fit / evaluate / predict for Sequential. A training step is:
//   gather batch (on the device) -> zero grads -> forward -> loss -> backward -> optimizer.
// Everything in a step is device work with fixed addresses (the batch's row indices are
// copied into one index buffer first), so on the GPU the whole step is recorded once as a
// CUDA graph and replayed for every full batch. Running loss and accuracy are summed on the
// device and read only when the progress line is redrawn or the epoch ends.
#include <cmath>
#include <iostream>
#include <limits>
#include <numeric>

#include "core/autograd.h"
#include "core/error.h"
#include "core/nvtx.h"
#include "core/ops.h"
#include "nn/progress.h"
#include "nn/sequential.h"

namespace engine::nn {

constexpr double NOT_MEASURED = std::numeric_limits<double>::quiet_NaN();

// Device-resident sums over an epoch: sum of per-sample losses and count of correct rows.
// A replayed graph writes to the addresses it was recorded with, so fit() keeps one of these
// for the whole run and resets it each epoch.
struct RunningMetrics {
  Tensor loss_sum, correct;
  int64_t samples = 0;

  explicit RunningMetrics(Device device)
      : loss_sum(Tensor::zeros({}, DType::F32, device)),
        correct(Tensor::zeros({}, DType::F32, device)) {}
  void reset() {
    loss_sum.backend().fill(loss_sum, 0.0f);
    correct.backend().fill(correct, 0.0f);
    samples = 0;
  }
  double loss() const { return samples ? loss_sum.item() / static_cast<double>(samples) : 0.0; }
  double accuracy(bool has_accuracy) const {
    return has_accuracy && samples ? correct.item() / static_cast<double>(samples) : NOT_MEASURED;
  }
};

namespace {
void check_dataset(const char* what, const Dataset& data, const Sequential& model, Loss loss) {
  ENGINE_CHECK(data.x.defined() && data.y.defined(), what, ": inputs or labels missing");
  ENGINE_CHECK(data.x.dim(0) == data.y.dim(0), what, ": ", data.x.dim(0), " inputs but ",
               data.y.dim(0), " labels");
  ENGINE_CHECK(data.x.device() == model.device() && data.y.device() == model.device(), what,
               " must be on the model's device (", to_string(model.device()), ")");
  if (loss == Loss::SparseCategoricalCrossentropy) {
    ENGINE_CHECK(data.y.dtype() == DType::I32 && data.y.ndim() == 1, what,
                 ": sparse categorical labels must be a 1-D int32 tensor");
  } else {
    ENGINE_CHECK(data.y.dtype() == DType::F32, what, ": binary targets must be float32");
  }
}

// Accuracy is argmax for sparse labels, and threshold 0.5 for a single sigmoid output; a
// multi-output sigmoid head (multi-label) gets none.
bool measures_accuracy(Loss loss, const Shape& output_shape) {
  return loss == Loss::SparseCategoricalCrossentropy || numel(output_shape) == 1;
}

// The per-sample loss of a batch (N,), from the model's pre-activation outputs (every loss fuses
// the head's activation); `logits_out` gets them where accuracy is measured.
Tensor batch_losses(Sequential& model, Loss loss, const Tensor& x, const Tensor& y,
                    ForwardContext& ctx, Tensor* logits_out) {
  Tensor logits = model.forward(x, ctx, /*logits=*/true);
  *logits_out = measures_accuracy(loss, model.output_shape()) ? logits : Tensor();
  return loss == Loss::SparseCategoricalCrossentropy
             ? sparse_softmax_cross_entropy(logits, y)
             : sigmoid_binary_cross_entropy(logits, y.view(logits.shape()));
}

// Adds a batch's losses and correct predictions to the running sums, on the device.
void accumulate(RunningMetrics& m, const Tensor& losses, const Tensor& logits, const Tensor& y) {
  NoGradGuard no_grad;
  Tensor batch_sum = Tensor::empty({}, DType::F32, losses.device());
  losses.backend().sum(losses, batch_sum, 1.0f);
  losses.backend().axpby(1.0f, batch_sum, 1.0f, m.loss_sum);
  if (logits.defined()) logits.backend().count_correct(logits, y, m.correct);
}

Metrics metrics_of(const RunningMetrics& m, bool has_accuracy, const std::string& prefix = "") {
  return {{prefix + "loss", m.loss()}, {prefix + "accuracy", m.accuracy(has_accuracy)}};
}

// Row indices [first, first + count) of `order` as an index tensor on the device.
Tensor batch_index(const std::vector<int32_t>& order, int64_t first, int64_t count, Device device) {
  std::vector<int32_t> slice(order.begin() + first, order.begin() + first + count);
  return Tensor::from_ints(slice, {count}, device);
}


}  // namespace

void Sequential::train_step(const Dataset& train, const Tensor& index, RunningMetrics& running) {
  NvtxRange range("train_step");
  const Tensor x = gather_rows(train.x, index);
  const Tensor y = gather_rows(train.y, index);
  zero_grad();
  ForwardContext ctx;
  ctx.training = true;
  ctx.dropout_seed = dropout_seed_;
  ctx.step = step_;
  Tensor logits, losses;
  {
    NvtxRange forward_range("forward");
    losses = batch_losses(*this, loss_, x, y, ctx, &logits);
  }
  {
    NvtxRange backward_range("backward");
    mean(losses).backward();
    zero_unreached_grads();
  }
  {
    NvtxRange optimizer_range("optimizer");
    optimizer_->step(store_, step_);
    step_.backend().increment(step_);
  }
  accumulate(running, losses.detach(), logits.defined() ? logits.detach() : logits, y);
}

ResidentBatches::ResidentBatches(const Dataset& data, const FitOptions& options, Device device)
    : data_(data),
      shuffle_(options.shuffle),
      rng_(derive_seed(options.seed, 2)),
      order_(static_cast<size_t>(data.size())),
      step_index_(Tensor::empty({std::min(options.batch_size, data.size())}, DType::I32, device)) {
  std::iota(order_.begin(), order_.end(), 0);
}

void ResidentBatches::start_epoch(int epoch, int64_t steps, int64_t batch) {
  (void)epoch, (void)steps, (void)batch;
  if (shuffle_) {  // Fisher-Yates from the run's own stream: the same order every run
    for (int64_t i = size() - 1; i > 0; --i) {
      std::swap(order_[static_cast<size_t>(i)], order_[rng_.below(static_cast<uint64_t>(i + 1))]);
    }
  }
  // The epoch's order goes to the device once; each step copies its slice on the device.
  device_order_ = Tensor::from_ints(order_, {size()}, step_index_.device());
}

Tensor ResidentBatches::next(int64_t first, int64_t count) {
  if (count != step_index_.numel()) return device_order_.slice(first, {count});
  step_index_.copy_from(device_order_.slice(first, {count}));
  return step_index_;
}

History Sequential::fit(const Dataset& train, const FitOptions& options) {
  // What ResidentBatches needs; fit(source) checks the data itself.
  ENGINE_CHECK(compiled_, "fit() needs a compiled model (call compile())");
  ENGINE_CHECK(options.batch_size >= 1, "batch size must be at least 1, got ", options.batch_size);
  ResidentBatches source(train, options, device());
  return fit(source, options);
}

History Sequential::fit(BatchSource& source, const FitOptions& options) {
  ENGINE_CHECK(compiled_, "fit() needs a compiled model (call compile())");
  ENGINE_CHECK(options.epochs >= 1, "epochs must be at least 1, got ", options.epochs);
  ENGINE_CHECK(options.batch_size >= 1, "batch size must be at least 1, got ", options.batch_size);
  ENGINE_CHECK(options.steps_per_epoch >= 0, "steps per epoch must not be negative");
  const Dataset& train = source.rows();
  check_dataset("training data", train, *this, loss_);
  if (options.validation) check_dataset("validation data", *options.validation, *this, loss_);
  const int64_t n = source.size();
  ENGINE_CHECK(n >= 1, "training data is empty");
  std::ostream& out = options.out ? *options.out : std::cout;
  Backend& backend = backend_for(device());

  const int64_t batch = options.batch_size;
  const int64_t full_steps = (n + batch - 1) / batch;
  const int64_t steps = options.steps_per_epoch > 0 ? std::min(options.steps_per_epoch, full_steps)
                                                    : full_steps;
  const bool has_accuracy = measures_accuracy(loss_, output_shape_);
  dropout_seed_ = derive_seed(options.seed, 1);
  const int64_t full_batch = std::min(batch, n);

  RunningMetrics running(device());
  std::unique_ptr<StepGraph> graph;
  Tensor graph_index;  // the index tensor the recorded step reads
  int64_t eager_full_steps = 0;

  History history;
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    NvtxRange epoch_range("epoch");
    source.start_epoch(epoch, steps, batch);
    if (options.verbose) out << "Epoch " << epoch << "/" << options.epochs << "\n" << std::flush;
    ProgressBar bar(out, steps, options.verbose && ProgressBar::stdout_is_terminal());
    running.reset();
    for (int64_t step = 0; step < steps; ++step) {
      const int64_t first = step * batch;
      const int64_t count = std::min(batch, n - first);
      const Tensor index = source.next(first, count);
      if (count == full_batch) {
        // The first full step runs op by op (it creates the optimizer's state and fills the
        // allocator's cache); the second is recorded, and every one after is a replay.
        if (options.use_graph && !graph && eager_full_steps > 0) {
          graph = backend.capture([&] { train_step(train, index, running); });
          graph_index = index;
          if (graph) {
            history.graph_replay = true;
            history.kernels_per_step = graph->kernel_count();
          }
        }
        if (graph) {
          ENGINE_CHECK(index.same_storage(graph_index), "a batch source moved its full-batch index");
          NvtxRange range("train_step");
          graph->replay();
        } else {
          train_step(train, index, running);
          ++eager_full_steps;
        }
      } else {  // a partial last batch has other shapes than the recorded step
        train_step(train, index, running);
      }
      running.samples += count;
      if (options.verbose && bar.due(step + 1)) bar.update(step + 1, metrics_of(running, has_accuracy));
    }
    backend.synchronize();
    EpochRecord record;
    record.epoch = epoch;
    record.seconds = bar.elapsed_seconds();
    record.data_wait_seconds = source.wait_seconds();
    record.steps = steps;
    record.loss = running.loss();
    record.accuracy = running.accuracy(has_accuracy);
    record.val_loss = record.val_accuracy = NOT_MEASURED;
    Metrics extra;
    if (options.validation) {
      const EvalResult val = evaluate(*options.validation, {options.batch_size, false, nullptr});
      record.val_loss = val.loss;
      record.val_accuracy = has_accuracy ? val.accuracy : NOT_MEASURED;
      record.val_seconds = val.seconds;
      extra = {{"val_loss", record.val_loss}, {"val_accuracy", record.val_accuracy}};
    }
    if (options.verbose) bar.finish(metrics_of(running, has_accuracy), extra);
    history.epochs.push_back(record);
  }
  return history;
}

EvalResult Sequential::evaluate(const Dataset& data, const EvalOptions& options) {
  ENGINE_CHECK(compiled_, "evaluate() needs a compiled model (call compile())");
  ENGINE_CHECK(options.batch_size >= 1, "batch size must be at least 1, got ", options.batch_size);
  check_dataset("evaluation data", data, *this, loss_);
  const int64_t n = data.size();
  ENGINE_CHECK(n >= 1, "evaluation data is empty");
  std::ostream& out = options.out ? *options.out : std::cout;
  const int64_t steps = (n + options.batch_size - 1) / options.batch_size;
  const bool has_accuracy = measures_accuracy(loss_, output_shape_);
  ProgressBar bar(out, steps, options.verbose && ProgressBar::stdout_is_terminal());
  NoGradGuard no_grad;
  ForwardContext ctx;  // inference: no dropout
  RunningMetrics running(device());
  std::vector<int32_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t first = step * options.batch_size;
    const int64_t count = std::min(options.batch_size, n - first);
    const Tensor index = batch_index(order, first, count, device());
    const Tensor x = gather_rows(data.x, index);
    const Tensor y = gather_rows(data.y, index);
    Tensor logits;
    const Tensor losses = batch_losses(*this, loss_, x, y, ctx, &logits);
    accumulate(running, losses, logits, y);
    running.samples += count;
    if (options.verbose && bar.due(step + 1)) bar.update(step + 1, metrics_of(running, has_accuracy));
  }
  EvalResult result{running.loss(), running.accuracy(has_accuracy), n, bar.elapsed_seconds()};
  if (options.verbose) bar.finish(metrics_of(running, has_accuracy));
  return result;
}

Tensor Sequential::predict(const Tensor& x, int64_t batch_size) {
  ENGINE_CHECK(built(), "predict() needs a built model");
  ENGINE_CHECK(batch_size >= 1, "batch size must be at least 1, got ", batch_size);
  NoGradGuard no_grad;
  ForwardContext ctx;  // inference: no dropout
  const int64_t n = x.dim(0);
  Shape out_shape = output_shape_;
  out_shape.insert(out_shape.begin(), n);
  Tensor result = Tensor::empty(out_shape, DType::F32, device());
  const int64_t row = engine::numel(output_shape_);
  for (int64_t first = 0; first < n; first += batch_size) {
    const int64_t count = std::min(batch_size, n - first);
    Shape in_shape = input_shape_;
    in_shape.insert(in_shape.begin(), count);
    const Tensor batch = x.slice(first * engine::numel(input_shape_), in_shape);
    Tensor y = forward(batch.to(device()), ctx);
    result.slice(first * row, y.shape()).copy_from(y);
  }
  return result;
}

}  // namespace engine::nn
