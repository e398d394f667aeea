// --profile: where a run's time went, op by op, measured on the device and explained.
//
// enable_profiling(device) adds a hook at the dispatch point (core/dispatch.h): from then on
// every op and copy on the device is bracketed by two device timers (CUDA events on a GPU, so
// the time is the kernel's own, not the host's launch; the host clock on the CPU). A hooked
// device records no CUDA graphs (a graph replays its kernels without calling the ops), so a
// profiled GPU run launches op by op: it measures each kernel, and the step a little slower
// than a replay.
//
// print_profile() turns the timings into a table, one row per op and shape:
//   calls, total seconds, % of all op time, FLOPs and bytes per call (from the shapes:
//   core/op_cost.h), achieved GFLOP/s and GB/s, % of the measured peak, and a verdict:
//     launch-bound   the call takes under 3x the device's launch floor (MeasuredPeaks):
//                    overhead, not work, decides its time;
//     compute-bound  its FLOPs per byte exceed the device's ridge point (peak FLOP/s over
//                    peak bytes/s): % of the FLOP peak;
//     memory-bound   otherwise: % of the bandwidth peak.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/device_services.h"
#include "core/op_cost.h"

namespace engine {

// One row of the profile.
struct OpProfile {
  std::string op;     // "matmul"
  std::string shape;  // "32x784 @ 784x128"
  int64_t calls = 0;
  double seconds = 0.0;  // device time, summed over calls
  OpCost cost;           // per call
  std::string scope = {};  // the innermost ProfileScope the calls ran in ("forward"); "" if none
};

// Names what the ops called while it lives do, for --profile: each row keeps the innermost
// scope open on the calling thread (a matmul in "forward" and one in "backward" are two rows),
// the table shows it before the op ("backward: matmul") and a line sums the time per scope
// ("By scope: forward 0.012 s (31%), backward ..."). Free when nothing is profiled: two
// pointer writes. `name` must outlive the scope (a string literal).
class ProfileScope {
 public:
  explicit ProfileScope(const char* name);
  ~ProfileScope();
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  const char* outer_;
};
// The innermost open ProfileScope's name on this thread, or nullptr.
const char* current_profile_scope();

struct Profile {
  std::string device;  // the device's name
  MeasuredPeaks peaks;
  std::vector<OpProfile> ops;  // most time first
  double op_seconds = 0.0;     // sum over ops
  double wall_seconds = 0.0;   // since enable_profiling
};

// From now on, ops on `device` are timed. Takes the device's peaks from the cache, or measures
// them first (~0.1-0.5 s; core/peaks_cache.h). Call it at start-up, before other threads exist.
void enable_profiling(Device device);
bool profiling_enabled(Device device);

// Every device enable_profiling was called for.
std::vector<Device> profiled_devices();

// Waits for the device, then collects every op's timings so far.
Profile collect_profile(Device device);
// The table (at most `rows` rows, the rest summed in one line), the ops' share of the wall
// time, and how to read the verdicts.
void print_profile(std::ostream& out, const Profile& profile, size_t rows = 25);

// The verdict for one row (see the top of this file).
std::string verdict(const OpProfile& row, const MeasuredPeaks& peaks);

}  // namespace engine
