// The sweeps, each one process over every device: seed 002's [1,n] x [n,1] matmul sweep
// (apps/matmul_sweep, PyTorch's scripts/pytorch/matmul_sweep.py beside it) and the crossover
// finder (apps/crossover). Both write their CSV and gnuplot script into the plots folder; the
// report links their plots and lists where the GPU overtakes the CPU.
#include <filesystem>

#include "apps/bench/experiment.h"

namespace fs = std::filesystem;

namespace engine::bench {
namespace {

using Args = std::vector<std::string>;

const char* MATMUL_JOB = "matmul_sweep";
const char* TORCH_MATMUL_JOB = "PyTorch matmul_sweep.py";
const char* CROSSOVER_JOB = "crossover";
// The article's way of timing: a and b drawn with a normal RNG inside every timed call.
const char* ARTICLE_VARIANT = "generate+matmul";

// The flags both sweep apps share: devices, threads, and their CSV (with the .gp beside it) in
// the plots folder, drawn later by the report.
Args sweep_args(const Config& config, const std::string& stem) {
  Args args = sweep_device_args(config);
  args.insert(args.end(), {"--threads", std::to_string(config.threads), "--no-plot", "--csv",
                           (fs::path(config.plots_dir) / (stem + ".csv")).string()});
  return args;
}

// The plot the sweep app of job `name` wrote, when it ran to the end (it writes the script last).
std::vector<Plot> plot_if_written(const std::vector<Job>& jobs, const std::vector<Outcome>& outcomes,
                                  const std::string& name, Plot plot) {
  std::string why;
  if (!record_of(jobs, outcomes, name, why)) return {};
  return {plot};
}

// "n = 10^6" for powers of ten.
std::string size_label(int64_t n) {
  int k = 0;
  int64_t p = 1;
  while (p < n) p *= 10, ++k;
  return p == n ? "n = 10^" + std::to_string(k) : "n = " + std::to_string(n);
}

// The crossover sentences of a record's "crossovers", one note each.
void add_crossovers(const nlohmann::json& record, Experiment& e) {
  for (const nlohmann::json& x : record.value("crossovers", nlohmann::json::array())) {
    std::string what;
    for (const char* key : {"workload", "sweep", "device", "variant"}) {
      const std::string value = x.value(key, "");
      if (!value.empty() && !(std::string(key) == "sweep" && value == "dot")) what += (what.empty() ? "" : " ") + value;
    }
    std::string note = what + " vs cpu: " + x.value("text", "");
    if (x.contains("regimes")) note += " (regimes: " + x.value("regimes", "") + ")";
    e.notes.push_back(note);
  }
}

int64_t max_n(const Config& config) {
  switch (config.setting) {
    case Setting::Quick: return 10'000;
    case Setting::Default: return 10'000'000;
    case Setting::Full: break;
  }
  return 100'000'000;  // the article's largest
}

std::string repeats(const Config& config) {
  return config.setting == Setting::Quick ? "2" : config.setting == Setting::Default ? "5" : "10";
}

// PyTorch's time for the article's variant at n on the device of ours called `device`.
Measure torch_time(const std::optional<nlohmann::json>& record, const std::string& why_not,
                   const std::string& device, int64_t n) {
  if (!record) return {std::nullopt, why_not};
  for (const nlohmann::json& t : record->value("results", nlohmann::json::array())) {
    if (t.value("device", "") == torch_device(device) && t.value("n", int64_t{0}) == n &&
        t.value("variant", "") == ARTICLE_VARIANT) {
      return {t.value("median_ms", 0.0) * 1e-3, ""};
    }
  }
  return {std::nullopt, "no record for " + size_label(n)};
}

class MatmulExperiment final : public BenchExperiment {
 public:
  std::vector<Job> jobs(const Config& config) const override {
    Args args = sweep_args(config, "matmul_sweep");
    const char* square = config.setting == Setting::Quick ? "64" : config.setting == Setting::Default ? "2048" : "4096";
    args.insert(args.end(), {"--max-n", std::to_string(max_n(config)), "--max-square", square,
                             "--repeats", repeats(config)});
    std::vector<Job> jobs = {app_job(config, MATMUL_JOB, "matmul_sweep", args, 20)};
    const std::vector<std::string> devices = torch_devices(config);
    if (!devices.empty()) {
      Args torch = {"--max-n", std::to_string(max_n(config)), "--repeats", repeats(config), "--threads",
                    std::to_string(config.threads), "--devices"};
      torch.insert(torch.end(), devices.begin(), devices.end());
      jobs.push_back(script_job(config, TORCH_MATMUL_JOB, "pytorch/matmul_sweep.py", torch, 10));
    }
    return jobs;
  }

