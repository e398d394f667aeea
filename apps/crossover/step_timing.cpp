#include "apps/crossover/step_timing.h"

#include <chrono>
#include <memory>

namespace engine::crossover {
namespace {

// Seconds that `steps` back-to-back calls of `step` take by `clock` (`timers` for
// Clock::DeviceTimers).
double time_sample(DeviceServices& services, DeviceTimers* timers,
                   const std::function<void()>& step, int64_t steps, Clock clock) {
  if (clock == Clock::DeviceTimers) {
    timers->reset();  // the ids and events of the last sample are free again
    const uint64_t start = timers->record();
    for (int64_t i = 0; i < steps; ++i) step();
    const uint64_t end = timers->record();
    return timers->seconds(start, end);
  }
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < steps; ++i) step();
  services.synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

StepTimes time_steps(DeviceServices& services, const std::function<void()>& step,
                     const TimingPlan& plan, Clock clock) {
  const std::unique_ptr<DeviceTimers> timers =
      clock == Clock::DeviceTimers ? services.make_timers() : nullptr;
  step();
  services.synchronize();
  const double one = time_sample(services, timers.get(), step, 1, clock);
  StepTimes t;
  t.steps_per_sample = steps_per_sample(plan, one);
  const int samples = samples_within(plan, one * static_cast<double>(t.steps_per_sample));
  for (int s = 0; s < samples; ++s) {
    const double seconds = time_sample(services, timers.get(), step, t.steps_per_sample, clock);
    t.per_step_ms.push_back(seconds * 1e3 / static_cast<double>(t.steps_per_sample));
  }
  const bool gpu = !services.device().is_cpu();
  t.timer = clock == Clock::WallClock ? "wall clock + sync" : gpu ? "CUDA events" : "host clock";
  return t;
}

}  // namespace engine::crossover
