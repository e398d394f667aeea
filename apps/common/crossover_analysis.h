// The arithmetic of the CPU-vs-GPU sweeps (apps/crossover, apps/matmul_sweep), kept apart from
// the timing so that a test can check it on numbers made by hand: where the GPU overtakes the
// CPU along a sweep, and what bounds a GPU step's time (the spread of repeated times: spread.h).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/common/spread.h"

namespace engine::apps {

// One size of a sweep: the CPU's time and a GPU's, in the same unit.
struct SizeTimes {
  int64_t size = 0;
  double cpu = 0.0;
  double gpu = 0.0;
};

// Where the GPU overtakes the CPU. The crossover is the smallest measured size from which the
// GPU is faster at every larger measured size: one early win followed by a loss is noise or a
// regime change, not the point where the GPU takes over.
struct Crossover {
  std::optional<int64_t> ahead_from;   // that size; none when the GPU is slower at the largest
  std::optional<int64_t> last_behind;  // the measured size just below it (the GPU not faster)
  double estimate = 0.0;  // where the two curves cross between those sizes (log-log); 0: none
  std::optional<int64_t> first_win;  // the smallest size where the GPU is faster at all
};

// `points` in increasing size. The estimate interpolates log(gpu / cpu) linearly in log(size)
// between last_behind and ahead_from, as on a log-log plot: where that ratio crosses 1.
Crossover find_crossover(const std::vector<SizeTimes>& points);

// One sentence, e.g. "the GPU is ahead from n = 512 on (the CPU is faster at 256; the curves
// cross near n = 301 by log-log interpolation)".
std::string describe(const Crossover& x, const std::string& size_name);

// The crossover's fields for a --json record (null where absent) and its sentence.
nlohmann::json to_json(const Crossover& x, const std::string& size_name);

// What bounds a GPU step's time (apps/crossover; docs/PROFILING.md explains how to read it).
enum class Regime {
  Transfer,  // copying the data between host and device takes most of the step
  Launch,    // fixed overhead per kernel (its launch, the host's work per op) does: empty
             // kernels would take about as long
  Compute,   // the kernels' own work (arithmetic or memory traffic) does
  Unknown,   // nothing to judge by (classify_regime)
};
const char* to_string(Regime regime);

// The stated rule, in this order:
//   transfer  when transfer_seconds, the part of the step that the host<->device copies and
//             their synchronisation add, exceeds everything else in the step (the rest);
//   launch    when the rest is within 2x of `launches` x `launch_floor_seconds` (the measured
//             cost of one back-to-back kernel launch), or when `removable_seconds`, what a
//             graph replay of the same kernels saves on the rest (its op-by-op time minus the
//             replay's), is at least half of it: either way at least half is fixed overhead.
//             The second test catches what the device's launch floor does not: the host's
//             own cost per op (a library's call setup, autograd's bookkeeping);
//   compute   otherwise: the kernels' own work, arithmetic or memory traffic;
//   unknown   where that cannot be judged (no launch count or floor, and no replay to compare).
Regime classify_regime(double step_seconds, double transfer_seconds, int64_t launches,
                       double launch_floor_seconds, double removable_seconds = 0.0);

// Consecutive sizes with the same regime as ranges, e.g. "launch 16-256, compute 512-4096".
std::string regime_runs(const std::vector<int64_t>& sizes, const std::vector<Regime>& regimes);

}  // namespace engine::apps
