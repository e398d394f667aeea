// Runs one command as a child process with its output in a log file and a time limit, the way
// apps/bench runs every experiment: a child that fails, hangs or is killed is reported, never
// takes the bench down with it.
#pragma once
#include <atomic>
#include <string>
#include <vector>

namespace engine::bench {

struct ChildResult {
  enum class End { Exited, Signaled, TimedOut, Stopped, NotStarted };
  End end = End::NotStarted;
  int code = 0;          // the exit status (Exited) or the signal (Signaled)
  double seconds = 0.0;  // wall time
  std::string error;     // NotStarted: why
  bool ok() const { return end == End::Exited && code == 0; }
};

// Runs argv[0] (looked up on PATH when it has no '/') with `argv` in the folder `cwd` ("": this
// one), stdout and stderr both into `log_path` (created, with its folder; the command line
// first). The child gets a process group of its own: after `timeout_seconds`, or once `stop`
// holds a signal number (the bench was interrupted), the whole group gets SIGTERM and, 5 s
// later, SIGKILL.
ChildResult run_child(const std::vector<std::string>& argv, const std::string& log_path,
                      double timeout_seconds, const std::atomic<int>* stop = nullptr,
                      const std::string& cwd = "");

// "ok", "failed (exit 1)", "killed by signal 9", "timed out after 60 s", "stopped (the bench
// was interrupted)", "not started: ...".
std::string describe(const ChildResult& result, double timeout_seconds);

// The last non-empty line a command wrote to its log (a failed app's one-line reason), at most
// 300 characters; "" when it wrote none.
std::string last_line(const std::string& log_path);

// A command line as a shell would take it: arguments with spaces or quotes single-quoted.
std::string shell_line(const std::vector<std::string>& argv);

}  // namespace engine::bench
