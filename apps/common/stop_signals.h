// Ctrl-C (SIGINT) and `kill` (SIGTERM) during a training app's run: instead of dying mid-step,
// the run finishes the step it is in, saves a checkpoint and says how to resume (fit() checks
// the flag after every step); after fit, during the evaluation or the saves, it finishes them
// and keeps the trained model (apps/common/training_report.cpp, train_and_report, which holds
// the handlers from the model's build to its last save).
#pragma once
#include <atomic>
#include <csignal>
#include <string>

namespace engine::apps {

// Installs handlers for SIGINT and SIGTERM for its lifetime (one at a time per process) and
// restores the previous ones at the end; a signal the process was started with ignored stays
// ignored (a shell starts its background jobs with SIGINT ignored). A handler only stores the
// signal's number in an atomic flag (nothing else is safe in a handler) and puts the default
// action back, so a second Ctrl-C stops the process at once; the atomic file writes keep the
// last checkpoint whole even then.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The signal received, 0 while none was.
  const std::atomic<int>& received() const;

 private:
  struct sigaction previous_int_, previous_term_;
};

// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int signal);

}  // namespace engine::apps
