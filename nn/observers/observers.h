// The observers of fit()'s epoch loop (nn/fit_run.h), each defined in a file of its own here.
// fit() calls them in the order of this header, which is the order their output and their
// fields of the epoch's record need.
#pragma once
#include <fstream>
#include <iosfwd>
#include <memory>
#include <string>

#include "nn/fit_run.h"

namespace engine::nn {

class Checkpoints;

// The NaN check (FitOptions::check_numerics): after every step, throws if the loss or a
// gradient is NaN or infinite (in the fused MLP kernel, which keeps no gradients: the loss or
// a weight), and at the end of each epoch (or of a run stopped mid-epoch) if a weight is,
// naming the first such parameter and the checkpoint kept.
class NanCheck final : public FitObserver {
 public:
  NanCheck(FitRun& run, const Checkpoints& checkpoints);
  void step_finished(FitRun& run, int64_t done, int64_t count) override;
  // The weights after the epoch's (or a stopped run's) last update, which no step checks.
  void epoch_finished(FitRun& run, EpochRecord& record) override;
  void train_finished(FitRun& run) override;

 private:
  void check_weights(FitRun& run, int64_t done);
  void check_fused_step(FitRun& run, int64_t done);
  const Checkpoints& checkpoints_;
  Tensor grad_check_;  // g . g, or w . w
};

// The warm-up (the process's first two full steps: kernel loading and JIT, cuDNN's search,
// the graph's recording) timed apart from the steady steps, for an honest time per step.
class StepTimes final : public FitObserver {
 public:
  void epoch_started(FitRun& run) override;
  void step_finished(FitRun& run, int64_t done, int64_t count) override;
  void epoch_finished(FitRun& run, EpochRecord& record) override;

 private:
  int64_t warmup_full_steps_ = 0;  // of the run, across epochs
  int64_t warmup_steps_ = 0;       // of this epoch
  double steady_start_ = 0.0;      // where this epoch's steady part starts, in epoch seconds
};

// Validation after each epoch (FitOptions::validation).
class Validation final : public FitObserver {
 public:
  void epoch_finished(FitRun& run, EpochRecord& record) override;
};

// The Keras progress line: "Epoch 3/10", the bar, the epoch's final line with validation.
class Progress final : public FitObserver {
 public:
  explicit Progress(const FitOptions& options);
  void epoch_started(FitRun& run) override;
  void step_finished(FitRun& run, int64_t done, int64_t count) override;
  void epoch_finished(FitRun& run, EpochRecord& record) override;
  // A stop between steps: ends a line drawn in place.
  void interrupted();

 private:
  std::ostream& out_;
  bool verbose_;
  std::unique_ptr<ProgressBar> bar_;
};

// --breakdown: where the epoch's time went (nn/epoch_breakdown.h), after its validation.
class Breakdown final : public FitObserver {
 public:
  void epoch_finished(FitRun& run, EpochRecord& record) override;
};

// The memory after each epoch (host resident set, the device allocator's bytes).
class MemoryRecord final : public FitObserver {
 public:
  void epoch_finished(FitRun& run, EpochRecord& record) override;
};

// ---- Keras' habits (nn/callbacks.h): fit() adds each only where FitOptions asks for it ------

// FitOptions::lr_schedule: sets the optimizer's rate at each epoch's start, from its rate
// when fit started.
class LearningRateScheduler final : public FitObserver {
 public:
  explicit LearningRateScheduler(FitRun& run);
  void epoch_started(FitRun& run) override;

 private:
  double initial_;  // lr0
};

// FitOptions::log_csv: a row per epoch (Keras' CSVLogger), flushed as it is written.
class CsvLogger final : public FitObserver {
 public:
  // Starts the file: its header, or on a resumed run the rows of the epochs the checkpoint
  // holds, to append to.
  explicit CsvLogger(FitRun& run);
  void epoch_finished(FitRun& run, EpochRecord& record) override;

 private:
  std::string path_;
  std::string header_;
  bool schedule_;  // an lr column
  std::ofstream file_;
};

// The best value of a monitored metric so far (nn/callbacks.h's monitored_value), for early
// stopping and saving the best model. On a resumed run, its users show it the checkpoint's
// records first (a value those do not keep, such as mae, is NaN there and left out).
class Monitor {
 public:
  // Checks `name` and that this run measures it (`who` uses it: "early stopping").
  Monitor(const FitRun& run, std::string name, double min_delta, const char* who);
  // Whether the epoch's value beats the best by more than min_delta; it is then the best. A
  // NaN (not measured, diverged) never does.
  bool improved(const EpochRecord& record);
  const std::string& name() const { return name_; }
  double best() const { return best_; }
  int best_epoch() const { return best_epoch_; }  // 0: none yet

 private:
  std::string name_;
  double min_delta_;
  bool lower_is_better_;
  double best_;
  int best_epoch_ = 0;
};

// FitOptions::save_best: the model (or its weights) whenever its monitor improves.
class BestModelSaver final : public FitObserver {
 public:
  explicit BestModelSaver(FitRun& run);
  void epoch_finished(FitRun& run, EpochRecord& record) override;

 private:
  Monitor monitor_;
};

// FitOptions::early_stopping: stops the run once its monitor stopped improving for `patience`
// epochs; with restore_best_weights, ends it with the best epoch's weights (a copy on the
// device, taken at each improvement).
class EarlyStopper final : public FitObserver {
 public:
  explicit EarlyStopper(FitRun& run);
  void epoch_finished(FitRun& run, EpochRecord& record) override;
  void train_finished(FitRun& run) override;

 private:
  EarlyStopping settings_;
  Monitor monitor_;
  int wait_ = 0;           // epochs since the last improvement
  bool stopped_ = false;   // whether this observer stopped the run
  Tensor best_weights_;    // a copy of the parameters, with restore_best_weights
  int weights_epoch_ = 0;  // the epoch best_weights_ holds (0: none)
};

// FitOptions::callbacks: the user's hooks, in the list's order, after fit's own observers.
class UserCallbacks final : public FitObserver {
 public:
  explicit UserCallbacks(FitRun& run);
  void epoch_started(FitRun& run) override;
  void step_finished(FitRun& run, int64_t done, int64_t count) override;
  void epoch_finished(FitRun& run, EpochRecord& record) override;
  void train_finished(FitRun& run) override;

 private:
  FitControl control_;
};

// Where fit's own observers print (FitOptions::out, std::cout when null), or nullptr when
// FitOptions::verbose is off.
std::ostream* fit_output(const FitOptions& options);
// A monitored value as the messages show it: 4 decimals, or 4 significant digits below 0.001.
std::string format_monitored(double value);

}  // namespace engine::nn
