// apps/crossover: where the GPU overtakes the CPU, and why (issue 8). For four workloads, each
// swept over its size on the CPU and the GPU:
//   matmul    square c = a @ b, n = 16 ... 4096;
//   dense     one Dense(width, relu) layer's forward + backward at --batch-size rows, width
//             16 ... 4096;
//   conv      one 3x3 Conv2D(channels -> channels, relu) layer's forward + backward on
//             --batch-size 32x32 images, channels 4 ... 256;
//   mlp_step  the whole seed-000 training step as fit() runs it, batch 1 ... 8192;
// the GPU in three variants (apps/crossover/workload.h): copies (the step's inputs from host
// memory every step, as the articles' frameworks fed the GPU), resident (data on the device,
// launched op by op) and graph (the step replayed as one CUDA graph). Prints a table (median ms
// per step, the CPU's time over each variant's, the GPU regime by apps/common/
// crossover_analysis.h's rule), then for each variant the size from which the GPU stays ahead
// (interpolated log-log) and its regimes by size; writes a CSV, a gnuplot script (and its
// PNG/SVG where gnuplot is on PATH) and, with --json, a record of the run.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "apps/common/app_flags.h"
#include "apps/common/app_options.h"
#include "apps/common/sweep_files.h"
#include "apps/common/sweep_options.h"
#include "apps/crossover/report.h"
#include "apps/crossover/workload.h"
#include "core/device_services.h"
#include "core/error.h"
#include "core/peaks_cache.h"
#include "core/system_info.h"
#include "cpu/cpu_device.h"

using namespace engine;
using crossover::Row;
using crossover::Variant;

namespace {

struct Options : apps::SweepOptions {
  std::string workload = "all";
  int64_t max_size = int64_t{1} << 40;
  bool quick = false;
  int64_t batch_size = 32;
  Options() {
    repeats = 7;
    csv_path = "results/crossover.csv";
  }
};

void add_flags(apps::Flags& flags, Options& o) {
  apps::add_sweep_flags(flags, o);
  std::vector<std::string> workloads = crossover::workload_names();
  workloads.push_back("all");
  flags.option("--workload", o.workload, "matmul, dense, conv, mlp_step or all")
      .one_of(workloads);
  flags.option("--max-size", o.max_size,
               "largest size of each sweep (n, width, channels or batch; default: all)")
      .check(apps::finite_in(int64_t{1}, int64_t{1} << 40))
      .default_text("all");
  flags.flag("--quick", o.quick,
             "a short run: the smallest few sizes of each workload, at most 3 samples of ~0.5 ms");
  flags.option("--batch-size", o.batch_size, "rows (dense) or images (conv) per step; mlp_step sweeps it")
      .check(apps::finite_in(int64_t{1}, int64_t{65536}));
}

// A workload asked for and its sizes up to --max-size.
struct Sweep {
  std::unique_ptr<crossover::Workload> workload;
  std::vector<int64_t> sizes;
};

// The sweeps the flags ask for; a UsageError when --max-size leaves none.
std::vector<Sweep> plan_sweeps(const Options& o) {
  const crossover::WorkloadSettings settings{o.batch_size, o.seed};
  std::vector<Sweep> sweeps;
  for (const std::string& name : crossover::workload_names()) {
    if (o.workload != "all" && o.workload != name) continue;
    std::unique_ptr<crossover::Workload> w = crossover::make_workload(name, settings);
    std::vector<int64_t> sizes = w->sizes(o.quick);
    const int64_t smallest = sizes.front();
    sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](int64_t s) { return s > o.max_size; }),
                sizes.end());
    if (sizes.empty()) {
      std::printf("%s: no %s up to --max-size %lld (the smallest is %lld): left out\n", name.c_str(),
                  w->size_name().c_str(), static_cast<long long>(o.max_size),
                  static_cast<long long>(smallest));
      continue;
    }
    sweeps.push_back({std::move(w), sizes});
  }
  if (sweeps.empty()) throw apps::UsageError("--max-size " + std::to_string(o.max_size) + " leaves no size to measure");
  return sweeps;
}

// Drops cudnn when this build or machine has no cuDNN (under --device all; asked for by name,
// set_vendor_libraries' DeviceError ends the run with status 2).
void check_vendor_libraries(std::vector<std::string>& devices, std::vector<std::string>& unavailable,
                            bool named) {
  const auto it = std::find(devices.begin(), devices.end(), "cudnn");
  if (it == devices.end()) return;
  DeviceServices& gpu = device_services(Device::cuda(0));
  try {
    gpu.set_vendor_libraries(true);
  } catch (const DeviceError& e) {
    if (named) throw;
    unavailable.push_back(std::string("cudnn: ") + e.what());
    devices.erase(it);
  }
  gpu.set_vendor_libraries(false);
}

// The machine, for the header, the plot script and the --json record.
std::vector<std::string> machine_lines(const std::vector<std::string>& devices,
                                       const std::vector<std::string>& unavailable) {
  std::vector<std::string> lines = {"CPU: " + cpu_model_name() + ", " + std::to_string(cpu::num_threads()) +
                                        " threads (" + std::to_string(hardware_threads()) + " hardware)",
                                    "BLAS: " + cpu::blas_config()};
  for (const std::string& d : devices) {
    if (d == "cpu") continue;
    DeviceServices& gpu = device_services(Device::cuda(0));
    gpu.set_vendor_libraries(d == "cudnn");
    lines.push_back(d + ": " + gpu.name());
    gpu.set_vendor_libraries(false);
  }
  for (const std::string& u : unavailable) lines.push_back("unavailable: " + u);
  return lines;
}

