#include "apps/common/crossover_analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace engine::apps {

Crossover find_crossover(const std::vector<SizeTimes>& points) {
  Crossover x;
  // Walk down from the largest size while the GPU stays faster.
  size_t from = points.size();
  while (from > 0 && points[from - 1].gpu < points[from - 1].cpu) --from;
  for (const SizeTimes& p : points) {
    if (p.gpu < p.cpu) {
      x.first_win = p.size;
      break;
    }
  }
  if (from == points.size()) return x;  // slower (or equal) at the largest size
  x.ahead_from = points[from].size;
  if (from == 0) return x;  // ahead everywhere: nothing measured below to bracket a crossing
  const SizeTimes& behind = points[from - 1];
  const SizeTimes& ahead = points[from];
  x.last_behind = behind.size;
  // log(gpu / cpu) is >= 0 at `behind` and < 0 at `ahead`: its zero, linear in log(size).
  const double r0 = std::log(behind.gpu / behind.cpu), r1 = std::log(ahead.gpu / ahead.cpu);
  const double t = r0 / (r0 - r1);
  const double l0 = std::log(static_cast<double>(behind.size));
  const double l1 = std::log(static_cast<double>(ahead.size));
  x.estimate = std::exp(l0 + t * (l1 - l0));
  return x;
}

std::string describe(const Crossover& x, const std::string& size_name) {
  std::ostringstream out;
  if (!x.first_win) return "the CPU is faster at every size measured";
  if (!x.ahead_from) {
    out << "the GPU wins at " << size_name << " = " << *x.first_win
        << " but not at the largest size measured";
    return out.str();
  }
  if (!x.last_behind) {
    out << "the GPU is faster at every size measured (" << size_name << " = " << *x.ahead_from
        << " and up)";
    return out.str();
  }
  char estimate[32];
  std::snprintf(estimate, sizeof estimate, "%.3g", x.estimate);
  out << "the GPU is ahead from " << size_name << " = " << *x.ahead_from << " on (the CPU is faster at "
      << *x.last_behind << "; the curves cross near " << size_name << " = " << estimate
      << " by log-log interpolation)";
  if (*x.first_win < *x.ahead_from) {
    out << "; it also won at " << *x.first_win << " but fell behind again";
  }
  return out.str();
}

nlohmann::json to_json(const Crossover& x, const std::string& size_name) {
  auto optional = [](const std::optional<int64_t>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"ahead_from", optional(x.ahead_from)},
          {"last_behind", optional(x.last_behind)},
          {"estimate", x.last_behind ? nlohmann::json(x.estimate) : nlohmann::json(nullptr)},
          {"first_win", optional(x.first_win)},
          {"text", describe(x, size_name)}};
}

const char* to_string(Regime regime) {
  switch (regime) {
    case Regime::Transfer: return "transfer";
    case Regime::Launch: return "launch";
    case Regime::Compute: return "compute";
    case Regime::Unknown: break;
  }
  return "?";
}

Regime classify_regime(double step_seconds, double transfer_seconds, int64_t launches,
                       double launch_floor_seconds, double removable_seconds) {
  const double rest = step_seconds - transfer_seconds;
  if (transfer_seconds > rest) return Regime::Transfer;
  const bool floor_known = launches > 0 && launch_floor_seconds > 0.0;
  if (floor_known && rest <= 2.0 * static_cast<double>(launches) * launch_floor_seconds) {
    return Regime::Launch;
  }
  if (2.0 * removable_seconds >= rest && removable_seconds > 0.0) return Regime::Launch;
  return floor_known ? Regime::Compute : Regime::Unknown;
}

std::string regime_runs(const std::vector<int64_t>& sizes, const std::vector<Regime>& regimes) {
  std::string text;
  for (size_t i = 0; i < sizes.size() && i < regimes.size();) {
    size_t j = i;
    while (j + 1 < sizes.size() && j + 1 < regimes.size() && regimes[j + 1] == regimes[i]) ++j;
    if (!text.empty()) text += ", ";
    text += std::string(to_string(regimes[i])) + " " + std::to_string(sizes[i]);
    if (j > i) text += "-" + std::to_string(sizes[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace engine::apps
