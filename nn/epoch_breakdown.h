// --breakdown: where an epoch's wall time went, as parts that add up to it:
//
//   wall = data + input + compute + readback + eval + other
//
// Measured (each from its own clock, each a disjoint stretch of the epoch):
//   data      waiting for data: the batch source's own count of the time the device sat idle
//             for want of input (BatchSource::wait_seconds, host clock);
//   input     putting each step's batch on the device where the source copies it from the host
//             (a loader: its host->device copies, and its augmentation on the device): the span
//             of BatchSource::next() between two device timers, less `data`, which the device
//             spends idle inside that span. A source that only picks rows already on the device
//             (ResidentBatches' index copy, a device-to-device copy) counts that span as compute;
//   compute   the training steps on the device, from a device timer before a step to one after
//             it or after the last of a run of steps (GPU: the "GPU busy" time; CPU: the steps
//             themselves), the NaN check included when it is on;
//   readback  the device->host reads fit makes to print: a progress redraw's loss and accuracy,
//             the epoch's final ones (each a copy that waits for the device);
//   eval      the validation pass after the steps (host clock).
// Not measured:
//   other     the remainder, wall less all of the above: host work the device did not overlap
//             (the epoch's shuffle and order upload, recording the CUDA graph, the host's work
//             after a read until its next launch, printing) and the synchronisation at the
//             epoch's end.
//
// A device timer (DeviceTimers::record) is a CUDA event on the GPU: it takes its time when
// the stream reaches it, so a span is device time. On the CPU the timers are the host clock and
// every op is done when it returns.
//
// Spans close only where the part changes. fit() says which part the device's time goes to
// from now on (enter) or that it goes to none (leave: before host work the device waits for,
// such as recording the CUDA graph, and after a read, which drains the device); a timer is
// recorded only at such a change. A resident data set's batch is part of the step, so an epoch
// of graph replays is one `compute` span from its first step to its last (a few timers an epoch,
// not three a step: each cudaEventRecord between two replays costs the device ~2.3 us, measured
// on an H100, docs/PROFILING.md), and the spans tile the device's timeline while the host runs
// ahead of it. A source that copies from the host alternates input and compute: two timers a
// step.
// One caveat: a device that has drained reaches a timer as soon as the host records it, and a
// span then also holds the device's waits for the host's launches. A graph replay is one launch;
// a step launched op by op (the first full one, a partial last batch, every step under
// --no-graph or --sync-check) holds the device's waits between its launches, and between it and
// the next step: `replayed_steps` says how many of the epoch's steps were replays. The fused
// MLP kernel's launches (`fused_steps`) are one span too, their steps the kernel's alone.
//
// No synchronisation anywhere: the timers are read once, after the epoch's own final
// synchronisation, and that reading (timer_read_seconds) is outside the epoch's wall.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/device_services.h"

namespace engine::nn {

struct EpochBreakdown {
  double wall_seconds = 0.0;  // host clock: the epoch's start to the end of its validation
  double data_wait_seconds = 0.0;
  double input_seconds = 0.0;
  double compute_seconds = 0.0;
  double readback_seconds = 0.0;
  double eval_seconds = 0.0;
  int64_t steps = 0;           // steps this process ran in the epoch
  int64_t replayed_steps = 0;  // of them, CUDA graph replays
  int64_t fused_steps = 0;     // ... or in the fused MLP kernel (many steps a launch)
  double timer_read_seconds = 0.0;  // reading the timers, after the epoch: not in wall_seconds

  // The named parts, all measured.
  double measured_seconds() const;
  // The remainder: wall less the measured parts (not measured itself).
  double other_seconds() const { return wall_seconds - measured_seconds(); }
  double measured_fraction() const;  // of the wall; 0 for an empty wall
};

// fit()'s stopwatch for one epoch at a time. Disabled, every call does nothing.
class BreakdownClock {
 public:
  enum class Part { Input, Compute, Readback };

  // `input_from_host`: BatchSource::copies_from_host(), which decides where next()'s span goes.
  BreakdownClock(DeviceServices& device, bool enabled, bool input_from_host);
  // Starts the epoch's wall (host clock) and forgets every timer.
  void start_epoch();
  // The device's time goes to `part` from now on: closes the open span at a timer now and opens
  // one for `part`; records nothing when `part` is the one open.
  void enter(Part part);
  // The device's time goes to no part from now on: closes the open span, if any.
  void leave();
  // Where a batch's span (next()) goes: input from the host, or compute.
  Part batch_part() const { return input_from_host_ ? Part::Input : Part::Compute; }
  // Call after the epoch's last device work has been waited for, its validation included, and
  // after leave(): takes the wall, reads every span and frees the timers. `data_wait` is the
  // source's wait in this epoch; nothing when disabled.
  std::optional<EpochBreakdown> finish(double data_wait, double eval, int64_t steps,
                                       int64_t replayed_steps, int64_t fused_steps);

 private:
  struct Span {
    Part part;
    uint64_t start, end;
  };
  std::unique_ptr<DeviceTimers> timers_;  // its own (DeviceServices::make_timers)
  bool enabled_;
  bool input_from_host_;
  std::chrono::steady_clock::time_point epoch_start_;
  std::vector<Span> spans_;
  std::optional<Span> open_;  // its end is not recorded yet
};

}  // namespace engine::nn
