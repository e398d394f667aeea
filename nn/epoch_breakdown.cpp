#include "nn/epoch_breakdown.h"

#include <algorithm>

#include "core/error.h"
#include "nn/progress.h"

namespace engine::nn {
double EpochBreakdown::measured_seconds() const {
  return data_wait_seconds + input_seconds + compute_seconds + readback_seconds + eval_seconds;
}

double EpochBreakdown::measured_fraction() const {
  return wall_seconds > 0.0 ? measured_seconds() / wall_seconds : 0.0;
}

BreakdownClock::BreakdownClock(DeviceServices& device, bool enabled, bool input_from_host)
    : timers_(device.make_timers()), enabled_(enabled), input_from_host_(input_from_host) {}

void BreakdownClock::start_epoch() {
  if (!enabled_) return;
  // Timers left from a run that stopped mid-epoch are never read: their ids are free again.
  timers_->reset();
  spans_.clear();
  open_.reset();
  epoch_start_ = std::chrono::steady_clock::now();
}

void BreakdownClock::enter(Part part) {
  if (!enabled_ || (open_ && open_->part == part)) return;
  const uint64_t now = timers_->record();
  if (open_) spans_.push_back({open_->part, open_->start, now});
  open_ = Span{part, now, 0};
}

void BreakdownClock::leave() {
  if (!enabled_ || !open_) return;
  spans_.push_back({open_->part, open_->start, timers_->record()});
  open_.reset();
}

std::optional<EpochBreakdown> BreakdownClock::finish(double data_wait, double eval, int64_t steps,
                                                     int64_t replayed_steps,
                                                     int64_t fused_steps) {
  if (!enabled_) return std::nullopt;
  ENGINE_CHECK(!open_, "BreakdownClock::finish with a span still open: call leave() first");
  EpochBreakdown b;
  b.wall_seconds = seconds_since(epoch_start_);
  const auto read_start = std::chrono::steady_clock::now();
  double parts[3] = {0.0, 0.0, 0.0};  // by Part
  // The epoch ended with a synchronisation, so no read waits for the device.
  for (const Span& s : spans_) {
    parts[static_cast<int>(s.part)] += timers_->seconds(s.start, s.end);
  }
  timers_->reset();
  spans_.clear();
  // The device idles inside next()'s spans while the source waits for data: that time is
  // `data`, not the part the spans were added to. (The source notices the device's idling by
  // polling, so its wait can fall a little short of it, never beyond the span.)
  double& batch = parts[static_cast<int>(batch_part())];
  batch = std::max(0.0, batch - data_wait);
  b.data_wait_seconds = data_wait;
  b.input_seconds = parts[static_cast<int>(Part::Input)];
  b.compute_seconds = parts[static_cast<int>(Part::Compute)];
  b.readback_seconds = parts[static_cast<int>(Part::Readback)];
  b.eval_seconds = eval;
  b.steps = steps;
  b.replayed_steps = replayed_steps;
  b.fused_steps = fused_steps;
  b.timer_read_seconds = seconds_since(read_start);
  return b;
}

}  // namespace engine::nn
