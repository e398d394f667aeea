#include "apps/crossover/step_timing.h"

#include <chrono>

namespace engine::crossover {
namespace {

// Seconds that `steps` back-to-back calls of `step` take by `clock`.
double time_sample(Backend& backend, const std::function<void()>& step, int64_t steps, Clock clock) {
  if (clock == Clock::BackendTimers) {
    backend.reset_timers();  // the ids and events of the last sample are free again
    const uint64_t start = backend.record_timer();
    for (int64_t i = 0; i < steps; ++i) step();
    const uint64_t end = backend.record_timer();
    return backend.timer_seconds(start, end);
  }
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < steps; ++i) step();
  backend.synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

StepTimes time_steps(Backend& backend, const std::function<void()>& step, const TimingPlan& plan,
                     Clock clock) {
  step();
  backend.synchronize();
  const double one = time_sample(backend, step, 1, clock);
  StepTimes t;
  t.steps_per_sample = steps_per_sample(plan, one);
  const int samples = samples_within(plan, one * static_cast<double>(t.steps_per_sample));
  for (int s = 0; s < samples; ++s) {
    const double seconds = time_sample(backend, step, t.steps_per_sample, clock);
    t.per_step_ms.push_back(seconds * 1e3 / static_cast<double>(t.steps_per_sample));
  }
  const bool gpu = !backend.device().is_cpu();
  t.timer = clock == Clock::WallClock ? "wall clock + sync" : gpu ? "CUDA events" : "host clock";
  return t;
}

}  // namespace engine::crossover
