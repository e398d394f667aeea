#include "nn/observers/observers.h"

namespace engine::nn {

// The warm-up: the steps a process runs first, up to and including its second full-batch step.
// The first full step runs op by op and pays the run's one-off costs (loading the kernels and
// JIT-compiling any PTX, cuDNN's algorithm search, the allocator's first allocations, the
// optimizer's state); the second is recorded as a CUDA graph and replayed for the first time
// (without a graph, on the CPU or with --no-graph, it runs op by op again, on warm caches).
// The steps after it are the steady state that a median time per step describes.
constexpr int64_t WARMUP_FULL_STEPS = 2;

void StepTimes::epoch_started(FitRun& run) {
  warmup_steps_ = 0;
  steady_start_ = run.earlier_seconds;  // at the epoch's start, unless the warm-up falls in it
}

void StepTimes::step_finished(FitRun& run, int64_t done, int64_t count) {
  (void)done;
  if (warmup_full_steps_ >= WARMUP_FULL_STEPS) return;
  ++warmup_steps_;
  if (count == run.full_batch) ++warmup_full_steps_;
  if (warmup_full_steps_ == WARMUP_FULL_STEPS) {
    // The warm-up's time must hold its device work, not hand it to the first steady steps:
    // fit's one synchronisation for it, once a run. The wait drains the device, as a read
    // does, so the breakdown's span closes first.
    run.clock.leave();
    run.device.synchronize();
    steady_start_ = run.epoch_seconds();
  }
}

void StepTimes::epoch_finished(FitRun& run, EpochRecord& record) {
  record.steady_steps = record.steps - run.first_step - warmup_steps_;
  // An epoch with no step after the warm-up is warm-up to its end, its final wait included.
  if (record.steady_steps == 0) steady_start_ = record.seconds;
  record.warmup_steps = warmup_steps_;
  record.warmup_seconds = steady_start_ - run.earlier_seconds;
  record.steady_seconds = record.seconds - steady_start_;
}

}  // namespace engine::nn
