#include <cmath>

#include "core/error.h"
#include "nn/observers/observers.h"
#include "nn/sequential.h"

namespace engine::nn {

LearningRateScheduler::LearningRateScheduler(FitRun& run)
    : initial_(run.model.optimizer().learning_rate()) {
  const LearningRateSchedule& schedule = run.options.lr_schedule;
  if (schedule.kind == LearningRateSchedule::Kind::Step) {
    ENGINE_CHECK(schedule.factor > 0.0 && schedule.factor <= 1.0,
                 "learning-rate schedule: a step's factor must be in (0, 1], got ", schedule.factor);
    ENGINE_CHECK(schedule.every >= 1,
                 "learning-rate schedule: a step must come every 1 or more epochs, got ",
                 schedule.every);
  } else if (schedule.kind == LearningRateSchedule::Kind::Cosine) {
    ENGINE_CHECK(schedule.min_rate >= 0.0 && schedule.min_rate < initial_,
                 "learning-rate schedule: cosine's minimum must be at least 0 and below the "
                 "optimizer's rate ", initial_, ", got ", schedule.min_rate);
  }
}

// At the epoch's start, before its first step. A recorded CUDA graph holds the previous rate:
// GraphedStep sees the change and records the step again.
void LearningRateScheduler::epoch_started(FitRun& run) {
  const double rate = run.options.lr_schedule.rate(initial_, run.epoch, run.options.epochs);
  run.model.optimizer().set_learning_rate(static_cast<float>(rate));
}

}  // namespace engine::nn
