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
//   compute   the training steps on the device, from a device timer before each step to one
//             after it (GPU: the "GPU busy" time; CPU: the steps themselves), the NaN check
//             included when it is on;
//   readback  the device->host reads fit makes to print: a progress redraw's loss and accuracy,
//             the epoch's final ones (each a copy that waits for the device);
//   eval      the validation pass after the steps (host clock).
// Not measured:
//   other     the remainder, wall less all of the above: host work the device did not overlap
//             (the epoch's shuffle and order upload, recording the CUDA graph, the host's work
//             between steps where the host is slower than the device, printing) and the
//             synchronisation at the epoch's end.
//
// A device timer (Backend::record_timer) is a CUDA event on the GPU: it takes its time when
// the stream reaches it, so a span is device time. One caveat: a device that has drained
// reaches a timer as soon as the host records it, and the span then also holds the wait for the
// host's next launch. A graph replay is one launch, so its span is the replay's run (plus at
// most one launch latency); a step launched op by op (the first full one, a partial last batch,
// every step under --no-graph or --sync-check) holds the device's waits between its launches:
// `replayed_steps` says how many of the epoch's steps were replays. On the CPU the timers are
// the host clock and every op is done when it returns.
//
// Each step starts with a timer of its own and its spans follow each other from there: the time
// between two steps (the host's work after a step, and the device's idling if it had drained)
// belongs to no part. While the host runs ahead of the device, as it does with graph replays,
// the next step's first timer waits in the queue right behind the last one, and the gap is nil.
//
// Cost: three timers per step, one more per progress redraw; no synchronisation anywhere: the
// timers are read once, after the epoch's own final synchronisation, and that reading
// (timer_read_seconds) is outside the epoch's wall.
// On the GPU a timer is one cudaEventRecord, ~1 us of host time that overlaps the device's work
// while the host runs ahead of it (graph replays) and adds to the step where the host is the
// bottleneck (op by op); its cost on the device is to be measured (docs/PROFILING.md).
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/backend.h"

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
  BreakdownClock(Backend& backend, bool enabled, bool input_from_host);
  // Starts the epoch's wall (host clock) and forgets every timer.
  void start_epoch();
  // A device timer now: where a span starts.
  uint64_t mark();
  // Adds the span from timer `start` to a timer now to `part`; returns the new timer, which
  // can start the next span.
  uint64_t span(Part part, uint64_t start);
  // Where a batch's span (next()) goes: input from the host, or compute.
  Part batch_part() const { return input_from_host_ ? Part::Input : Part::Compute; }
  // Call after the epoch's last device work has been waited for, its validation included:
  // takes the wall, reads every span and frees the timers. `data_wait` is the source's wait
  // in this epoch; nothing when disabled.
  std::optional<EpochBreakdown> finish(double data_wait, double eval, int64_t steps,
                                       int64_t replayed_steps);

 private:
  struct Span {
    Part part;
    uint64_t start, end;
  };
  Backend& backend_;
  bool enabled_;
  bool input_from_host_;
  std::chrono::steady_clock::time_point epoch_start_;
  std::vector<Span> spans_;
};

}  // namespace engine::nn