  Experiment collect(const Config& config, const std::vector<Job>& jobs,
                     const std::vector<Outcome>& outcomes) const override {
    Experiment e;
    e.title = "Matmul sweep, [1,n] x [n,1] (seed 002)";
    e.metric = "Milliseconds per call of c = a . b with a and b drawn from a normal RNG inside "
               "the call (the article's timing)";
    e.setting = "n = 10^2 ... " + size_label(max_n(config)).substr(4) + ", median of " +
                repeats(config) + " calls after a warm-up; the article published a plot, no numbers. "
                "The plot shows the product alone and with host-device copies too.";
    std::string why, why_torch;
    const std::optional<nlohmann::json> ours = record_of(jobs, outcomes, MATMUL_JOB, why);
    std::optional<nlohmann::json> torch;
    if (config.pytorch) torch = record_of(jobs, outcomes, TORCH_MATMUL_JOB, why_torch);
    if (!ours) {
      for (const std::string& d : config.devices) e.rows.push_back({"", d, {std::nullopt, why}, {}, {}});
      return e;
    }
    for (const nlohmann::json& r : ours->value("results", nlohmann::json::array())) {
      if (r.value("sweep", "") != "dot" || r.value("variant", "") != ARTICLE_VARIANT) continue;
      const std::string device = r.value("device", "");
      const int64_t n = r.value("n", int64_t{0});
      Row row{size_label(n), device, {r.value("median_ms", 0.0) * 1e-3, ""},
              {std::nullopt, torch_why_not(config, device)}, {}};
      if (torch_runs_on(config, device)) row.pytorch = torch_time(torch, why_torch, device, n);
      e.rows.push_back(row);
    }
    add_crossovers(*ours, e);
    return e;
  }

  std::vector<Plot> plots(const Config&, const std::vector<Job>& jobs,
                          const std::vector<Outcome>& outcomes) const override {
    return plot_if_written(jobs, outcomes, MATMUL_JOB,
                           {"Matmul sweep (seed 002)", "matmul_sweep.gp", {"matmul_sweep.png", "matmul_sweep_square.png"}});
  }
};

class CrossoverExperiment final : public BenchExperiment {
 public:
  std::vector<Job> jobs(const Config& config) const override {
    Args args = sweep_args(config, "crossover");
    if (config.setting != Setting::Full) args.push_back("--quick");
    // CI: the smallest size of each workload is enough to see that every path runs.
    if (config.setting == Setting::Quick) args.insert(args.end(), {"--max-size", "16", "--batch-size", "4"});
    return {app_job(config, CROSSOVER_JOB, "crossover", args, 25)};
  }

  Experiment collect(const Config& config, const std::vector<Job>& jobs,
                     const std::vector<Outcome>& outcomes) const override {
    Experiment e;
    e.title = "Where the GPU overtakes the CPU (apps/crossover)";
    e.metric = "Sizes from which the GPU stays ahead";
    e.setting = std::string(config.setting == Setting::Full ? "every size of" : "--quick: the smallest sizes of") +
                " a square matmul, a Dense step, a conv step and the seed-000 training step, on "
                "the CPU and the GPU (copies, resident, graph); docs/PROFILING.md explains the "
                "regimes.";
    std::string why;
    const std::optional<nlohmann::json> record = record_of(jobs, outcomes, CROSSOVER_JOB, why);
    if (!record) {
      e.notes.push_back("No crossovers: " + why);
    } else {
      add_crossovers(*record, e);
      if (e.notes.empty()) e.notes.push_back("No crossover to find: the CPU curves only (no GPU in this run)");
    }
    return e;
  }

  std::vector<Plot> plots(const Config&, const std::vector<Job>& jobs,
                          const std::vector<Outcome>& outcomes) const override {
    return plot_if_written(jobs, outcomes, CROSSOVER_JOB, {"Crossover curves", "crossover.gp", {"crossover.png"}});
  }
};

}  // namespace

std::unique_ptr<BenchExperiment> matmul_experiment() { return std::make_unique<MatmulExperiment>(); }
std::unique_ptr<BenchExperiment> crossover_experiment() { return std::make_unique<CrossoverExperiment>(); }

}  // namespace engine::bench
