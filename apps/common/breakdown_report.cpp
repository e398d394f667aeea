#include "apps/common/breakdown_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace engine::apps {
namespace {

constexpr size_t PARTS = 6;
constexpr std::array<char, PARTS> BAR_CHARS = {'~', '>', '#', '<', '=', '.'};
constexpr std::array<const char*, PARTS> GPU_NAMES = {"data", "h2d", "gpu", "d2h", "eval", "other"};
constexpr std::array<const char*, PARTS> CPU_NAMES = {"data",  "input", "compute",
                                                      "reads", "eval",  "other"};

// The parts in the line's order; the remainder last.
std::array<double, PARTS> parts_of(const nn::EpochBreakdown& b) {
  return {b.data_wait_seconds, b.input_seconds,  b.compute_seconds,
          b.readback_seconds,  b.eval_seconds,   b.other_seconds()};
}

void add(nn::EpochBreakdown& sum, const nn::EpochBreakdown& b) {
  sum.wall_seconds += b.wall_seconds;
  sum.data_wait_seconds += b.data_wait_seconds;
  sum.input_seconds += b.input_seconds;
  sum.compute_seconds += b.compute_seconds;
  sum.readback_seconds += b.readback_seconds;
  sum.eval_seconds += b.eval_seconds;
  sum.steps += b.steps;
  sum.replayed_steps += b.replayed_steps;
  sum.fused_steps += b.fused_steps;
  sum.timer_read_seconds += b.timer_read_seconds;
}

double mib(size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace

std::string breakdown_bar(const nn::EpochBreakdown& b, int width) {
  std::array<double, PARTS> share = parts_of(b);
  double total = 0.0;
  for (double& s : share) total += (s = std::max(0.0, s));
  if (width <= 0) return "";
  if (total <= 0.0) return std::string(static_cast<size_t>(width), BAR_CHARS.back());
  // Largest remainders: every part gets the whole characters of its quota, then the parts with
  // the largest fractions left get one more each until the width is full (ties: earlier part).
  std::array<int, PARTS> chars{};
  std::array<double, PARTS> fraction{};
  int given = 0;
  for (size_t i = 0; i < PARTS; ++i) {
    const double quota = share[i] / total * width;
    chars[i] = static_cast<int>(std::floor(quota));
    fraction[i] = quota - chars[i];
    given += chars[i];
  }
  for (; given < width; ++given) {
    const size_t i = static_cast<size_t>(
        std::max_element(fraction.begin(), fraction.end()) - fraction.begin());
    ++chars[i];
    fraction[i] = -1.0;
  }
  std::string bar;
  for (size_t i = 0; i < PARTS; ++i) bar.append(static_cast<size_t>(chars[i]), BAR_CHARS[i]);
  return bar;
}

std::string breakdown_line(const nn::EpochBreakdown& b, bool gpu) {
  const auto& names = gpu ? GPU_NAMES : CPU_NAMES;
  const std::array<double, PARTS> parts = parts_of(b);
  char text[64];
  std::snprintf(text, sizeof text, "%.3f s =", b.wall_seconds);
  std::string line = text;
  for (size_t i = 0; i < PARTS; ++i) {
    std::snprintf(text, sizeof text, "%s %s %.3f", i ? " |" : "", names[i], parts[i]);
    line += text;
  }
  std::snprintf(text, sizeof text, "] measured %.1f%%", 100.0 * b.measured_fraction());
  return line + " [" + breakdown_bar(b) + text;
}

void print_breakdown(std::ostream& out, Device device, const nn::History& history) {
  const bool gpu = !device.is_cpu();
  const auto& names = gpu ? GPU_NAMES : CPU_NAMES;
  nn::EpochBreakdown sum;
  int epochs = 0;
  std::string lines;
  for (const nn::EpochRecord& e : history.epochs) {
    if (!e.breakdown) continue;
    char label[32];
    std::snprintf(label, sizeof label, "epoch %2d: ", e.epoch);
    lines += label + breakdown_line(*e.breakdown, gpu) + "\n";
    add(sum, *e.breakdown);
    ++epochs;
  }
  if (epochs == 0) return;
  out << "Where each epoch's time went (--breakdown): " << names[0] << ", " << names[1] << ", "
      << names[2] << ", " << names[3] << " and " << names[4]
      << " are measured (device timers; data, eval and the wall on the host's clock); other is "
         "the remainder, not measured\n"
      << "  bar: ~ " << names[0] << "  > " << names[1] << "  # " << names[2] << "  < "
      << names[3] << "  = " << names[4] << "  . " << names[5] << "\n"
      << lines << "all " << epochs << " epochs: " << breakdown_line(sum, gpu) << "\n";
  if (sum.fused_steps > 0) {
    out << "  " << sum.fused_steps << " of " << sum.steps
        << " steps ran in the fused MLP kernel, many a launch: its phases, with "
           "ENGINE_FUSED_MLP_PHASES=1 (docs/FUSED_MLP.md)\n";
  }
  const int64_t op_by_op = sum.steps - sum.replayed_steps - sum.fused_steps;
  if (gpu && op_by_op > 0) {
    out << "  " << op_by_op << " of " << sum.steps
        << " steps ran op by op (the first full one, partial batches, --no-graph, "
           "--sync-check): their gpu time also holds the device's waits between launches\n";
  }
  char text[160];
  std::snprintf(text, sizeof text,
                "  reading the timers took %.3f s in all, after each epoch (outside its wall)\n",
                sum.timer_read_seconds);
  out << text;

  const nn::EpochRecord* first = nullptr;
  const nn::EpochRecord* last = nullptr;
  for (const nn::EpochRecord& e : history.epochs) {
    if (!e.memory) continue;
    if (!first) first = &e;
    last = &e;
  }
  if (!first) return;
  std::snprintf(text, sizeof text,
                "Memory after epoch %d -> %d: host RSS %.1f -> %.1f MiB; allocator in use %.1f -> "
                "%.1f MiB, reserved %.1f -> %.1f MiB\n",
                first->epoch, last->epoch, mib(first->memory->host_rss_bytes),
                mib(last->memory->host_rss_bytes), mib(first->memory->allocator_in_use_bytes),
                mib(last->memory->allocator_in_use_bytes),
                mib(first->memory->allocator_reserved_bytes),
                mib(last->memory->allocator_reserved_bytes));
  out << text;
}

nlohmann::json breakdown_json(const nn::EpochBreakdown& b) {
  return {{"wall_seconds", b.wall_seconds},
          {"data_wait_seconds", b.data_wait_seconds},
          {"input_seconds", b.input_seconds},
          {"compute_seconds", b.compute_seconds},
          {"readback_seconds", b.readback_seconds},
          {"eval_seconds", b.eval_seconds},
          {"other_seconds", b.other_seconds()},
          {"measured_fraction", b.measured_fraction()},
          {"steps", b.steps},
          {"replayed_steps", b.replayed_steps},
          {"fused_steps", b.fused_steps},
          {"timer_read_seconds", b.timer_read_seconds}};
}

nlohmann::json memory_json(const nn::EpochMemory& m) {
  return {{"host_rss_bytes", m.host_rss_bytes},
          {"allocator_in_use_bytes", m.allocator_in_use_bytes},
          {"allocator_reserved_bytes", m.allocator_reserved_bytes}};
}

}  // namespace engine::apps
