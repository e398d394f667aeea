#include "apps/bench/runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "apps/bench/child_process.h"

namespace engine::bench {
namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}

// Where a job stands in the plan.
struct Slot {
  size_t experiment, job;
};

// Ours first, then PyTorch's: when time runs short, the comparison goes before our own rows.
std::vector<Slot> running_order(const std::vector<Planned>& plan) {
  std::vector<Slot> order;
  for (const bool pytorch : {false, true}) {
    for (size_t e = 0; e < plan.size(); ++e) {
      for (size_t j = 0; j < plan[e].jobs.size(); ++j) {
        if (plan[e].jobs[j].pytorch == pytorch) order.push_back({e, j});
      }
    }
  }
  return order;
}

// Keeps the time: how long the run has taken, and how the machine's pace compares with the
// jobs' estimates (made on the GPU machine), to say how long the rest will take.
class Clock {
 public:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  double pace() const { return expected_done_ > 0.0 ? std::clamp(elapsed() / expected_done_, 0.25, 20.0) : 1.0; }
  void done(double expected) { expected_done_ += expected; }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double expected_done_ = 0.0;
};

// Why a job is not started, or "" to start it.
std::string reason_to_skip(const Job& job, const Clock& clock, double budget, const std::atomic<int>& stop) {
  if (!job.missing.empty()) return job.missing;
  if (stop.load() != 0) return "the bench was interrupted";
  if (budget > 0.0 && clock.elapsed() + job.estimate * clock.pace() > budget) {
    return "it would end past the time budget (--budget " + std::to_string(static_cast<long long>(budget)) + " s)";
  }
  return "";
}

}  // namespace

void print_plan(const std::vector<Planned>& plan, Setting setting) {
  double total = 0.0;
  for (const Slot& s : running_order(plan)) {
    const Job& j = plan[s.experiment].jobs[s.job];
    std::printf("%-52s limit %5.0f s, ~%3.0f s: %s\n", j.name.c_str(), j.timeout, j.estimate,
                j.missing.empty() ? shell_line(j.argv).c_str() : ("not run: " + j.missing).c_str());
    if (j.missing.empty()) total += j.estimate;
  }
  if (setting == Setting::Default) {
    std::printf("About %s in all on the GPU machine (an H100 host with 16 cores).\n", clock_text(total).c_str());
  }
}

std::vector<ChildRecord> run_all(std::vector<Planned>& plan, const Config& config,
                                 double budget_seconds, const std::atomic<int>& stop) {
  const std::vector<Slot> order = running_order(plan);
  double expected_left = 0.0;
  for (Planned& p : plan) {
    p.outcomes.assign(p.jobs.size(), Outcome{});
    for (const Job& j : p.jobs) expected_left += j.estimate;
  }
  std::printf("bench: %zu runs%s; logs and records in %s\n", order.size(),
              config.setting == Setting::Default
                  ? (", about " + clock_text(expected_left) + " on the GPU machine").c_str()
                  : "",
              config.work_dir.c_str());
  Clock clock;
  std::vector<ChildRecord> records;
  for (size_t i = 0; i < order.size(); ++i) {
    const Job& job = plan[order[i].experiment].jobs[order[i].job];
    Outcome& outcome = plan[order[i].experiment].outcomes[order[i].job];
    const std::string log = config.work_dir + "/logs/" + job.id + ".log";
    ChildRecord record{job.name, shell_line(job.argv), "", 0.0, "-"};
    const std::string skip = reason_to_skip(job, clock, budget_seconds, stop);
    if (!skip.empty()) {
      outcome.text = "not run: " + skip;
    } else {
      std::printf("[%2zu/%zu] %s (limit %.0f s) ...\n", i + 1, order.size(), job.name.c_str(), job.timeout);
      std::fflush(stdout);
      // In the work folder: what an app leaves behind (a checkpoint when it is stopped, a
      // default output file) stays there, not in the folder the bench was started from.
      const ChildResult r = run_child(job.argv, log, job.timeout, &stop, config.work_dir);
      outcome.ok = r.ok();
      outcome.text = describe(r, job.timeout);
      if (!outcome.ok) {
        const std::string line = last_line(log);
        outcome.text += (line.empty() ? "" : ": " + line) + "; log: " + log;
      }
      record.seconds = r.seconds;
      record.log = log;
    }
    record.outcome = outcome.text;
    if (skip.empty()) clock.done(job.estimate);
    expected_left -= job.estimate;
    std::printf("[%2zu/%zu] %s: %s, %.1f s; %s elapsed, about %s left\n", i + 1, order.size(), job.name.c_str(),
                outcome.text.c_str(), record.seconds, clock_text(clock.elapsed()).c_str(),
                clock_text(expected_left * clock.pace()).c_str());
    std::fflush(stdout);
    records.push_back(record);
  }
  return records;
}

}  // namespace engine::bench
