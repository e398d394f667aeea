#include "nn/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ostream>

namespace engine::nn {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
namespace {
constexpr int BAR_WIDTH = 30;
constexpr double REDRAW_SECONDS = 0.1;

double seconds_between(std::chrono::steady_clock::time_point a,
                       std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
}  // namespace

ProgressBar::ProgressBar(std::ostream& out, int64_t total_steps, bool interactive,
                         double earlier_seconds)
    : out_(out),
      total_(total_steps),
      interactive_(interactive),
      earlier_seconds_(earlier_seconds),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_ - std::chrono::seconds(1)) {}

bool ProgressBar::stdout_is_terminal() { return isatty(STDOUT_FILENO) == 1; }

double ProgressBar::elapsed_seconds() const {
  return earlier_seconds_ + seconds_between(start_, std::chrono::steady_clock::now());
}

bool ProgressBar::due(int64_t step) const {
  if (!interactive_) return false;
  return step == 1 || seconds_between(last_draw_, std::chrono::steady_clock::now()) >= REDRAW_SECONDS;
}

std::string ProgressBar::format_duration(double seconds) {
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s % 3600) / 60, s % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lds", s);
  }
  return buf;
}

std::string ProgressBar::format_per_step(double seconds) {
  char buf[32];
  if (seconds >= 1.0) {
    std::snprintf(buf, sizeof buf, "%.0fs/step", seconds);
  } else if (seconds >= 1e-3) {
    std::snprintf(buf, sizeof buf, "%.0fms/step", seconds * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0fus/step", seconds * 1e6);
  }
  return buf;
}

std::string ProgressBar::line(int64_t step, const Metrics& metrics, bool final) const {
  const int digits = static_cast<int>(std::to_string(total_).size());
  char count[64];
  std::snprintf(count, sizeof count, "%*lld/%lld", digits, static_cast<long long>(step),
                static_cast<long long>(total_));
  const int64_t filled = total_ > 0 ? step * BAR_WIDTH / total_ : BAR_WIDTH;
  std::string bar(static_cast<size_t>(BAR_WIDTH), '.');
  for (int64_t i = 0; i < filled && i < BAR_WIDTH; ++i) bar[static_cast<size_t>(i)] = '=';
  if (filled < BAR_WIDTH && filled > 0) bar[static_cast<size_t>(filled - 1)] = '>';
  std::string text = std::string(count) + " [" + bar + "]";
  const double elapsed = elapsed_seconds();
  if (final) {
    text += " - " + format_duration(elapsed) + " " +
            format_per_step(step > 0 ? elapsed / static_cast<double>(step) : 0.0);
  } else {
    const double eta = step > 0 ? elapsed / static_cast<double>(step) * static_cast<double>(total_ - step) : 0.0;
    text += " - ETA: " + format_duration(eta);
  }
  for (const auto& [name, value] : metrics) {
    if (std::isnan(value)) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, " - %s: %.4f", name.c_str(), value);
    text += buf;
  }
  return text;
}

void ProgressBar::update(int64_t step, const Metrics& metrics) {
  if (!interactive_) return;
  last_draw_ = std::chrono::steady_clock::now();
  const std::string text = line(step, metrics, false);
  // Pad with spaces so a shorter line fully covers the previous one.
  out_ << '\r' << text << std::string(last_width_ > text.size() ? last_width_ - text.size() : 0, ' ')
       << std::flush;
  last_width_ = text.size();
}

void ProgressBar::finish(const Metrics& metrics, const Metrics& extra) {
  Metrics all = metrics;
  all.insert(all.end(), extra.begin(), extra.end());
  const std::string text = line(total_, all, true);
  if (interactive_) out_ << '\r';
  out_ << text << std::string(last_width_ > text.size() ? last_width_ - text.size() : 0, ' ')
       << '\n'
       << std::flush;
}

}  // namespace engine::nn
