#include "apps/bench/child_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "apps/common/training_report.h"

namespace fs = std::filesystem;

namespace engine::bench {
namespace {

constexpr double KILL_GRACE_SECONDS = 5.0;  // between SIGTERM and SIGKILL
constexpr auto POLL = std::chrono::milliseconds(20);

bool plain(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./=:,+-@%", c) != nullptr;
}

}  // namespace

std::string shell_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) {
    if (!line.empty()) line += ' ';
    bool simple = !arg.empty();
    for (const char c : arg) simple = simple && plain(c);
    if (simple) {
      line += arg;
      continue;
    }
    line += '\'';
    for (const char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

ChildResult run_child(const std::vector<std::string>& argv, const std::string& log_path,
                      double timeout_seconds, const std::atomic<int>* stop, const std::string& cwd) {
  ChildResult result;
  if (argv.empty()) {
    result.error = "no command";
    return result;
  }
  const fs::path parent = fs::path(log_path).parent_path();
  if (!parent.empty()) fs::create_directories(parent);
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) {
    result.error = "cannot write " + log_path + ": " + std::strerror(errno);
    return result;
  }
  const std::string header = "$ " + shell_line(argv) + "\n";
  if (::write(log, header.data(), header.size()) < 0) {
    result.error = "cannot write " + log_path + ": " + std::strerror(errno);
    ::close(log);
    return result;
  }
  // Everything the child needs after fork() is made before it: only async-signal-safe calls
  // may run between fork() and exec().
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string exec_failed = "cannot run " + argv.front() + "\n";
  const std::string chdir_failed = "cannot enter " + cwd + "\n";

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.error = std::string("fork failed: ") + std::strerror(errno);
    ::close(log);
    return result;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(log, STDOUT_FILENO);  // the copies do not inherit O_CLOEXEC
    ::dup2(log, STDERR_FILENO);
    // Reached only when chdir or exec failed: say which in the log, exit as a shell would.
    auto fail = [](const std::string& why) {
      if (::write(STDERR_FILENO, why.data(), why.size()) < 0) _exit(127);
      _exit(127);
    };
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) fail(chdir_failed);
    ::execvp(args[0], args.data());
    fail(exec_failed);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first makes the group
  ::close(log);

  bool signalled = false;
  auto signalled_at = start;
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (!signalled) {
        result.end = WIFEXITED(status) ? ChildResult::End::Exited : ChildResult::End::Signaled;
        result.code = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status);
      }
      break;
    }
    if (done < 0 && errno != EINTR) {
      result.error = std::string("waitpid failed: ") + std::strerror(errno);
      break;
    }
    const bool interrupted = stop != nullptr && stop->load() != 0;
    if (!signalled && (apps::seconds_since(start) > timeout_seconds || interrupted)) {
      result.end = interrupted ? ChildResult::End::Stopped : ChildResult::End::TimedOut;
      ::kill(-pid, SIGTERM);
      signalled = true;
      signalled_at = std::chrono::steady_clock::now();
    } else if (signalled && apps::seconds_since(signalled_at) > KILL_GRACE_SECONDS) {
      ::kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(POLL);
  }
  result.seconds = apps::seconds_since(start);
  return result;
}

std::string describe(const ChildResult& result, double timeout_seconds) {
  switch (result.end) {
    case ChildResult::End::Exited:
      return result.code == 0 ? "ok" : "failed (exit " + std::to_string(result.code) + ")";
    case ChildResult::End::Signaled:
      return "killed by signal " + std::to_string(result.code) + " (" + strsignal(result.code) + ")";
    case ChildResult::End::TimedOut:
      return "timed out after " + std::to_string(static_cast<int64_t>(timeout_seconds)) + " s";
    case ChildResult::End::Stopped:
      return "stopped: the bench was interrupted";
    case ChildResult::End::NotStarted: break;
  }
  return "not started: " + result.error;
}

std::string last_line(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line, last;
  std::getline(in, line);  // run_child's "$ command" line: not the command's own output
  if (line.rfind("$ ", 0) != 0) in.seekg(0);
  while (std::getline(in, line)) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    // A progress bar redraws itself after '\r': its last state is what a terminal shows.
    const size_t cr = line.rfind('\r');
    if (cr != std::string::npos) line.erase(0, cr + 1);
    if (!line.empty()) last = line;
  }
  return last.size() > 300 ? last.substr(0, 297) + "..." : last;
}

}  // namespace engine::bench
