// What the training apps (mnist_mlp, cifar10_cnn, mnist_cnn) do around model.fit in the same
// way: put a dataset on the device, build, train, evaluate and time the model, print how a GPU
// step ran, and write the fit's part of the --json record.
#pragma once
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "apps/common/app_options.h"
#include "apps/common/app_flags.h"
#include "core/device.h"
#include "core/shape.h"
#include "datasets/mnist.h"
#include "nn/optimizers.h"
#include "nn/progress.h"
#include "nn/sequential.h"
#include "nn/training.h"

namespace engine::apps {

// The first `count` images of `images` (all of them when count < 0) on `device`:
// x (count, *sample_shape) float, y (count,) int32. sample_shape must hold rows x cols x
// channels values, e.g. {28, 28} for an MLP, {28, 28, 1} or {32, 32, 3} for a CNN (NHWC).
nn::Dataset to_dataset(const datasets::LabeledImages& images, const Shape& sample_shape,
                       Device device, int64_t count = -1);

using nn::seconds_since;  // nn/progress.h

// The median time of a training step, in microseconds.
struct MedianStep {
  double microseconds = 0.0;
  // true: over the steps after the warm-up, the median over epochs of each epoch's
  // steady_seconds / steady_steps (nn::EpochRecord), epochs without such steps left out.
  // false where no epoch has any (every epoch this process ran no longer than its warm-up):
  // then the median over epochs of seconds / steps, warm-up included, which callers must say.
  bool after_warmup = false;
};
MedianStep median_step_microseconds(const nn::History& history);

// Seconds of every epoch (training steps only, validation excluded), their median and, where
// --steps-per-epoch cut the epochs short, the whole epoch of `train_samples` they extrapolate
// to at the median time per step; then `reference` (the article's figures) in parentheses.
void print_epoch_seconds(const nn::History& history, int64_t train_samples, int64_t batch_size,
                         const std::string& reference);

// On a GPU: how the training step ran (one graph replay of N kernels, or launches one by
// one) with the median time per step after the warm-up, what the warm-up took on a line of
// its own, and the device memory the run took. Nothing on the CPU.
void print_step_report(Device device, const nn::History& history);

// Adds the fit's fields to a --json record: epochs_run (seconds, steps, loss, accuracy, memory,
// for the epochs this process ran warmup_steps, warmup_seconds, steady_steps, steady_seconds
// and learning_rate, with validation data val_loss, val_accuracy, val_seconds, and with
// --breakdown the breakdown, per epoch: apps/common/breakdown_report.h), stopped_early and
// with --early-stopping best_epoch, final_loss, median_step_us and
// median_step_after_warmup (MedianStep), graph_replay, kernels_per_step, capture_seconds,
// peak_device_bytes, system_allocations.
void record_fit(nlohmann::json& record, Device device, const nn::History& history);

// --no-graph, which sets `no_graph`: launch every kernel from the host instead of replaying one
// recorded CUDA graph per step.
void add_no_graph_flag(Flags& flags, bool& no_graph);
// --fused and --no-fused, which set `fused` (nn/fused_mlp.h): an MLP's steps in a fused kernel
// wherever one takes it, or never; without either, where a weight-stationary kernel does.
void add_fused_flags(Flags& flags, nn::FusedUse& fused);

// Refuses --epochs 0 without --load (a UsageError); with --gpus N in a process that is not a
// rank yet, launches the ranks and throws RanksFinished when they end (rank_launcher.h);
// otherwise apply_common_options, prints the "Device: " line, and in a rank connects the ranks
// and prints the "Ranks: " line; returns the device.
Device start_training(CommonOptions& options);

// What differs between the apps in train_and_report.
struct TrainingPlan {
  std::unique_ptr<nn::Optimizer> optimizer;
  nn::Loss loss = nn::Loss::SparseCategoricalCrossentropy;
  const nn::Dataset* validation = nullptr;  // validated on after every epoch; nullptr: none
  bool use_graph = true;                    // false: --no-graph
  nn::FusedUse fused = nn::FusedUse::Auto;  // --fused, --no-fused (nn/fused_mlp.h)
  int64_t eval_batch_size = 32;
  bool eval_progress = true;  // a progress bar while evaluating
  bool loss_first = false;    // "Test loss: L - test accuracy: A" instead of accuracy first
  std::string test_name = "Test";  // what the evaluated set is called in the result line
  // The article's seconds per epoch, for print_epoch_seconds; empty: no per-epoch line.
  std::string article;
};

// What the apps need after train_and_report for their --json record.
struct TrainingRun {
  nn::History history;
  nn::EvalResult result;
  double train_seconds = 0.0;  // fit, validation included
  double total_seconds = 0.0;  // fit and evaluate
};

// Checks the memory the run needs before the model exists (nn/memory_estimate.h: a refusal is
// a DeviceError, exit 2), builds `model` for samples of `sample_shape` (and prints its summary),
// loads --load's weights, compiles it with `plan.optimizer` and `plan.loss`, fits it on
// `train` for --epochs (none with --epochs 0), evaluates it on `test` and prints the test
// accuracy and loss, the seconds per epoch, the run's time, the GPU step report and with
// --breakdown where each epoch's time went; then saves --save's weights. SIGINT and SIGTERM
// are handled throughout: during fit, fit stops after the step and saves a checkpoint; after
// it, the evaluation and the saves finish, and where nothing else keeps the trained model a
// checkpoint of it is saved (--checkpoint, or <app>.ckpt); either way it throws Interrupted,
// whose one line says what was saved and how to resume.
TrainingRun train_and_report(nn::Sequential& model, const Shape& sample_shape, Device device,
                             const CommonOptions& options, const nn::Dataset& train,
                             const nn::Dataset& test, TrainingPlan plan);
// The same, on batches that `train` prepares itself (a prefetching loader).
TrainingRun train_and_report(nn::Sequential& model, const Shape& sample_shape, Device device,
                             const CommonOptions& options, nn::BatchSource& train,
                             const nn::Dataset& test, TrainingPlan plan);

// With --json: writes machine_record, dataset, the app's own `fields` (app, data, sample
// counts...), the model's parameters, record_fit and the run's test_loss, test_accuracy,
// train_seconds and total_seconds to the file, and says so. Nothing without --json.
void write_run_json(const CommonOptions& options, Device device, const nn::Sequential& model,
                    const TrainingRun& run, const nlohmann::json& fields);

}  // namespace engine::apps
