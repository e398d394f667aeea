// fit / evaluate / predict for Sequential. fit() is the epoch loop: each step takes a batch
// from the source and runs train_step (nn/train_step.h: device work with fixed addresses, so
// on the GPU it is recorded once as a CUDA graph and replayed, nn/graphed_step.h); everything
// else a run does (the progress line, the warm-up's time, the NaN check, validation,
// --breakdown, the memory record, checkpoints, and where asked the schedule, the CSV log, the
// best model, early stopping and the user's callbacks) is an observer of the loop
// (nn/fit_run.h, nn/observers/). Running loss and metric are summed on the device and read only when the
// progress line is redrawn or the epoch ends.
#include <cstring>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <tuple>

#include "core/autograd.h"
#include "core/error.h"
#include "core/nvtx.h"
#include "core/ops.h"
#include "nn/checkpoint.h"
#include "nn/fit_run.h"
#include "nn/fused_mlp.h"
#include "nn/graphed_step.h"
#include "nn/observers/checkpoints.h"
#include "nn/observers/observers.h"
#include "nn/progress.h"
#include "nn/sequential.h"
#include "nn/train_step.h"

namespace engine::nn {

namespace {
void check_dataset(const char* what, const Dataset& data, const Sequential& model, Loss loss) {
  ENGINE_CHECK(data.x.defined() && data.y.defined(), what, ": inputs or labels missing");
  ENGINE_CHECK(data.x.dim(0) == data.y.dim(0), what, ": ", data.x.dim(0), " inputs but ",
               data.y.dim(0), " labels");
  ENGINE_CHECK(data.x.device() == model.device() && data.y.device() == model.device(), what,
               " must be on the model's device (", to_string(model.device()), ")");
  switch (loss) {
    case Loss::SparseCategoricalCrossentropy:
      ENGINE_CHECK(data.y.dtype() == DType::I32 && data.y.ndim() == 1, what,
                   ": sparse categorical labels must be a 1-D int32 tensor");
      break;
    case Loss::BinaryCrossentropy:
      ENGINE_CHECK(data.y.dtype() == DType::F32, what, ": binary targets must be float32");
      break;
    case Loss::MeanSquaredError:
    case Loss::MeanAbsoluteError: {
      // (N, F) for F outputs per sample, or (N,) for a single output.
      const int64_t outputs = numel(model.output_shape());
      ENGINE_CHECK(data.y.dtype() == DType::F32, what, ": regression targets must be float32");
      ENGINE_CHECK((data.y.ndim() == 2 && data.y.dim(1) == outputs) ||
                       (data.y.ndim() == 1 && outputs == 1),
                   what, ": regression targets must be (N, ", outputs, ")",
                   outputs == 1 ? " or (N,)" : "", " for the model's ", outputs,
                   " outputs, got ", to_string(data.y.shape()));
      break;
    }
  }
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

}  // namespace

ResidentBatches::ResidentBatches(const Dataset& data, const FitOptions& options, Device device)
    : data_(data),
      shuffle_(options.shuffle),
      rank_(options.communicator ? options.communicator->rank() : 0),
      world_(options.communicator ? options.communicator->world() : 1),
      rng_(derive_seed(options.seed, 2)),
      order_(static_cast<size_t>(data.size())),
      step_index_(Tensor::empty({std::min(options.batch_size, size())}, DType::I32, device)) {
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
  const int64_t rows = data_.size();
  ENGINE_CHECK(state.size() == sizeof offset + order_.size() * sizeof(int32_t),
               "the checkpoint's shuffling state (", state.size(), " bytes) is not for ",
               rows, " training samples (other data)");
  std::vector<int32_t> order(order_.size());
  std::memcpy(&offset, state.data(), sizeof offset);
  std::memcpy(order.data(), state.data() + sizeof offset, order.size() * sizeof(int32_t));
  // The rows every step gathers: a permutation of them, or the checkpoint is not ours.
  std::vector<bool> seen(order.size(), false);
  for (const int32_t row : order) {
    ENGINE_CHECK(row >= 0 && row < rows && !seen[static_cast<size_t>(row)],
                 "the checkpoint's shuffling order is not a permutation of the ", rows,
                 " training samples");
    seen[static_cast<size_t>(row)] = true;
  }
  rng_.set_offset(offset);
  order_ = std::move(order);
}

uint64_t ResidentBatches::fingerprint() const { return fingerprint_of(data_); }

void ResidentBatches::start_epoch(int epoch, int64_t steps, int64_t batch, int64_t first_step) {
  (void)epoch, (void)steps, (void)first_step;  // next() takes any slice
  if (shuffle_) {  // Fisher-Yates from the run's own stream: the same order every run
    for (int64_t i = static_cast<int64_t>(order_.size()) - 1; i > 0; --i) {
      std::swap(order_[static_cast<size_t>(i)], order_[rng_.below(static_cast<uint64_t>(i + 1))]);
    }
  }
  // The epoch's order (this rank's part of it) goes to the device once; each step copies its
  // slice on the device.
  device_order_ = Tensor::from_ints(world_ == 1 ? order_ : rank_order(order_, batch, rank_, world_),
                                    {size()}, step_index_.device());
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
  check_dataset("training data", source.rows(), *this, loss_);
  ENGINE_CHECK(!options.communicator || source.serves_ranks(),
               "data-parallel training (--gpus) needs a batch source that gives each rank its "
               "shard; this one does not");
  if (options.validation) check_dataset("validation data", *options.validation, *this, loss_);
  const int64_t n = source.size();
  ENGINE_CHECK(n >= 1, "training data is empty");
  const int64_t batch = options.batch_size;

  FitRun run(*this, source, options);
  run.steps = steps_per_epoch(options, n);
  run.full_batch = std::min(batch, n);
  run.metric = metric_of(loss_, output_shape_);
  set_training_seed(options.seed);
  set_communicator(options.communicator, options.bucket_bytes);
  // Every rank starts from rank 0's weights (the same seed builds the same ones; a --load or
  // a checkpoint read on each rank too, but one broadcast makes it certain).
  if (options.communicator) options.communicator->broadcast(store_.values, 0);
  const TrainingState* resume = options.resume;
  if (resume) run.resume_from(*resume);
  // An MLP's steps in the fused kernel, many a launch, where the model and the run allow it
  // (nn/fused_mlp.h); else op by op, each full step a graph replay (nn/graphed_step.h).
  const FusedMlpChoice fused =
      choose_fused_mlp(*this, options, resident_float_data(source), fused_mlp_limits(device()));
  run.history.fused = fused.use;
  if (fused.use) run.history.fused_kernel = fused.kernel();
  if (fused.mlp && !fused.use) run.history.fused_why_not = fused.why_not;
  std::optional<FusedSteps> fused_steps;
  if (fused.use) fused_steps.emplace(run, fused.plan);
  int64_t launched_until = 0;  // the fused path: the steps its launches have enqueued
  GraphedStep step(run);
  Checkpoints checkpoints(run);
  NanCheck nan_check(run, checkpoints);
  StepTimes step_times;
  Validation validation;
  Progress progress(options);
  Breakdown breakdown;
  MemoryRecord memory;
  std::vector<FitObserver*> observers{&step_times, &validation, &progress, &breakdown, &memory};
  if (options.check_numerics) observers.insert(observers.begin(), &nan_check);
  // Keras' habits (nn/callbacks.h), each only where asked for: a run without them has no more
  // observers than before, so its steps do no more.
  std::vector<std::unique_ptr<FitObserver>> asked;
  if (options.lr_schedule.kind != LearningRateSchedule::Kind::None) {
    asked.push_back(std::make_unique<LearningRateScheduler>(run));
  }
  if (!options.log_csv.empty()) asked.push_back(std::make_unique<CsvLogger>(run));
  if (!options.save_best.path.empty()) asked.push_back(std::make_unique<BestModelSaver>(run));
  if (options.early_stopping) asked.push_back(std::make_unique<EarlyStopper>(run));
  if (!options.callbacks.empty()) asked.push_back(std::make_unique<UserCallbacks>(run));
  for (const auto& o : asked) observers.push_back(o.get());
  // The signal to stop on, if any: in a data-parallel run the one all ranks agreed on, so that
  // every rank stops after the same step (`now`: this step's; else one from two steps ago,
  // core/data_parallel.h's Communicator::agree_on_stop says why).
  const auto stop_signal = [&](bool now) {
    const int mine = stop_requested(options);
    return options.communicator ? options.communicator->agree_on_stop(mine, now) : mine;
  };
  // fit returns here, whether the run ended, stopped early or was interrupted.
  const auto finished = [&] {
    for (FitObserver* o : observers) o->train_finished(run);
    return run.history;
  };
  const auto stopped = [&](int signal, int epoch, int64_t done) {
    run.history.interrupted_by = signal;
    run.history.stopped_epoch = epoch;
    run.history.stopped_step = done;
    return finished();
  };

  for (int epoch = resume ? resume->epoch : 1; epoch <= options.epochs; ++epoch) {
    NvtxRange epoch_range("epoch");
    run.start_epoch(epoch, resume);
    checkpoints.before_epoch();
    source.start_epoch(epoch, run.steps, batch, run.first_step);
    for (FitObserver* o : observers) o->epoch_started(run);
    const double learning_rate = optimizer().learning_rate();  // a schedule's, if one runs
    int64_t steps_run = run.steps;  // fewer where a callback stops the run mid-epoch
    launched_until = 0;
    run.start_clock();
    for (int64_t s = run.first_step; s < run.steps; ++s) {
      const int64_t first = s * batch;
      const int64_t count = std::min(batch, n - first);
      // --breakdown: the device's time goes to the batch's part, then to the step's; a
      // resident set's batch is part of the step, and consecutive steps extend one span.
      if (fused_steps) {
        // A launch runs this step and the next ones; the sums count its samples at once.
        if (s >= launched_until) {
          run.clock.enter(BreakdownClock::Part::Compute);
          launched_until = fused_steps->launch(s);
        }
      } else {
        run.clock.enter(run.clock.batch_part());
        const Tensor index = source.next(first, count);
        run.clock.enter(BreakdownClock::Part::Compute);
        step.run(index, count == run.full_batch);
        run.running.samples += count;
      }
      for (FitObserver* o : observers) o->step_finished(run, s + 1, count);
      // Stopped mid-epoch: the checkpoint goes on from the next step of this epoch. (At the
      // epoch's last step, the epoch is finished first, validation included.) The fused path
      // stops where a launch ends.
      const int signal = stop_signal(false);
      if (signal != 0 && s + 1 < run.steps && (!fused_steps || s + 1 == launched_until)) {
        progress.interrupted();
        checkpoints.save_mid_epoch(s + 1);
        return stopped(signal, epoch, s + 1);
      }
      if (run.stop_training) {  // a callback's on_batch_end: the epoch ends with this step
        steps_run = s + 1;
        break;
      }
    }
    run.clock.leave();
    device_services(device()).synchronize();
    EpochRecord record;
    record.epoch = epoch;
    record.seconds = run.epoch_seconds();
    record.data_wait_seconds = run.earlier_wait + source.wait_seconds();
    record.steps = steps_run;
    record.learning_rate = learning_rate;
    double metric = NOT_MEASURED;
    run.sum_over_ranks();
    std::tie(record.loss, metric) = run.read_means();
    // A regression loss's metric goes to mae, the others' to accuracy; each NaN otherwise.
    const bool mae = run.metric == Metric::MeanAbsoluteError;
    record.accuracy = mae ? NOT_MEASURED : metric;
    record.mae = mae ? metric : NOT_MEASURED;
    for (FitObserver* o : observers) o->epoch_finished(run, record);
    run.history.epochs.push_back(record);
    const int signal = stop_signal(true);
    checkpoints.after_epoch(signal);
    if (signal != 0) return stopped(signal, epoch + 1, 0);
    if (run.stop_training) {
      run.history.stopped_early = true;
      break;
    }
  }
  return finished();
}

EvalResult Sequential::evaluate(const Dataset& data, const EvalOptions& options) {
  ENGINE_CHECK(compiled_, "evaluate() needs a compiled model (call compile())");
  ENGINE_CHECK(options.batch_size >= 1, "batch size must be at least 1, got ", options.batch_size);
  check_dataset("evaluation data", data, *this, loss_);
  const int64_t n = data.size();
  ENGINE_CHECK(n >= 1, "evaluation data is empty");
  std::ostream& out = options.out ? *options.out : std::cout;
  const int64_t steps = (n + options.batch_size - 1) / options.batch_size;
  const Metric metric = metric_of(loss_, output_shape_);
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
    accumulate(running, loss_, losses, logits, y);
    running.samples += count;
    if (options.verbose && bar.due(step + 1)) {
      bar.update(step + 1, metrics_of(metric, running.loss(), running.metric(metric)));
    }
  }
  // The metric's mean goes to accuracy, or for a regression loss to mae.
  const double value = running.metric(metric);
  const bool mae = metric == Metric::MeanAbsoluteError;
  EvalResult result{running.loss(), mae ? NOT_MEASURED : value, n, bar.elapsed_seconds(),
                    mae ? value : NOT_MEASURED};
  if (options.verbose) bar.finish(metrics_of(metric, running.loss(), running.metric(metric)));
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