void print_header(const std::vector<std::string>& machine, bool have_gpu, bool have_cpu,
                  double launch_floor, const std::vector<std::string>& unavailable) {
  std::printf("crossover: where the GPU overtakes the CPU, and why; median time per step\n");
  for (const std::string& line : machine) std::printf("%s\n", line.c_str());
  if (!have_gpu) {
    if (unavailable.empty()) {
      std::printf("CPU only, as asked: the CPU curves, no crossover.\n");
    } else {
      std::printf("No GPU (%s): the CPU curves only, no crossover.\n", unavailable.front().c_str());
    }
    return;
  }
  std::printf("GPU launch floor: %.2f us per back-to-back kernel (measured once per device: core/peaks_cache.h)\n",
              launch_floor * 1e6);
  std::printf(
      "Variants: copies = inputs from host memory each step, op by op, host waits (wall clock "
      "+ sync); resident = data on the device, op by op (CUDA events); graph = one CUDA graph "
      "replay per step (CUDA events). mlp_step: fit()'s own epoch clock (wall + sync) for all.\n"
      "Regime of a GPU time: transfer when the copies add more than the rest of the step; launch "
      "when the rest is within 2x of (kernels per step) x (launch floor), or a graph replay saves "
      "at least half of it; compute otherwise.\n");
  if (have_cpu) std::printf("cpu/it: the CPU's median over the variant's (above 1: the GPU is faster).\n");
}

}  // namespace

int main(int argc, char** argv) {
  apps::Flags flags{"Where the GPU overtakes the CPU: matmul, a Dense step, a conv step and the seed-000 "
                    "training step, swept over their size",
                    "crossover"};
  Options o;
  add_flags(flags, o);

  return apps::run_app(flags, argc, argv, [&]() {
    const apps::CommonOptions common = apps::apply_sweep_options(o);
    const std::vector<Sweep> sweeps = plan_sweeps(o);
    std::vector<std::string> unavailable;
    std::vector<std::string> devices = apps::usable_devices(o, unavailable);
    check_vendor_libraries(devices, unavailable, o.device == "cudnn");
    apps::check_sweep_outputs(o.csv_path, o.json_path);
    std::vector<std::string> gpu_devices;
    std::copy_if(devices.begin(), devices.end(), std::back_inserter(gpu_devices),
                 [](const std::string& d) { return d != "cpu"; });
    const bool have_cpu = gpu_devices.size() < devices.size();
    const double launch_floor =
        gpu_devices.empty() ? 0.0 : cached_peaks(device_services(Device::cuda(0))).launch_seconds;
    const std::vector<std::string> machine = machine_lines(devices, unavailable);
    print_header(machine, !gpu_devices.empty(), have_cpu, launch_floor, unavailable);

    crossover::TimingPlan timing;
    timing.samples = o.quick ? std::min(o.repeats, 3) : o.repeats;
    if (o.quick) {
      timing.sample_seconds = 0.5e-3;
      timing.budget_seconds = 0.3;
    }

    std::vector<Row> rows;
    for (const Sweep& sweep : sweeps) {
      // A reference, not a structured binding: Clang (C++17) cannot capture one in `measure`.
      crossover::Workload& workload = *sweep.workload;
      crossover::print_table_header(workload, gpu_devices);
      for (const int64_t size : sweep.sizes) {
        std::vector<Row> at_size;
        auto measure = [&](const std::string& device_name, Device device, Variant variant) {
          const crossover::StepTimes t = workload.time(size, device, variant, timing);
          if (!t.not_measured.empty()) {
            std::printf("  (%s %s %s at %lld: not measured: %s)\n", workload.name().c_str(),
                        device_name.c_str(), to_string(variant), static_cast<long long>(size),
                        t.not_measured.c_str());
            return;
          }
          at_size.push_back({workload.name(), workload.size_name(), size, device_name, variant, t.timer,
                             apps::spread_of(t.per_step_ms), t.steps_per_sample, t.launches});
        };
        if (have_cpu) measure("cpu", Device::cpu(), Variant::Cpu);
        for (const std::string& d : gpu_devices) {
          device_services(Device::cuda(0)).set_vendor_libraries(d == "cudnn");
          for (const Variant v : crossover::GPU_VARIANTS) measure(d, Device::cuda(0), v);
        }
        crossover::classify(at_size, launch_floor);
        crossover::print_size(at_size, gpu_devices);
        rows.insert(rows.end(), at_size.begin(), at_size.end());
      }
    }

    const std::vector<crossover::Found> found = crossover::find_crossovers(rows);
    if (!gpu_devices.empty()) crossover::print_crossovers(found);
    crossover::write_csv(o.csv_path, rows);
    std::printf("\nCSV: %s\n", o.csv_path.c_str());
    const std::string script = apps::with_extension(o.csv_path, ".gp");
    crossover::write_gnuplot(script, rows, found, machine);
    if (apps::run_gnuplot(script, o.no_plot)) {
      const std::string stem = apps::with_extension(script, "");
      std::printf("Plot: %s.png and %s.svg\n", stem.c_str(), stem.c_str());
    }
    if (!o.json_path.empty()) {
      nlohmann::json record = apps::machine_record(common, Device::cpu());
      record["app"] = "crossover";
      record["device"] = devices;  // machine_record() names the CPU; this run has several devices
      record["machine"] = machine;
      record["launch_floor_us"] = launch_floor * 1e6;
      record["batch_size"] = o.batch_size;  // of the dense and conv steps
      record["repeats"] = timing.samples;
      record["quick"] = o.quick;
      record["results"] = crossover::rows_json(rows);
      record["crossovers"] = crossover::crossovers_json(found);
      apps::write_json(o.json_path, record);
      std::printf("JSON: %s\n", o.json_path.c_str());
    }
    return 0;
  });
}
