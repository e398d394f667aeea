// fit / evaluate / predict for Sequential. A training step is:
//   gather batch (on the device) -> zero grads -> forward -> loss -> backward -> optimizer.
// Everything in a step is device work with fixed addresses (the batch's row indices are
// copied into one index buffer first), so on the GPU the whole step is recorded once as a
// CUDA graph and replayed for every full batch. Running loss and accuracy are summed on the
// device and read only when the progress line is redrawn or the epoch ends.
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <numeric>

#include "core/autograd.h"
#include "core/error.h"
#include "core/nvtx.h"
#include "core/ops.h"
#include "core/system_info.h"
#include "nn/checkpoint.h"
#include "nn/progress.h"
#include "nn/sequential.h"

namespace engine::nn {

constexpr double NOT_MEASURED = std::numeric_limits<double>::quiet_NaN();

// The warm-up: the steps a process runs first, up to and including its second full-batch step.
// The first full step runs op by op and pays the run's one-off costs (loading the kernels and
// JIT-compiling any PTX, cuDNN's algorithm search, the allocator's first allocations, the
// optimizer's state); the second is recorded as a CUDA graph and replayed for the first time
// (without a graph, on the CPU or with --no-graph, it runs op by op again, on warm caches).
// The steps after it are the steady state that a median time per step describes.
constexpr int64_t WARMUP_FULL_STEPS = 2;

// Device-resident sums over an epoch: sum of per-sample losses and count of correct rows.
// A replayed graph writes to the addresses it was recorded with, so fit() keeps one of these
// for the whole run and resets it each epoch.
struct RunningMetrics {
  Tensor loss_sum, correct;
  int64_t samples = 0;

