// The observers of fit()'s epoch loop (nn/fit_run.h), each defined in a file of its own here.
// fit() calls them in the order of this header, which is the order their output and their
// fields of the epoch's record need.
#pragma once
#include <iosfwd>
#include <memory>
#include <string>

#include "nn/fit_run.h"

namespace engine::nn {

class Checkpoints;

// The NaN check (FitOptions::check_numerics): after every step, throws if the loss or a
// gradient is NaN or infinite, naming the first such parameter and the checkpoint kept.
class NanCheck final : public FitObserver {
 public:
  NanCheck(FitRun& run, const Checkpoints& checkpoints);
  void step_finished(FitRun& run, int64_t done, int64_t count) override;

 private:
  const Checkpoints& checkpoints_;
  Tensor grad_check_;  // g . g
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

}  // namespace engine::nn
