// The flags and the device choice of the apps that sweep a size over several devices in one
// run (apps/matmul_sweep, apps/crossover): where a training app runs on one device, these
// compare the CPU with the GPU, so --device also takes "all", and --cpu with --gpu means both.
#pragma once
#include <string>
#include <vector>

#include "apps/common/app_options.h"
#include "apps/common/app_flags.h"

namespace engine::apps {

struct SweepOptions {
  std::string device = "all";
  bool cpu = false, gpu = false;
  int threads = 0;  // 0: all cores
  uint64_t seed = 42;
  std::string json_path;
  std::string log_level = "info";
  int repeats = 10;
  std::string csv_path;  // the app's default; the .gp script goes next to it
  bool no_plot = false;
};

// --device cpu|gpu|cudnn|all, --cpu, --gpu, --threads, --seed, --json, --log-level, --repeats,
// --csv, --no-plot; the values already in `options` are the defaults.
void add_sweep_flags(Flags& flags, SweepOptions& options);

// Applies --threads and --log-level as every app does; returns the options a --json record
// (machine_record) is made from.
CommonOptions apply_sweep_options(const SweepOptions& options);

// The devices asked for ("cpu", "gpu", "cudnn", in that order) that this machine can run. One
// named explicitly (--device gpu, --gpu...) that cannot run is a UsageError (exit status 2);
// under "all" it is left out and "name: why" is appended to `unavailable`.
std::vector<std::string> usable_devices(const SweepOptions& options,
                                        std::vector<std::string>& unavailable);

}  // namespace engine::apps
