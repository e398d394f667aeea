#include "apps/bench/experiment.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace engine::bench {
namespace {

// "mnist_mlp small model, cpu" -> "mnist_mlp_small_model_cpu": a file name for a job's record.
std::string file_stem(const std::string& name) {
  std::string stem;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') {
      stem += c;
    } else if (!stem.empty() && stem.back() != '_') {
      stem += '_';
    }
  }
  while (!stem.empty() && stem.back() == '_') stem.pop_back();
  return stem;
}

// A job with --json work_dir/json/<id>.json added to `argv`.
Job json_job(const Config& config, const std::string& name, std::vector<std::string> argv,
             double estimate) {
  Job job = command_job(config, name, std::move(argv), estimate);
  job.json = (fs::path(config.work_dir) / "json" / (job.id + ".json")).string();
  job.argv.insert(job.argv.end(), {"--json", job.json});
  return job;
}

}  // namespace

Job command_job(const Config& config, const std::string& name, std::vector<std::string> argv,
                double estimate) {
  Job job;
  job.name = name;
  job.id = file_stem(name);
  // A path (not a program looked up on PATH, as python3) must exist: an app not built here.
  const std::string& program = argv.front();
  if (program.find('/') != std::string::npos && !fs::exists(program)) {
    job.missing = "not built here: no " + program;
  }
  job.argv = std::move(argv);
  job.estimate = estimate;
  job.timeout = time_limit(config, estimate);
  return job;
}

Job app_job(const Config& config, const std::string& name, const std::string& app,
            std::vector<std::string> args, double estimate) {
  args.insert(args.begin(), (fs::path(config.bin_dir) / app).string());
  return json_job(config, name, std::move(args), estimate);
}

Job script_job(const Config& config, const std::string& name, const std::string& script,
               std::vector<std::string> args, double estimate) {
  const std::string path = (fs::path(config.scripts_dir) / script).string();
  args.insert(args.begin(), {config.python, path});
  Job job = json_job(config, name, std::move(args), estimate);
  job.pytorch = true;
  if (!fs::exists(path)) job.missing = "no PyTorch script " + path;
  return job;
}

double time_limit(const Config& config, double estimate) {
  switch (config.setting) {
    case Setting::Quick: return 120.0;  // CI machines are small and shared
    case Setting::Default: return std::max(60.0, 4.0 * estimate);
    case Setting::Full: break;
  }
  return 6 * 3600.0;  // the articles' CPU runs take hours on a laptop; ours should not
}

std::optional<nlohmann::json> record_of(const std::vector<Job>& jobs,
                                        const std::vector<Outcome>& outcomes,
                                        const std::string& name, std::string& why_not) {
  for (size_t i = 0; i < jobs.size() && i < outcomes.size(); ++i) {
    if (jobs[i].name != name) continue;
    if (!outcomes[i].ok) {
      why_not = outcomes[i].text;
      return std::nullopt;
    }
    std::ifstream in(jobs[i].json);
    nlohmann::json record = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) {
      why_not = "ran, but left no readable record at " + jobs[i].json;
      return std::nullopt;
    }
    return record;
  }
  why_not = "not run";
  return std::nullopt;
}

std::string torch_device(const std::string& ours) { return ours == "cpu" ? "cpu" : "cuda"; }

bool torch_runs_on(const Config& config, const std::string& ours) {
  if (!config.pytorch) return false;
  if (ours != "cpu") return config.pytorch_cuda;
  return std::find(config.devices.begin(), config.devices.end(), "cpu") != config.devices.end();
}

std::vector<std::string> torch_devices(const Config& config) {
  std::vector<std::string> devices;
  for (const char* ours : {"cpu", "gpu"}) {
    if (torch_runs_on(config, ours)) devices.push_back(torch_device(ours));
  }
  return devices;
}

std::string torch_why_not(const Config& config, const std::string& ours) {
  if (torch_runs_on(config, ours)) return "";
  return config.pytorch ? "PyTorch sees no GPU" : config.pytorch_why_not;
}

std::vector<std::string> sweep_device_args(const Config& config) {
  const std::vector<std::string>& d = config.devices;
  if (d.size() == 1) return {"--device", d.front()};
  if (d == std::vector<std::string>{"cpu", "gpu"}) return {"--cpu", "--gpu"};
  return {"--device", "all"};  // the sweeps cannot leave out only the GPU or only cuDNN
}

}  // namespace engine::bench