  explicit RunningMetrics(Device device)
      : loss_sum(Tensor::zeros({}, DType::F32, device)),
        correct(Tensor::zeros({}, DType::F32, device)) {}
  void reset() { restore(0.0f, 0.0f, 0); }
  // Sets the sums to where a checkpoint left them.
  void restore(float loss, float correct_rows, int64_t sample_count) {
    loss_sum.backend().fill(loss_sum, loss);
    correct.backend().fill(correct, correct_rows);
    samples = sample_count;
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

Metrics metrics_of(double loss, double accuracy) {
  return {{"loss", loss}, {"accuracy", accuracy}};
}
Metrics metrics_of(const RunningMetrics& m, bool has_accuracy) {
  return metrics_of(m.loss(), m.accuracy(has_accuracy));
}

// Row indices [first, first + count) of `order` as an index tensor on the device.
Tensor batch_index(const std::vector<int32_t>& order, int64_t first, int64_t count, Device device) {
  std::vector<int32_t> slice(order.begin() + first, order.begin() + first + count);
  return Tensor::from_ints(slice, {count}, device);
}

// The signal FitOptions::stop_signal holds (0: go on).
int stop_requested(const FitOptions& options) {
  return options.stop_signal ? options.stop_signal->load() : 0;
}

// A checkpoint is only good for a run with the settings that shaped its batches and masks.
void check_resumable(const TrainingState& saved, const FitOptions& options, int64_t steps) {
  ENGINE_CHECK(saved.seed == options.seed && saved.batch_size == options.batch_size &&
                   saved.steps_per_epoch == steps,
               "the checkpoint was saved by a run with seed ", saved.seed, ", batch size ",
               saved.batch_size, " and ", saved.steps_per_epoch,
               " steps per epoch; this run has seed ", options.seed, ", batch size ",
               options.batch_size, " and ", steps,
               " steps per epoch (resume with the same seed, batch size and steps per epoch)");
  // A checkpoint in the middle of an epoch past `epochs` holds weights of no epoch's end.
  ENGINE_CHECK(saved.epoch <= options.epochs ||
                   (saved.epoch == options.epochs + 1 && saved.step == 0),
               "the checkpoint has ", saved.epoch - 1, " epochs done",
               saved.step > 0 ? " and part of the next" : "", ", more than the ", options.epochs,
               " this run asks for");
}

// After a step: throws if its loss (the epoch's running sum, which a NaN or an infinity
// poisons for good) or its gradients hold a NaN or an infinity. The gradients cost one dot
// product with themselves, g . g, and a scalar read: it is NaN or infinite if any gradient
// is. (A dot, not Backend::sum: on the CPU it is BLAS' vectorised sdot, measured 4 us for the
// MLP's 101,770 gradients on one core against 250 us for sum, which accumulates in double;
// 2-core dev VM, 2026-11-23.) Only then do the gradients come to the host, to name the first
// parameter (in forward order) that holds one; a dot that merely overflowed (gradients beyond
// ~1e17, all finite) is found out by that scan, and training goes on.
void check_finite_step(const ParameterStore& store, const RunningMetrics& running,
                       Tensor& grad_check, int epoch, int64_t step, int64_t steps,
                       const std::string& kept) {
  const double loss = running.loss_sum.item();
  const int64_t n = store.count();
  store.grads.backend().matmul(store.grads.view({1, n}), false, store.grads.view({n, 1}), false,
                               grad_check, 1.0f, 0.0f);
  if (std::isfinite(loss) && std::isfinite(grad_check.item())) return;
  float bad = 0.0f;
  const Parameter* p = first_non_finite(store, store.grads.to_vector(), &bad);
  if (p == nullptr && std::isfinite(loss)) return;
  const std::string found =
      p ? detail::concat("first in the gradient of ", p->name, " (forward order), value ", bad,
                         "; the epoch's mean loss so far ", running.loss())
        : detail::concat("in the loss (the epoch's mean so far ", running.loss(),
                         "); the gradients are finite");
  throw Error(detail::concat("NaN/Inf at epoch ", epoch, ", step ", step, "/", steps, ": ", found,
                             ". Training stopped without saving it", kept));
}

EpochMemory memory_now(Backend& backend) {
  const AllocatorStats stats = backend.allocator().stats();
  return {host_rss_bytes(), stats.current_bytes, stats.current_bytes + stats.cached_bytes};
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

void BatchSource::restore_state(const Bytes& state) {
  ENGINE_CHECK(state.empty(), "this batch source keeps no state, but the checkpoint holds ",
               state.size(), " bytes of it");
}

Bytes ResidentBatches::state() const {
  const uint64_t offset = rng_.offset();
  Bytes state(sizeof offset + order_.size() * sizeof(int32_t));
  std::memcpy(state.data(), &offset, sizeof offset);
  std::memcpy(state.data() + sizeof offset, order_.data(), order_.size() * sizeof(int32_t));
  return state;
}

void ResidentBatches::restore_state(const Bytes& state) {
  uint64_t offset = 0;
  ENGINE_CHECK(state.size() == sizeof offset + order_.size() * sizeof(int32_t),
               "the checkpoint's shuffling state (", state.size(), " bytes) is not for ",
               size(), " training samples (other data)");
  std::vector<int32_t> order(order_.size());
  std::memcpy(&offset, state.data(), sizeof offset);
  std::memcpy(order.data(), state.data() + sizeof offset, order.size() * sizeof(int32_t));
  // The rows every step gathers: a permutation of them, or the checkpoint is not ours.
  std::vector<bool> seen(order.size(), false);
  for (const int32_t row : order) {
    ENGINE_CHECK(row >= 0 && row < size() && !seen[static_cast<size_t>(row)],
                 "the checkpoint's shuffling order is not a permutation of the ", size(),
                 " training samples");
    seen[static_cast<size_t>(row)] = true;
  }
  rng_.set_offset(offset);
  order_ = std::move(order);
}

void ResidentBatches::start_epoch(int epoch, int64_t steps, int64_t batch, int64_t first_step) {
  (void)epoch, (void)steps, (void)batch, (void)first_step;  // next() takes any slice
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
  ENGINE_CHECK(options.checkpoint_every >= 0, "checkpoint interval must not be negative, got ",
               options.checkpoint_every);
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
  int64_t warmup_full_steps = 0;  // of WARMUP_FULL_STEPS, those this process has run
  Tensor grad_check;  // check_finite_step's g . g
  if (options.check_numerics) grad_check = Tensor::empty({1, 1}, DType::F32, device());
  BreakdownClock clock(backend, options.breakdown, source.copies_from_host());
  using Part = BreakdownClock::Part;

  History history;
  const TrainingState* resume = options.resume;
  if (resume) {
    check_resumable(*resume, options, steps);
    history.epochs = resume->history;
    source.restore_state(resume->source_state);
  }
  // What a checkpoint of this run holds besides the model: the settings, and the source's
  // state before the current epoch (taken before every epoch, as the epoch consumes it).
  const bool checkpoints = !options.checkpoint_path.empty();
  TrainingState at_epoch_start;
  at_epoch_start.seed = options.seed;
  at_epoch_start.batch_size = batch;
  at_epoch_start.steps_per_epoch = steps;
  std::string kept;  // for the NaN message: the last checkpoint saved, if any
  const auto save = [&](TrainingState state) {
    state.history = history.epochs;
    save_checkpoint(*this, state, options.checkpoint_path);
    history.checkpoint_saved = true;
    kept = state.step == 0 ? detail::concat("; the last checkpoint, ", options.checkpoint_path,
                                            " (after epoch ", state.epoch - 1, "), is kept")
                           : detail::concat("; the last checkpoint, ", options.checkpoint_path,
                                            " (epoch ", state.epoch, ", step ", state.step,
                                            "), is kept");
  };
  const auto stop = [&](int signal, int epoch, int64_t step) {
    history.interrupted_by = signal;
    history.stopped_epoch = epoch;
    history.stopped_step = step;
    return history;
  };

  for (int epoch = resume ? resume->epoch : 1; epoch <= options.epochs; ++epoch) {
    NvtxRange epoch_range("epoch");
    clock.start_epoch();
    const bool resumed = resume && epoch == resume->epoch;
    const int64_t first_step = resumed ? resume->step : 0;
    if (checkpoints) at_epoch_start.source_state = source.state();
    source.start_epoch(epoch, steps, batch, first_step);
    if (options.verbose) {
      out << "Epoch " << epoch << "/" << options.epochs;
      if (first_step > 0) out << " (resumed at step " << first_step + 1 << "/" << steps << ")";
      out << "\n" << std::flush;
    }
    const double earlier_seconds = resumed ? resume->seconds : 0.0;
    ProgressBar bar(out, steps, options.verbose && ProgressBar::stdout_is_terminal(),
                    earlier_seconds);
    // This epoch's warm-up steps, and where its steady part starts on the bar's clock (which
    // `seconds` is read from): at the epoch's start unless the warm-up falls in it.
    int64_t warmup_steps = 0;
    double steady_start = earlier_seconds;
    const double earlier_wait = resumed ? resume->data_wait_seconds : 0.0;
    if (resumed) {
      running.restore(resume->loss_sum, resume->correct, resume->samples);
    } else {
      running.reset();
    }
    int64_t replayed_steps = 0;
    for (int64_t step = first_step; step < steps; ++step) {
      const int64_t first = step * batch;
      const int64_t count = std::min(batch, n - first);
      // --breakdown: the device's time goes to the batch's part, then to the step's; a
      // resident set's batch is part of the step, and consecutive steps extend one span.
      clock.enter(clock.batch_part());
      const Tensor index = source.next(first, count);
      clock.enter(Part::Compute);
      if (count == full_batch) {
        // The first full step runs op by op (it creates the optimizer's state and fills the
        // allocator's cache); the second is recorded, and every one after is a replay.
        if (options.use_graph && !graph && eager_full_steps > 0) {
          clock.leave();  // recording runs nothing on the device: host time, "other"
          const auto capture_start = std::chrono::steady_clock::now();
          graph = backend.capture([&] { train_step(train, index, running); });
          graph_index = index;
          if (graph) {
            history.graph_replay = true;
            history.kernels_per_step = graph->kernel_count();
            history.capture_seconds = seconds_since(capture_start);
          }
          clock.enter(Part::Compute);
        }
        if (graph) {
          ENGINE_CHECK(index.same_storage(graph_index), "a batch source moved its full-batch index");
          NvtxRange range("train_step");
          graph->replay();
          ++replayed_steps;
        } else {
          train_step(train, index, running);
          ++eager_full_steps;
        }
      } else {  // a partial last batch has other shapes than the recorded step
        train_step(train, index, running);
      }
      running.samples += count;
      if (options.check_numerics) {
        check_finite_step(store_, running, grad_check, epoch, step + 1, steps, kept);
      }
      if (warmup_full_steps < WARMUP_FULL_STEPS) {  // a step of the warm-up
        ++warmup_steps;
        if (count == full_batch) ++warmup_full_steps;
        if (warmup_full_steps == WARMUP_FULL_STEPS) {
          // The warm-up's time must hold its device work, not hand it to the first steady
          // steps: fit's one synchronisation for it, once a run. The wait drains the device,
          // as a read does, so the breakdown's span closes first.
          clock.leave();
          backend.synchronize();
          steady_start = bar.elapsed_seconds();
        }
      }
      if (options.verbose && bar.due(step + 1)) {
        clock.enter(Part::Readback);
        bar.update(step + 1, metrics_of(running, has_accuracy));
        clock.leave();  // the read drained the device: until the next launch is no part's
      }
      // Stopped mid-epoch: the checkpoint goes on from the next step of this epoch. (At the
      // epoch's last step, the epoch is finished first, validation included.)
      const int signal = stop_requested(options);
      if (signal != 0 && step + 1 < steps) {
        if (options.verbose && bar.interactive()) out << "\n";
        if (checkpoints) {
          TrainingState state = at_epoch_start;
          state.epoch = epoch;
          state.step = step + 1;
          state.loss_sum = static_cast<float>(running.loss_sum.item());
          state.correct = static_cast<float>(running.correct.item());
          state.samples = running.samples;
          state.seconds = bar.elapsed_seconds();
          state.data_wait_seconds = earlier_wait + source.wait_seconds();
          save(std::move(state));
        }
        return stop(signal, epoch, step + 1);
      }
    }
    clock.leave();
    backend.synchronize();
    EpochRecord record;
    record.epoch = epoch;
    record.seconds = bar.elapsed_seconds();
    record.data_wait_seconds = earlier_wait + source.wait_seconds();
    record.steps = steps;
    record.steady_steps = steps - first_step - warmup_steps;
    // An epoch with no step after the warm-up is warm-up to its end, its final wait included.
    if (record.steady_steps == 0) steady_start = record.seconds;
    record.warmup_steps = warmup_steps;
    record.warmup_seconds = steady_start - earlier_seconds;
    record.steady_seconds = record.seconds - steady_start;
    clock.enter(Part::Readback);
    record.loss = running.loss();
    record.accuracy = running.accuracy(has_accuracy);
    clock.leave();
    record.val_loss = record.val_accuracy = NOT_MEASURED;
    Metrics extra;
    if (options.validation) {
      const EvalResult val = evaluate(*options.validation, {options.batch_size, false, nullptr});
      record.val_loss = val.loss;
      record.val_accuracy = has_accuracy ? val.accuracy : NOT_MEASURED;
      record.val_seconds = val.seconds;
      extra = {{"val_loss", record.val_loss}, {"val_accuracy", record.val_accuracy}};
    }
    if (options.verbose) bar.finish(metrics_of(record.loss, record.accuracy), extra);
    record.breakdown = clock.finish(source.wait_seconds(), record.val_seconds, steps - first_step,
                                    replayed_steps);
    record.memory = memory_now(backend);
    history.epochs.push_back(record);

    const int signal = stop_requested(options);
    const bool due = options.checkpoint_every > 0 &&
                     (epoch % options.checkpoint_every == 0 || epoch == options.epochs);
    if (checkpoints && (due || signal != 0)) {
      TrainingState state = at_epoch_start;
      state.epoch = epoch + 1;
      state.source_state = source.state();
      save(std::move(state));
    }
    if (signal != 0) return stop(signal, epoch + 1, 0);
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
