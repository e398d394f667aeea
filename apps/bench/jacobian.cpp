// Seed 001: the full Jacobian of the tanh MLP at val = 100 and 1000, ours (apps/jacobian_mlp)
// on every device, PyTorch's (scripts/jacobian_pytorch.py) on cpu and cuda; seconds per J.
// Two ways: the whole J at once (ours: --mode auto, the per-sample forward mode; PyTorch:
// vmap(jacfwd) per sample, the same trick) and the article's loop of one backward pass per
// output element (ours --mode loop; PyTorch's autograd.functional.jacobian).
#include <cstdio>
#include <string>

#include "apps/bench/experiment.h"
#include "apps/bench/published.h"

namespace engine::bench {
namespace {

using Args = std::vector<std::string>;

struct Case {
  int64_t val;
  bool loop;
};

std::vector<Case> cases(const Config& config) {
  switch (config.setting) {
    case Setting::Quick: return {{10, false}, {10, true}};
    case Setting::Default: return {{100, false}, {1000, false}, {100, true}};
    case Setting::Full: break;
  }
  return {{100, false}, {1000, false}, {100, true}, {1000, true}};
}

std::string label(const Case& c) {
  return "val = " + std::to_string(c.val) + (c.loop ? ", loop of backward passes" : ", whole J at once");
}

std::string our_job(const Case& c, const std::string& device) {
  return "jacobian_mlp " + label(c) + ", " + device;
}
const char* TORCH_JOB = "PyTorch jacobian_pytorch.py";

// The loop runs only when its estimate is at most this many seconds (--full: whatever it is).
double loop_cap(const Config& config) { return config.setting == Setting::Full ? 1e9 : 20.0; }

Measure estimated_only(double seconds) {
  char text[96];
  std::snprintf(text, sizeof text, "not run: estimated %.0f s, above the cap", seconds);
  return {std::nullopt, text};
}

// Seconds for one J from our record: the median call, or the loop's estimate when it was not run.
Measure ours(const std::vector<Job>& jobs, const std::vector<Outcome>& outcomes, const std::string& name) {
  std::string why;
  const std::optional<nlohmann::json> r = record_of(jobs, outcomes, name, why);
  if (!r) return {std::nullopt, why};
  if (!r->value("completed", false)) return estimated_only(r->value("loop_estimated_seconds", 0.0));
  const nlohmann::json& seconds = r->value("seconds", nlohmann::json::array());
  const size_t timed = seconds.size() > 1 ? seconds.size() - 1 : 0;
  const std::string how = timed == 0   ? "one call"
                          : timed == 1 ? "the call after a first"
                                       : "the median of " + std::to_string(timed) + " calls after a first";
  return {r->value("median_seconds", 0.0), how + " (" + r->value("strategy", std::string()) + ")"};
}

// PyTorch's seconds for one J: its per_sample or loop record for (device, val).
Measure torch_time(const nlohmann::json& records, const std::string& device, const Case& c) {
  const std::string method = c.loop ? "loop" : "per_sample";
  for (const nlohmann::json& r : records) {
    if (r.value("device", "") != device || r.value("val", int64_t{0}) != c.val || r.value("method", "") != method) {
      continue;
    }
    const std::string status = r.value("status", "");
    if (status == "ok") {
      return {r.value("median_seconds", 0.0), method == "loop" ? "autograd.functional.jacobian, one call"
                                                               : "vmap(jacfwd) per sample + dense J, median"};
    }
    if (status == "estimated") return estimated_only(r.value("estimated_seconds", 0.0));
    return {std::nullopt, status + ": " + r.value("note", "")};
  }
  return {std::nullopt, "no record for " + device + ", val " + std::to_string(c.val)};
}

class JacobianExperiment final : public BenchExperiment {
 public:
  std::vector<Job> jobs(const Config& config) const override {
    const std::string repeats = config.setting == Setting::Quick ? "1" : "5";
    const std::string cap = std::to_string(static_cast<int64_t>(loop_cap(config)));
    std::vector<Job> jobs;
    for (const Case& c : cases(config)) {
      for (const std::string& d : config.devices) {
        Args args = {"--device", d, "--val", std::to_string(c.val), "--repeats", repeats};
        if (c.loop) args.insert(args.end(), {"--mode", "loop", "--max-loop-seconds", cap});
        if (d == "cpu") args.insert(args.end(), {"--threads", std::to_string(config.threads)});
        jobs.push_back(app_job(config, our_job(c, d), "jacobian_mlp", args, c.val >= 1000 ? 3 : 2));
      }
    }
    const std::vector<std::string> torch = torch_devices(config);
    if (!torch.empty()) {
      Args args = {"--methods", "per_sample", "loop", "--loop-cap", cap, "--repeats",
                   config.setting == Setting::Quick ? "1" : "3", "--threads", std::to_string(config.threads),
                   "--devices"};
      args.insert(args.end(), torch.begin(), torch.end());
      args.push_back("--vals");
      for (const Case& c : cases(config)) {
        if (!c.loop) args.push_back(std::to_string(c.val));
      }
      jobs.push_back(script_job(config, TORCH_JOB, "jacobian_pytorch.py", args, 25));
    }
    return jobs;
  }

  Experiment collect(const Config& config, const std::vector<Job>& jobs,
                     const std::vector<Outcome>& outcomes) const override {
    Experiment e;
    e.title = "Jacobian of a tanh MLP (seed 001)";
    e.metric = "Seconds for the full Jacobian, shape (val, 400, val, 1)";
    e.setting = "ours: apps/jacobian_mlp --mode auto (the whole J from per-sample forward-mode "
                "products) and --mode loop (one backward pass per output element, the article's "
                "way); PyTorch: scripts/jacobian_pytorch.py's per_sample and loop methods. A loop "
                "whose estimate exceeds " + std::to_string(static_cast<int64_t>(loop_cap(config))) +
                " s is not run.";
    std::string why_torch;
    std::optional<nlohmann::json> torch;
    if (config.pytorch) torch = record_of(jobs, outcomes, TORCH_JOB, why_torch);
    for (const Case& c : cases(config)) {
      for (const std::string& d : config.devices) {
        Row row;  // member by member, as in training.cpp
        row.label = label(c);
        row.device = d;
        row.ours = ours(jobs, outcomes, our_job(c, d));
        row.pytorch.detail = torch_runs_on(config, d) ? why_torch : torch_why_not(config, d);
        if (torch && torch_runs_on(config, d)) {
          row.pytorch = torch_time(torch->value("records", nlohmann::json::array()), torch_device(d), c);
        }
        row.article = published("jacobian_mlp", "val=" + std::to_string(c.val), d);
        e.rows.push_back(row);
      }
    }
    e.notes.push_back("The article's figures are for its loop; they sit beside both of our ways, "
                      "since both compute the same J.");
    return e;
  }
};

}  // namespace

std::unique_ptr<BenchExperiment> jacobian_experiment() { return std::make_unique<JacobianExperiment>(); }

}  // namespace engine::bench
