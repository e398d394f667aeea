// Runs the bench's plan: every job as a child process in the work folder, ours first and the
// PyTorch scripts after them, with a line before and after each (elapsed time, time left) and,
// where a time budget is set, no job started that would end past it.
#pragma once
#include <atomic>
#include <vector>

#include "apps/bench/experiment.h"

namespace engine::bench {

// An experiment's jobs and, once run, their outcomes (one to one).
struct Planned {
  const BenchExperiment* experiment;
  std::vector<Job> jobs;
  std::vector<Outcome> outcomes;
};

// Prints every job: its name, time limit, expected seconds and command line.
void print_plan(const std::vector<Planned>& plan, Setting setting);

// Runs every job of `plan` and fills its outcomes; returns what ran, in order, for the report.
// A job is not started once `stop` holds a signal (the bench was interrupted), nor when
// `budget_seconds` (0: none) would be passed by the time it ends, at the pace so far.
std::vector<ChildRecord> run_all(std::vector<Planned>& plan, const Config& config,
                                 double budget_seconds, const std::atomic<int>& stop);

}  // namespace engine::bench
