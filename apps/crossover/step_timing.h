// Timing a step the way apps/crossover reports it: the median time per step over samples of
// back-to-back steps, after a warm-up.
#pragma once
#include <functional>

#include "apps/crossover/workload.h"
#include "core/device_services.h"

namespace engine::crossover {

enum class Clock {
  // The device's timers (DeviceServices::make_timers, a set of time_steps' own): CUDA events on
  // the GPU, so a sample is the device's time from its first step's start to its last step's
  // end, queued without a host wait in between (the host launching ahead, as in training); the
  // host clock on the CPU, whose ops return when done.
  DeviceTimers,
  // The host's clock around the sample and a synchronize: for steps that wait for the device
  // themselves (host<->device copies), where a device timer would add nothing.
  WallClock,
};

// Runs `step` once to warm up (allocations, caches, first touch) and once alone to size the
// samples, then times plan.samples samples (fewer past the budget, TimingPlan) on the device
// of `services`.
StepTimes time_steps(DeviceServices& services, const std::function<void()>& step,
                     const TimingPlan& plan, Clock clock);

}  // namespace engine::crossover
