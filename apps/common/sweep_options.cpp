#include "apps/common/sweep_options.h"

#include "core/device_services.h"

namespace engine::apps {

void add_sweep_flags(Flags& flags, SweepOptions& o) {
  flags.option("--device", o.device,
               "cpu (OpenBLAS + OpenMP), gpu (the engine's CUDA kernels), cudnn (the GPU with "
               "the vendor libraries, cuBLAS and cuDNN), or all: every one this machine has")
      .one_of({"cpu", "gpu", "cudnn", "all"});
  flags.flag("--cpu", o.cpu, "the CPU only (with --gpu: the CPU and the GPU)");
  flags.flag("--gpu", o.gpu, "the engine's GPU kernels only (with --cpu: both)");
  flags.option("--threads", o.threads, "CPU threads for OpenMP and OpenBLAS (0: all cores)")
      .check(finite_in(0, 4096));
  flags.option("--seed", o.seed, "seed of the random operands").check(any_number<uint64_t>());
  flags.option("--json", o.json_path, "write a machine-readable record of the run here");
  flags.option("--log-level", o.log_level, "trace, debug, info, warn, error, critical, off")
      .one_of({"trace", "debug", "info", "warn", "error", "critical", "off"});
  flags.option("--repeats", o.repeats, "timed samples per measurement (the median is reported)")
      .check(finite_in(1, 1000));
  flags.option("--csv", o.csv_path, "CSV of every measurement; the .gp script goes next to it");
  flags.flag("--no-plot", o.no_plot, "write the gnuplot script but do not run gnuplot");
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
