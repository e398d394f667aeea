// What fit()'s epoch loop (nn/training.cpp) shares with the observers that watch it
// (nn/observers/): the run's settings and state, the epoch in progress, and the hooks.
//
//   for each epoch:   epoch_started(run)
//     for each step:  batch -> train_step (a replayed CUDA graph) -> step_finished(run, done, count)
//   after the last:   epoch_finished(run, record)  (each observer fills its part of the record)
//   when fit returns: train_finished(run)
//
// The observers, one job each: progress (the Keras line), step_times (the warm-up), nan_check,
// validation, breakdown (--breakdown), memory (the soak's record), and where FitOptions asks
// for them (nn/callbacks.h) lr_schedule, csv_log, save_best, early_stopping and the user's
// callbacks; checkpoints have their own class (nn/observers/checkpoints.h), since they also
// decide where a stopped run ends.
#pragma once
#include <chrono>
#include <cstdint>
#include <utility>

#include "core/device_services.h"
#include "nn/epoch_breakdown.h"
#include "nn/progress.h"
#include "nn/train_step.h"
#include "nn/training.h"

namespace engine::nn {

class Sequential;

struct FitRun {
  FitRun(Sequential& model, BatchSource& source, const FitOptions& options);

  // ---- the run ---------------------------------------------------------------------------
  Sequential& model;
  BatchSource& source;
  const FitOptions& options;
  DeviceServices& device;
  BreakdownClock clock;     // --breakdown's device timers; does nothing without it
  RunningMetrics running;   // this epoch's loss and metric sums, on the device
  History history;
  int64_t steps = 0;        // per epoch
  int64_t full_batch = 0;   // the samples of a full batch: the steps a graph replays
  Metric metric = Metric::None;  // what the loss reports beside itself: accuracy or mae
  // source.fingerprint(), taken once where the run saves or resumes a checkpoint (0 otherwise):
  // the checkpoints record it, resume_from compares it.
  uint64_t data_fingerprint = 0;

  // Goes on from a checkpoint: its history and the source's state, after checking that it was
  // saved by a run like this one (the same seed, batch size, steps per epoch and data, and no
  // more epochs done than this run asks for); each refusal is one line naming its file.
  void resume_from(const TrainingState& saved);

  // ---- the epoch in progress ------------------------------------------------------------------
  int epoch = 0;
  int64_t first_step = 0;         // 0, or where a resumed epoch goes on
  double earlier_seconds = 0.0;   // what the stopped run had spent on a resumed epoch
  double earlier_wait = 0.0;      // ... and of that, waiting for data
  int64_t replayed_steps = 0;     // this epoch's steps that were graph replays
  int64_t fused_steps = 0;        // ... that ran in the fused MLP kernel (nn/fused_mlp.h)
  // Set by early stopping or a callback (FitControl::stop_training): fit ends the epoch after
  // the step in progress, and the run after the epoch.
  bool stop_training = false;

  // Starts epoch `epoch` (from `resume` where it is the checkpoint's epoch): the breakdown's
  // clock, the running sums (restored or zeroed), the counters.
  void start_epoch(int epoch, const TrainingState* resume);
  // Starts the epoch's clock, which `seconds` and the checkpoints read.
  void start_clock() { epoch_start_ = std::chrono::steady_clock::now(); }
  // Seconds spent on the epoch so far, a resumed run's earlier part included.
  double epoch_seconds() const { return earlier_seconds + seconds_since(epoch_start_); }
  // The running means (loss, metric: accuracy or mae), read from the device as --breakdown's
  // readback. In a data-parallel run, this rank's, until sum_over_ranks.
  std::pair<double, double> read_means();
  // In a data-parallel run, makes the running sums those of all ranks: every rank calls it at
  // the same point (the epoch's end, a stop), never only one of them (a progress redraw).
  void sum_over_ranks();

 private:
  std::chrono::steady_clock::time_point epoch_start_;
};

// Metrics as the progress line shows them: the loss, then the metric's value under its name
// ("accuracy", "mae"; a NaN value is left out).
Metrics metrics_of(Metric metric, double loss, double value);

// The steps each epoch of `samples` runs: options.steps_per_epoch, at most a pass over them, or
// a pass when it is 0 (the last batch may be partial).
int64_t steps_per_epoch(const FitOptions& options, int64_t samples);

class FitObserver {
 public:
  virtual ~FitObserver() = default;
  // After the source has started the epoch, before its first step.
  virtual void epoch_started(FitRun& run) { (void)run; }
  // After step `done` (1-based) of the epoch, which trained on `count` samples.
  virtual void step_finished(FitRun& run, int64_t done, int64_t count) {
    (void)run, (void)done, (void)count;
  }
  // After the epoch's device work was waited for and its loss and metric read into `record`;
  // each observer adds its part, in the order fit() lists them.
  virtual void epoch_finished(FitRun& run, EpochRecord& record) { (void)run, (void)record; }
  // When fit returns (not when it throws): after the last epoch, a stop, or a signal
  // (run.history.interrupted_by).
  virtual void train_finished(FitRun& run) { (void)run; }
};

}  // namespace engine::nn
