#include "apps/common/training_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <utility>
#include <vector>

#include "apps/common/app_flags.h"
#include "apps/common/breakdown_report.h"
#include "apps/common/rank_launcher.h"
#include "apps/common/spread.h"
#include "apps/common/stop_signals.h"
#include "core/device_services.h"
#include "core/error.h"
#include "core/tensor.h"
#include "nn/checkpoint.h"
#include "nn/fused_mlp.h"
#include "nn/memory_estimate.h"
#include "nn/model_file.h"
#include "nn/weights_io.h"

namespace engine::apps {

nn::Dataset to_dataset(const datasets::LabeledImages& images, const Shape& sample_shape,
                       Device device, int64_t count) {
  const int64_t per_image = images.rows * images.cols * images.channels;
  ENGINE_CHECK(numel(sample_shape) == per_image, "to_dataset: a sample of shape ",
               to_string(sample_shape), " does not hold the ", images.rows, "x", images.cols, "x",
               images.channels, " values of an image");
  if (count < 0) count = images.count;
  ENGINE_CHECK(count <= images.count, "to_dataset: asked for ", count, " images of ", images.count);
  Shape shape{count};
  shape.insert(shape.end(), sample_shape.begin(), sample_shape.end());
  if (count == images.count) {  // the whole set: no copy of the host vectors
    return {Tensor::from_vector(images.pixels, shape, device),
            Tensor::from_ints(images.labels, {count}, device)};
  }
  // The first `count`: copies of the leading parts of the host vectors.
  const std::vector<float> pixels(images.pixels.begin(), images.pixels.begin() + count * per_image);
  const std::vector<int32_t> labels(images.labels.begin(), images.labels.begin() + count);
  return {Tensor::from_vector(pixels, shape, device), Tensor::from_ints(labels, {count}, device)};
}

MedianStep median_step_microseconds(const nn::History& history) {
  std::vector<double> steady, whole;
  for (const nn::EpochRecord& e : history.epochs) {
    if (e.steady_steps > 0) {
      steady.push_back(e.steady_seconds / static_cast<double>(e.steady_steps) * 1e6);
    }
    if (e.steps > 0) whole.push_back(e.seconds / static_cast<double>(e.steps) * 1e6);
  }
  if (!steady.empty()) return {spread_of(steady).median, true};
  return {spread_of(whole).median, false};
}

namespace {
// What the median is over, said after its number.
const char* median_basis(const MedianStep& step) {
  return step.after_warmup ? "after warm-up" : "including warm-up, as no step ran after it";
}

// The warm-up's steps and seconds, over the epochs it fell in (more than one where an epoch
// has fewer steps than the warm-up).
struct Warmup {
  int64_t steps = 0;
  double seconds = 0.0;
};
Warmup warmup_of(const nn::History& history) {
  Warmup warmup;
  for (const nn::EpochRecord& e : history.epochs) {
    warmup.steps += e.warmup_steps;
    warmup.seconds += e.warmup_seconds;
  }
  return warmup;
}

// 60000 -> "60,000".
std::string grouped(int64_t n) {
  const std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out = n < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

void print_epoch_seconds(const nn::History& history, int64_t train_samples, int64_t batch_size,
                         const std::string& reference) {
  if (history.epochs.empty()) return;
  std::vector<double> seconds;
  std::printf("Seconds per epoch (training steps only):");
  for (const nn::EpochRecord& e : history.epochs) {
    std::printf(" %.3f", e.seconds);
    seconds.push_back(e.seconds);
  }
  std::printf("; median %.3f s (%s)\n", spread_of(seconds).median, reference.c_str());
  const int64_t full_steps = (train_samples + batch_size - 1) / batch_size;
  const int64_t steps = history.epochs.back().steps;
  if (steps < full_steps) {
    const MedianStep step = median_step_microseconds(history);
    std::printf(
        "Epochs cut to %lld of %lld steps: a whole epoch at the median %.3f ms/step (%s) "
        "would take about %.2f s\n",
        static_cast<long long>(steps), static_cast<long long>(full_steps),
        step.microseconds * 1e-3, median_basis(step),
        step.microseconds * 1e-6 * static_cast<double>(full_steps));
  }
}

void print_step_report(Device device, const nn::History& history) {
  if (device.is_cpu() || history.epochs.empty()) return;
  const MedianStep step = median_step_microseconds(history);
  if (history.fused) {
    std::printf("Training step: the fused MLP kernel (%s), median %.1f us/step %s\n",
                history.fused_kernel.c_str(), step.microseconds, median_basis(step));
  } else if (history.graph_replay) {
    std::printf("Training step: one CUDA graph replay of %lld kernels, median %.1f us/step %s\n",
                static_cast<long long>(history.kernels_per_step), step.microseconds,
                median_basis(step));
  } else {
    std::printf("Training step: kernels launched one by one (--no-graph, --profile or "
                "--sync-check), median %.1f us/step %s\n",
                step.microseconds, median_basis(step));
  }
  const Warmup warmup = warmup_of(history);
  if (warmup.steps > 0) {
    std::printf("Warm-up (%s the median): the first %lld steps took %.1f ms (loading the "
                "kernels and JIT-compiling any PTX, cuDNN's algorithm search with --device "
                "cudnn, the first allocations",
                step.after_warmup ? "not in" : "in", static_cast<long long>(warmup.steps),
                warmup.seconds * 1e3);
    if (history.graph_replay) {
      std::printf("; recording the CUDA graph %.1f ms of it", history.capture_seconds * 1e3);
    }
    std::printf(")\n");
  }
  const AllocatorStats memory = device_services(device).allocator().stats();
  std::printf("Device memory: peak %.1f MiB in use, %zu cudaMalloc calls in the whole run\n",
              static_cast<double>(memory.peak_bytes) / (1 << 20), memory.system_allocations);
}

void record_fit(nlohmann::json& record, Device device, const nn::History& history) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const nn::EpochRecord& e : history.epochs) {
    nlohmann::json epoch = {{"epoch", e.epoch},
                            {"seconds", e.seconds},
                            {"steps", e.steps},
                            {"loss", e.loss},
                            {"accuracy", e.accuracy},
                            {"data_wait_seconds", e.data_wait_seconds}};
    if (!std::isnan(e.mae)) epoch["mae"] = e.mae;  // a regression loss's metric
    if (!std::isnan(e.learning_rate)) epoch["learning_rate"] = e.learning_rate;
    if (e.warmup_steps > 0 || e.steady_steps > 0) {  // an epoch this process ran steps of
      epoch["warmup_steps"] = e.warmup_steps;
      epoch["warmup_seconds"] = e.warmup_seconds;
      epoch["steady_steps"] = e.steady_steps;
      epoch["steady_seconds"] = e.steady_seconds;
    }
    if (!std::isnan(e.val_loss)) {
      epoch["val_loss"] = e.val_loss;
      epoch["val_accuracy"] = e.val_accuracy;
      if (!std::isnan(e.val_mae)) epoch["val_mae"] = e.val_mae;
      epoch["val_seconds"] = e.val_seconds;
    }
    if (e.memory) epoch["memory"] = memory_json(*e.memory);
    if (e.breakdown) epoch["breakdown"] = breakdown_json(*e.breakdown);
    epochs.push_back(epoch);
  }
  record["epochs_run"] = epochs;
  record["stopped_early"] = history.stopped_early;  // --early-stopping (nn/callbacks.h)
  if (history.best_epoch > 0) record["best_epoch"] = history.best_epoch;
  record["final_loss"] =
      history.epochs.empty() ? nlohmann::json(nullptr) : nlohmann::json(history.epochs.back().loss);
  const AllocatorStats memory = device_services(device).allocator().stats();
  const MedianStep step = median_step_microseconds(history);
  record["median_step_us"] = step.microseconds;
  record["median_step_after_warmup"] = step.after_warmup;
  record["graph_replay"] = history.graph_replay;
  record["fused_mlp"] = history.fused;  // the steps ran in the fused MLP kernel (nn/fused_mlp.h)
  if (history.fused) record["fused_mlp_kernel"] = history.fused_kernel;
  record["kernels_per_step"] = history.kernels_per_step;
  record["capture_seconds"] = history.capture_seconds;
  record["peak_device_bytes"] = memory.peak_bytes;
  record["system_allocations"] = memory.system_allocations;
}

void add_no_graph_flag(Flags& flags, bool& no_graph) {
  flags.flag("--no-graph", no_graph,
             "GPU: launch every kernel of every step from the host instead of replaying one "
             "recorded CUDA graph per step (to see what the graph saves)");
}

void add_fused_flags(Flags& flags, nn::FusedUse& fused) {
  Flag on = flags.flag(
      "--fused", [&fused] { fused = nn::FusedUse::On; },
      "GPU: run the MLP's steps in a fused kernel, many steps a launch, wherever one takes the "
      "model (by default only where a weight-stationary kernel does); docs/FUSED_MLP.md");
  const Flag off = flags.flag(
      "--no-fused", [&fused] { fused = nn::FusedUse::Off; },
      "GPU: never the fused kernel: op by op, one CUDA graph replay a step");
  on.excludes(off);
}

Device start_training(CommonOptions& options) {
  if (options.epochs == 0 && options.load_path.empty()) {
    throw UsageError("--epochs 0 only makes sense with --load (evaluate a saved model)");
  }
  const ProcessRanks ranks = join_ranks(options);
  if (options.gpus > 0 && !ranks.launched) {  // the launcher: the ranks do the training
    if (backend_choice(options) == "cpu") {
      throw UsageError("--gpus needs the GPU (--gpu or --device cudnn)");
    }
    throw RanksFinished{launch_ranks(options.gpus)};
  }
  const Device device = apply_common_options(options);
  std::cout << "Device: " << device_services(device).name() << "\n";
  print_kernel_families(std::cout, device_services(device));
  if (ranks.launched) {
    connect_rank_communicator(device);  // all ranks meet here, before any data is loaded
    std::cout << "Ranks: " << ranks.world << " processes, one GPU each, gradients averaged "
              << "through NCCL (this is rank " << ranks.rank << "); batch " << options.batch_size
              << " per GPU, " << options.batch_size * ranks.world << " per step\n";
  }
  return device;
}

namespace {
nn::FitOptions fit_options(const CommonOptions& options, const TrainingPlan& plan) {
  nn::FitOptions fit;
  fit.epochs = options.epochs;
  fit.batch_size = options.batch_size;
  fit.communicator = rank_communicator();  // nullptr unless this process is a rank
  fit.bucket_bytes = static_cast<int64_t>(options.bucket_mb * (1 << 20));
  fit.steps_per_epoch = options.steps_per_epoch;
  fit.seed = options.seed;
  fit.validation = plan.validation;
  fit.use_graph = plan.use_graph;
  fit.fused = plan.fused;
  fit.breakdown = options.breakdown;
  // Keras' habits (nn/callbacks.h); --monitor's default needs validation data to mean val_loss.
  const std::string monitor =
      !options.monitor.empty() ? options.monitor : plan.validation ? "val_loss" : "loss";
  fit.log_csv = options.log_csv;
  if (options.early_stopping > 0) {
    fit.early_stopping = nn::EarlyStopping{monitor, options.early_stopping, 0.0,
                                           options.restore_best_weights};
  }
  fit.save_best.path = options.save_best_path;
  fit.save_best.monitor = monitor;
  fit.lr_schedule = parse_lr_schedule(options.lr_schedule);
  return fit;
}

// The run header's word on the fused MLP kernel (nn/fused_mlp.h): that the steps run in it, or
// why not, where --fused or --no-fused was given or a GPU could run it on this model.
void print_fused_choice(nn::Sequential& model, const nn::FitOptions& fit,
                        const nn::BatchSource& train, Device device) {
  const nn::FusedMlpLimits limits = nn::fused_mlp_limits(device);
  const nn::FusedMlpChoice choice =
      nn::choose_fused_mlp(model, fit, nn::resident_float_data(train), limits);
  // By default, a word only where a GPU could have run the kernel on this model.
  if (fit.fused == nn::FusedUse::Auto && !(choice.mlp && limits.state_bytes > 0)) return;
  if (choice.use) {
    const int64_t most = nn::FusedSteps::most_steps_a_launch(fit);
    std::printf("Training step: the fused MLP kernel (%s), %s%lld step%s a launch%s "
                "(docs/FUSED_MLP.md)\n",
                choice.kernel(), most > 1 ? "up to " : "", static_cast<long long>(most),
                most > 1 ? "s" : "", most > 1 ? "" : " (--nan-check looks after each)");
  } else {
    std::printf("Training step: op by op; not the fused MLP kernel: %s\n", choice.why_not.c_str());
  }
}

// Where a checkpoint stands: "in epoch 3 after step 17" or, at a boundary, "after epoch 2".
std::string position(int epoch, int64_t step) {
  return step > 0 ? "in epoch " + std::to_string(epoch) + " after step " + std::to_string(step)
                  : "after epoch " + std::to_string(epoch - 1);
}

// fit's options for the app's run: fit_options, the checkpoints (--checkpoint; without it, only
// a signal saves one, to a default file named after the app), the resume point, the NaN check,
// and the flag the signal handlers raise.
nn::FitOptions run_fit_options(const CommonOptions& options, const TrainingPlan& plan,
                               Device device, const nn::TrainingState* resume,
                               const std::atomic<int>& stop) {
  nn::FitOptions fit = fit_options(options, plan);
  fit.checkpoint_path =
      options.checkpoint_path.empty() ? options.app_name + ".ckpt" : options.checkpoint_path;
  fit.checkpoint_every = options.checkpoint_path.empty() ? 0 : options.checkpoint_every;
  fit.resume = resume;
  fit.check_numerics = nan_check_enabled(options, device);
  fit.stop_signal = &stop;
  return fit;
}

// fit; a run stopped by a signal ends here in Interrupted, having saved its checkpoint.
nn::History fit_or_interrupted(nn::Sequential& model, nn::BatchSource& train,
                               const nn::FitOptions& fit) {
  nn::History history = model.fit(train, fit);
  if (history.interrupted_by == 0) return history;
  const std::string where = position(history.stopped_epoch, history.stopped_step);
  throw Interrupted(history.interrupted_by,
                    "interrupted by " + signal_name(history.interrupted_by) + " " + where +
                        "; saved a checkpoint to " + fit.checkpoint_path +
                        "; resume with --resume " + fit.checkpoint_path);
}

// A signal that came after fit, once the evaluation, the report and the saves it waited for have
// run: the one line says what keeps the trained model. Where nothing does (no --save or
// --save-model, no checkpoint of the last epoch), a checkpoint of the finished run is saved first,
// so that no training is lost; resuming it with the same flags trains no more.
Interrupted interrupted_after_fit(int signal, nn::Sequential& model, const CommonOptions& options,
                                  const nn::BatchSource& train, const nn::FitOptions& fit,
                                  const nn::History& history) {
  std::string line = "interrupted by " + signal_name(signal);
  if (options.epochs == 0) {
    line += " while evaluating the loaded weights; the evaluation finished";
  } else {
    const int epochs_done = static_cast<int>(history.epochs.size());
    line += " once training had ended (" + position(epochs_done + 1, 0) +
            "); the evaluation finished";
  }
  if (!options.save_path.empty()) line += "; saved the weights to " + options.save_path;
  if (!options.save_model_path.empty()) line += "; saved the model to " + options.save_model_path;
  if (options.epochs == 0) return Interrupted(signal, line);
  const bool saved = !options.save_path.empty() || !options.save_model_path.empty();
  const bool last_epoch_saved = fit.checkpoint_every > 0 && history.checkpoint_saved;
  if (last_epoch_saved) {
    line += "; the checkpoint " + fit.checkpoint_path + " holds the trained run";
  } else if (!saved && writes_files()) {
    nn::save_checkpoint(model, nn::state_after_fit(fit, train, history), fit.checkpoint_path);
    line += "; saved a checkpoint to " + fit.checkpoint_path;
  }
  if (last_epoch_saved || !saved) line += "; resume with --resume " + fit.checkpoint_path;
  return Interrupted(signal, line);
}
}  // namespace

TrainingRun train_and_report(nn::Sequential& model, const Shape& sample_shape, Device device,
                             const CommonOptions& options, const nn::Dataset& train,
                             const nn::Dataset& test, TrainingPlan plan) {
  nn::ResidentBatches batches(train, fit_options(options, plan), device);
  return train_and_report(model, sample_shape, device, options, batches, test, std::move(plan));
}

TrainingRun train_and_report(nn::Sequential& model, const Shape& sample_shape, Device device,
                             const CommonOptions& options, nn::BatchSource& train,
                             const nn::Dataset& test, TrainingPlan plan) {
  // Ctrl-C and `kill` for the whole run, not only during fit (issue 24): fit stops after the
  // step it is in; after fit, the evaluation and the saves finish first, then the run ends in
  // Interrupted, the trained model kept (interrupted_after_fit).
  StopSignals signals;
  // Pre-flight (nn/memory_estimate.h), before the model's buffers exist: a run the device cannot
  // hold (a batch too large, or weights sized by large inputs) is refused now, with the sizes,
  // not by std::bad_alloc in build() or an out-of-memory error in the first step. A run that
  // only evaluates (--epochs 0) keeps no optimizer state, and its batch is the evaluation's.
  const bool trains = options.epochs > 0;
  const int64_t preflight_batch = trains ? std::min(options.batch_size, train.size())
                                         : std::min(plan.eval_batch_size, test.size());
  nn::preflight_training_memory(model, sample_shape, device, std::max<int64_t>(preflight_batch, 1),
                                trains ? nn::state_buffer_count(*plan.optimizer) : 0);
  model.build(sample_shape, device, options.seed);
  model.summary(std::cout);
  if (!options.load_path.empty()) {
    nn::load_weights(model, options.load_path);
    std::cout << "Loaded weights from " << options.load_path << "\n";
  }
  if (options.learning_rate > 0.0f) plan.optimizer->set_learning_rate(options.learning_rate);
  const nn::Loss plan_loss = plan.loss;
  model.compile(std::move(plan.optimizer), plan.loss);
  std::optional<nn::TrainingState> resume;
  if (!options.resume_path.empty()) {
    resume = nn::load_checkpoint(model, options.resume_path);
    std::cout << "Resuming from " << options.resume_path << " "
              << position(resume->epoch, resume->step) << "\n";
  }

  TrainingRun run;
  const nn::FitOptions fit =
      run_fit_options(options, plan, device, resume ? &*resume : nullptr, signals.received());
  const auto start = std::chrono::steady_clock::now();
  if (trains) {
    // --steps-per-epoch: say at the start how much of the set an epoch really trains.
    const int64_t batch = std::max<int64_t>(options.batch_size, 1);
    const int64_t full_steps = (train.size() + batch - 1) / batch;
    if (options.steps_per_epoch > 0 && options.steps_per_epoch < full_steps) {
      const int64_t samples = std::min(options.steps_per_epoch * batch, train.size());
      std::printf("Epochs cut to %lld of %lld steps (--steps-per-epoch): %s of %s samples an epoch\n",
                  static_cast<long long>(options.steps_per_epoch),
                  static_cast<long long>(full_steps), grouped(samples).c_str(),
                  grouped(train.size()).c_str());
    }
    print_fused_choice(model, fit, train, device);
    if (plan.validation != nullptr) {
      std::printf("Train on %lld samples, validate on %lld samples\n",
                  static_cast<long long>(train.size()),
                  static_cast<long long>(plan.validation->size()));
    }
    run.history = fit_or_interrupted(model, train, fit);
    check_ranks_agree(model, std::cout);
  }
  run.train_seconds = seconds_since(start);
  run.result = model.evaluate(test, {plan.eval_batch_size, plan.eval_progress, nullptr});
  run.total_seconds = seconds_since(start);

  const nn::EvalResult& result = run.result;
  // "Test accuracy: A - test loss: L", or loss first, or another set's name; a regression
  // loss's metric is its mean absolute error ("Test mae: M"), its accuracy NaN.
  const char* name = plan.test_name.c_str();
  std::string lower = plan.test_name;
  if (!lower.empty()) lower[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(lower[0])));
  const bool mae = nn::is_regression(plan_loss);
  const char* metric = mae ? "mae" : "accuracy";
  const double value = mae ? result.mae : result.accuracy;
  const char* samples = mae ? "samples" : "images";
  if (plan.loss_first) {
    std::printf("%s loss: %.4f - %s %s: %.4f (%lld %s)\n", name, result.loss, lower.c_str(),
                metric, value, static_cast<long long>(result.samples), samples);
  } else {
    std::printf("%s %s: %.4f - %s loss: %.4f (%lld %s)\n", name, metric, value, lower.c_str(),
                result.loss, static_cast<long long>(result.samples), samples);
  }
  if (!plan.article.empty()) {
    print_epoch_seconds(run.history, train.size(), options.batch_size, plan.article);
  }
  std::printf("Time on %s: %.2f s (%s %.2f s + evaluation %.2f s)\n", to_string(device).c_str(),
              run.total_seconds, plan.validation ? "training and validation" : "training",
              run.train_seconds, result.seconds);
  print_step_report(device, run.history);
  print_breakdown(std::cout, device, run.history);
  if (!options.save_path.empty()) {
    nn::save_weights(model, options.save_path);
    std::cout << "Saved weights to " << options.save_path << "\n";
  }
  if (!options.save_model_path.empty()) {
    nn::save_model(model, options.save_model_path);
    std::cout << "Saved the model to " << options.save_model_path << "\n";
  }
  if (const int signal = signals.received().load(); signal != 0) {
    throw interrupted_after_fit(signal, model, options, train, fit, run.history);
  }
  return run;
}

void write_run_json(const CommonOptions& options, Device device, const nn::Sequential& model,
                    const TrainingRun& run, const nlohmann::json& fields) {
  if (options.json_path.empty()) return;
  nlohmann::json record = machine_record(options, device);
  record["dataset"] = options.dataset;
  record["nan_check"] = nan_check_enabled(options, device);
  record["resumed_from"] = options.resume_path;  // "" for a run from the start
  record.update(fields);
  record["parameters"] = model.parameter_count();
  record_fit(record, device, run.history);
  record["test_loss"] = run.result.loss;
  record["test_accuracy"] = run.result.accuracy;
  if (!std::isnan(run.result.mae)) record["test_mae"] = run.result.mae;  // a regression loss's
  record["train_seconds"] = run.train_seconds;
  record["total_seconds"] = run.total_seconds;
  write_json(options.json_path, record);
  std::cout << "Wrote " << options.json_path << "\n";
}

}  // namespace engine::apps
