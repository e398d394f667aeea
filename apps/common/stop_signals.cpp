#include "apps/common/stop_signals.h"

#include <utility>

#include "core/error.h"

namespace engine::apps {
namespace {

// Lock-free, so that storing to it from a handler is async-signal-safe.
std::atomic<int> received_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);
std::atomic<bool> installed{false};

extern "C" void record_signal(int signal) { received_signal.store(signal); }

}  // namespace

StopSignals::StopSignals() {
  ENGINE_CHECK(!installed.exchange(true), "StopSignals: already installed");
  received_signal.store(0);
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESETHAND: the second signal takes the default action (stop now). SA_RESTART: the
  // loader's threads, in the middle of a read, go on rather than see EINTR.
  action.sa_flags = SA_RESETHAND | SA_RESTART;
  for (auto [signal, previous] : {std::pair{SIGINT, &previous_int_}, {SIGTERM, &previous_term_}}) {
    sigaction(signal, nullptr, previous);
    // A signal ignored from the start stays ignored: a shell starts background jobs with
    // SIGINT ignored, so that Ctrl-C at the terminal leaves them alone, and so do we.
    if (previous->sa_handler != SIG_IGN) sigaction(signal, &action, nullptr);
  }
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
  installed.store(false);
}

const std::atomic<int>& StopSignals::received() const { return received_signal; }

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

}  // namespace engine::apps
