// The CPU's device services (memory, copies, timers, peaks) and its thread team.
#include "cpu/cpu_device.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops/matmul.h"

namespace engine::cpu {
namespace {

// 64-byte alignment: one cache line, and what AVX-512 loads like.
constexpr size_t ALIGNMENT = 64;

// The most threads the engine's team has, --threads' limit too. OMP_NUM_THREADS is libgomp's to
// read: garbage ("abc", "0", "-3") it ignores with a warning, but a huge count (99999999) it
// accepts, and its first parallel region of that size crashes (issue 24).
constexpr int MAX_THREADS = 4096;

// Timestamps on the host's steady clock, kept in the order they were recorded: a timer's id
// is its index.
class HostTimers final : public DeviceTimers {
 public:
  uint64_t record() override {
    stamps_.push_back(std::chrono::steady_clock::now());
    return stamps_.size() - 1;
  }
  double seconds(uint64_t start, uint64_t end) override {
    ENGINE_CHECK(start < stamps_.size() && end < stamps_.size(), "timer ", start, " or ", end,
                 " was not recorded since the last reset");
    return std::chrono::duration<double>(stamps_[end] - stamps_[start]).count();
  }
  void reset() override { stamps_.clear(); }

 private:
  std::vector<std::chrono::steady_clock::time_point> stamps_;
};

template <typename Work>
double median_seconds(int runs, Work&& work) {
  work();  // warm-up
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    work();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

CpuDevice::CpuDevice()
    : allocator_("cpu", ALIGNMENT,
                 [](size_t bytes) { return std::aligned_alloc(ALIGNMENT, bytes); },
                 [](void* ptr) { std::free(ptr); }) {
  // Our OpenMP team parallelises sgemm (cpu/matmul.cpp), so OpenBLAS runs on one thread.
  // In OpenBLAS' OpenMP build this call also sets OpenMP's team size to 1: keep ours.
  const int threads = num_threads();  // OMP_NUM_THREADS, at most MAX_THREADS
  openblas_set_num_threads(1);
  omp_set_num_threads(threads);
}

std::string CpuDevice::name() const {
  return "cpu (" + std::to_string(num_threads()) + " threads, " + blas_config() + ")";
}

void CpuDevice::copy_from_host(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuDevice::copy_to_host(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuDevice::copy_within(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memmove(dst, src, bytes);
}

// The host's MemTotal and MemAvailable (what the kernel can give without swapping), from
// /proc/meminfo; unknown where there is no such file.
DeviceMemory CpuDevice::memory_info() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  size_t kib = 0, total = 0, available = 0;
  bool have_available = false;
  while (meminfo >> key >> kib) {
    if (key == "MemTotal:") total = kib << 10;
    if (key == "MemAvailable:") available = kib << 10, have_available = true;
    meminfo.ignore(64, '\n');  // " kB"
  }
  if (total == 0 || !have_available) return {};
  return {available + allocator_.stats().cached_bytes, total};
}

void* CpuDevice::allocate_pinned(size_t bytes) {
  void* pointer = std::aligned_alloc(ALIGNMENT, (std::max<size_t>(bytes, 1) + ALIGNMENT - 1) /
                                                    ALIGNMENT * ALIGNMENT);
  ENGINE_CHECK(pointer != nullptr, "out of host memory: ", bytes >> 20, " MiB asked for input buffers");
  return pointer;
}
void CpuDevice::free_pinned(void* pointer) { std::free(pointer); }
void CpuDevice::copy_from_pinned_async(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

// A fresh set for each user (core/device_services.h), so profiles never share timer ids.
std::unique_ptr<DeviceTimers> CpuDevice::make_timers() { return std::make_unique<HostTimers>(); }

// The CPU's ceilings, measured the way its ops run: sgemm through the CPU's own matmul
// (cpu/matmul.cpp, all threads), a 256 MiB memcpy, and the cost of waking the OpenMP team for
// an empty region (the CPU's "launch": what every parallel op pays before any work).
MeasuredPeaks CpuDevice::measure_peaks() {
  MeasuredPeaks peaks;
  constexpr int64_t N = 1024;
  Tensor a = Tensor::full({N, N}, 1.0f), b = Tensor::full({N, N}, 0.5f), c = Tensor::empty({N, N});
  peaks.flops_per_s =
      2.0 * N * N * N / median_seconds(3, [&] { cpu::matmul(a, false, b, false, c, 1.0f, 0.0f); });
  const size_t bytes = size_t{256} << 20;
  std::vector<char> src(bytes, 1), dst(bytes);
  peaks.bytes_per_s = 2.0 * static_cast<double>(bytes) /
                      median_seconds(3, [&] { std::memcpy(dst.data(), src.data(), bytes); });
  constexpr int REGIONS = 1000;
  const int team = num_threads();
  peaks.launch_seconds = median_seconds(3, [&] {
    for (int i = 0; i < REGIONS; ++i) {
#pragma omp parallel num_threads(team)
      { asm volatile("" ::: "memory"); }
    }
  }) / REGIONS;
  return peaks;
}

CpuDevice& device() {
  // Never destroyed: tensors in static storage may outlive any other owner.
  static CpuDevice* instance = new CpuDevice();
  return *instance;
}

void set_num_threads(int threads) {
  ENGINE_CHECK(threads >= 1, "--threads must be at least 1, got ", threads);
  omp_set_num_threads(threads);  // OpenBLAS stays single-threaded: see cpu/matmul.cpp
}

int num_threads() { return std::min(omp_get_max_threads(), MAX_THREADS); }

std::string blas_config() {
  const char* config = openblas_get_config();  // starts with "OpenBLAS <version>"
  return config ? config : "OpenBLAS (unknown build)";
}

}  // namespace engine::cpu
