#include "apps/bench/fingerprint.h"

#include <sys/utsname.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "apps/bench/child_process.h"
#include "core/device_services.h"
#include "core/system_info.h"
#include "cpu/cpu_device.h"

#if defined(ENGINE_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace fs = std::filesystem;

namespace engine::bench {
namespace {

constexpr double PROBE_SECONDS = 60.0;  // importing torch the first time can take a while

// The last line a command printed, or "" when it could not run or failed.
std::string output_of(const std::vector<std::string>& argv, const std::string& log) {
  const ChildResult r = run_child(argv, log, PROBE_SECONDS);
  return r.ok() ? last_line(log) : "";
}

void add_gpu(Fingerprint& f) {
  std::string why;
  if (!device_available(Device::cuda(0), &why)) {
    f.emplace_back("GPU", "none usable: " + why);
    return;
  }
#if defined(ENGINE_WITH_CUDA)
  // Attributes and versions only: these calls make no context on the device, which the
  // apps the bench runs next would otherwise share it with.
  cudaDeviceProp prop{};
  int clock_khz = 0, memory_khz = 0, bus_bits = 0, driver = 0, runtime = 0;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0) != cudaSuccess ||
      cudaDriverGetVersion(&driver) != cudaSuccess || cudaRuntimeGetVersion(&runtime) != cudaSuccess) {
    f.emplace_back("GPU", std::string("the CUDA runtime could not describe it: ") +
                              cudaGetErrorString(cudaGetLastError()));
    return;
  }
  char text[160];
  f.emplace_back("GPU", prop.name);
  std::snprintf(text, sizeof text, "%d SMs, compute capability %d.%d, %.0f GiB", prop.multiProcessorCount,
                prop.major, prop.minor, static_cast<double>(prop.totalGlobalMem) / (1 << 30));
  f.emplace_back("GPU SMs and memory", text);
  std::snprintf(text, sizeof text, "SM %d MHz, memory %d MHz on a %d-bit bus", clock_khz / 1000,
                memory_khz / 1000, bus_bits);
  f.emplace_back("GPU clocks (maximum, CUDA runtime)", text);
  auto version = [](int v) {  // CUDA's 13000 -> "13.0"
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  };
  f.emplace_back("CUDA", "driver API " + version(driver) + ", runtime " + version(runtime));
#endif
}

// Where nvidia-smi is installed: the driver's version, the clocks now and the power limit.
void add_nvidia_smi(Fingerprint& f, const std::string& log_dir) {
  const std::string line = output_of(
      {"nvidia-smi", "--query-gpu=driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit",
       "--format=csv,noheader"},
      (fs::path(log_dir) / "probe_nvidia_smi.log").string());
  if (!line.empty()) f.emplace_back("nvidia-smi (driver, SM clock now, max, memory clock, power limit)", line);
}

}  // namespace

Fingerprint machine_fingerprint(int threads, const std::string& log_dir) {
  Fingerprint f;
  f.emplace_back("CPU", cpu_model_name());
  f.emplace_back("CPU threads", std::to_string(threads) + " used of " + std::to_string(hardware_threads()) +
                                    " hardware threads");
  f.emplace_back("BLAS", cpu::blas_config());
  utsname os{};
  if (uname(&os) == 0) f.emplace_back("OS", std::string(os.sysname) + " " + os.release + " " + os.machine);
  f.emplace_back("Compiler", __VERSION__);
#if defined(ENGINE_WITH_CUDA)
  f.emplace_back("Engine build", "with the CUDA backend");
#else
  f.emplace_back("Engine build", "CPU only (no CUDA compiler when it was configured)");
#endif
  add_gpu(f);
  add_nvidia_smi(f, log_dir);
  return f;
}

PyTorchProbe probe_pytorch(const std::string& python, const std::string& log_dir) {
  PyTorchProbe probe;
  const std::string log = (fs::path(log_dir) / "probe_pytorch.log").string();
  const std::string line = output_of(
      {python, "-c",
       "import json, torch\n"
       "cuda = torch.cuda.is_available()\n"
       "print(json.dumps({'version': torch.__version__, 'cuda': cuda, 'cuda_version': torch.version.cuda,\n"
       "                  'cudnn': torch.backends.cudnn.version() if cuda else None,\n"
       "                  'gpu': torch.cuda.get_device_name() if cuda else None}))"},
      log);
  const nlohmann::json info = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (line.empty() || info.is_discarded() || !info.is_object()) {
    const std::string why = last_line(log);
    probe.why_not = "not installed (" + (why.empty() ? python + " could not import torch" : why) + ")";
    return probe;
  }
  probe.installed = true;
  probe.cuda = info.value("cuda", false);
  probe.description = info.value("version", "?");
  if (probe.cuda) {
    probe.description += ", CUDA " + info.value("cuda_version", "?") + ", cuDNN " +
                         std::to_string(info.value("cudnn", 0)) + ", " + info.value("gpu", "?");
  } else {
    probe.description += ", no GPU";
  }
  return probe;
}

}  // namespace engine::bench
