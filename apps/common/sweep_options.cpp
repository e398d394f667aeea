#include "apps/common/sweep_options.h"

#include "apps/common/app_flags.h"
#include "core/device_services.h"

namespace engine::apps {

void add_sweep_flags(CLI::App& app, SweepOptions& o) {
  app.add_option("--device", o.device,
                 "cpu (OpenBLAS + OpenMP), gpu (the engine's CUDA kernels), cudnn (the GPU with "
                 "the vendor libraries, cuBLAS and cuDNN), or all: every one this machine has")
      ->check(CLI::IsMember({"cpu", "gpu", "cudnn", "all"}));
  app.add_flag("--cpu", o.cpu, "the CPU only (with --gpu: the CPU and the GPU)");
  app.add_flag("--gpu", o.gpu, "the engine's GPU kernels only (with --cpu: both)");
  app.add_option("--threads", o.threads, "CPU threads for OpenMP and OpenBLAS (0: all cores)")
      ->check(finite_in(0, 4096));
  app.add_option("--seed", o.seed, "seed of the random operands")->check(any_number<uint64_t>());
  app.add_option("--json", o.json_path, "write a machine-readable record of the run here");
  app.add_option("--log-level", o.log_level, "trace, debug, info, warn, error, critical, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--repeats", o.repeats, "timed samples per measurement (the median is reported)")
      ->check(finite_in(1, 1000));
  app.add_option("--csv", o.csv_path, "CSV of every measurement; the .gp script goes next to it");
  app.add_flag("--no-plot", o.no_plot, "write the gnuplot script but do not run gnuplot");
}

CommonOptions apply_sweep_options(const SweepOptions& o) {
  CommonOptions common;  // device "cpu": always usable, so only threads and logging change
  common.threads = o.threads;
  common.log_level = o.log_level;
  common.seed = o.seed;
  apply_common_options(common);
  return common;
}

std::vector<std::string> usable_devices(const SweepOptions& o, std::vector<std::string>& unavailable) {
  std::vector<std::string> names;
  if (o.cpu || o.gpu) {
    if (o.cpu) names.push_back("cpu");
    if (o.gpu) names.push_back("gpu");
  } else if (o.device == "all") {
    names = {"cpu", "gpu", "cudnn"};
  } else {
    names = {o.device};
  }
  const bool explicit_choice = o.cpu || o.gpu || o.device != "all";
  std::vector<std::string> usable;
  for (const std::string& name : names) {
    std::string why;
    if (name != "cpu" && !device_available(Device::cuda(0), &why)) {
      if (explicit_choice) throw UsageError("cannot use the GPU for --device " + name + ": " + why);
      unavailable.push_back(name + ": " + why);
      continue;
    }
    usable.push_back(name);
  }
  return usable;
}

}  // namespace engine::apps
