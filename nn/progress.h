// Keras-style progress:
//   1875/1875 [==============================] - 3s 1ms/step - loss: 0.2962 - accuracy: 0.9140
// On a terminal the line is redrawn in place (with an ETA while running); otherwise only the
// finished line is written, so logs hold one line per epoch.
#pragma once
#include <chrono>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace engine::nn {

using Metrics = std::vector<std::pair<std::string, double>>;

// Seconds on the steady clock since `start`: the host-side timings of training and the apps.
double seconds_since(std::chrono::steady_clock::time_point start);

class ProgressBar {
 public:
  // `interactive`: redraw in place; defaults to whether stdout is a terminal.
  // `earlier_seconds`: what a run that stopped mid-epoch already spent on it (a resumed
  // epoch), counted into the elapsed time.
  ProgressBar(std::ostream& out, int64_t total_steps, bool interactive,
              double earlier_seconds = 0.0);
  // Whether a redraw is due (at most ~10 per second), so callers fetch metrics only then.
  bool due(int64_t step) const;
  void update(int64_t step, const Metrics& metrics);
  // Writes the final line with the total time; `extra` metrics (validation) are appended.
  void finish(const Metrics& metrics, const Metrics& extra = {});
  double elapsed_seconds() const;
  bool interactive() const { return interactive_; }

  static bool stdout_is_terminal();
  static std::string format_duration(double seconds);  // Keras' "3s", "1:05", "1:01:05"
  static std::string format_per_step(double seconds);  // "1ms/step", "250us/step"

 private:
  std::string line(int64_t step, const Metrics& metrics, bool final) const;

  std::ostream& out_;
  int64_t total_;
  bool interactive_;
  double earlier_seconds_;
  std::chrono::steady_clock::time_point start_;
  mutable std::chrono::steady_clock::time_point last_draw_;
  size_t last_width_ = 0;
};

}  // namespace engine::nn
