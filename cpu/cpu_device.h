// The CPU as a device: plain host memory, copies that are memcpy, and an order of work that is
// program order (every op has finished when it returns). The ops themselves are free functions,
// one file per family: cpu/<family>.cpp defines what core/ops/<family>.h declares in namespace
// cpu (OpenBLAS sgemm for matmul, OpenMP loops for everything else). An op that needs another
// (conv2d a matmul, pooling a fill) calls its cpu:: function directly: the op has already
// passed its dispatch point (core/dispatch.h), and --profile counts it once. This header holds
// what those files share: the device, the thread team and the single-threaded sgemm.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/device_services.h"

namespace engine::cpu {

// Elements of an elementwise loop below which it runs on one thread: waking threads costs
// microseconds, more than a small loop takes (batch 32 x 128 = 4,096 elements is about a
// microsecond of work).
constexpr int64_t PARALLEL_GRAIN = 32768;

int num_threads();

// The team for a loop of `work` units: one thread below `grain`, otherwise all --threads.
// All or nothing, never a team sized to the work: libgomp keeps one pool, and a region that
// asks for a different number of threads than the last one re-docks the pool, putting
// threads to sleep and waking them again through the kernel: teams sized to the work made the
// seed-000 step much slower (measured: docs/results/mnist_mlp.md, "The CPU backend's thread
// team").
// Loops write `if (parallel : team > 1)`: a plain `if` on `parallel for simd` also switches
// off the simd part when false (OpenMP 5), which made Adam's loop scalar and 2x slower.
inline int team_size(int64_t work, int64_t grain) { return work < grain ? 1 : num_threads(); }

class CpuDevice final : public DeviceServices {
 public:
  CpuDevice();
  Device device() const override { return Device::cpu(); }
  std::string name() const override;

  CachingAllocator& allocator() override { return allocator_; }
  void copy_from_host(void* dst, const void* src, size_t bytes) override;
  void copy_to_host(void* dst, const void* src, size_t bytes) override;
  void copy_within(void* dst, const void* src, size_t bytes) override;
  // Every op has finished when it returns: there is nothing to wait for.
  void synchronize() override {}
  DeviceMemory memory_info() override;  // the host's memory

  // Plain memory and a copy done at once: the CPU computes where the data already is. So
  // every fence is reached as soon as it is recorded.
  void* allocate_pinned(size_t bytes) override;
  void free_pinned(void* pointer) override;
  void copy_from_pinned_async(void* dst, const void* src, size_t bytes) override;
  uint64_t record_fence() override { return 0; }
  void fence_wait(uint64_t fence) override { (void)fence; }
  bool fence_reached(uint64_t fence) override { return (void)fence, true; }

  // Host-clock timers: an op's work is done when it returns, so the clock at that moment is
  // the device's own time.
  std::unique_ptr<DeviceTimers> make_timers() override;
  MeasuredPeaks measure_peaks() override;

 private:
  CachingAllocator allocator_;
};

// The process-wide CPU device.
CpuDevice& device();

// --threads N: the OpenMP team size, which also splits every sgemm (cpu/matmul.cpp).
void set_num_threads(int threads);
// c = alpha op(a) op(b) + beta c on the calling thread (row-major, leading dimensions in
// elements): the building block of ops that split their work over the team themselves
// (matmul, conv2d).
void sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc);
// OpenBLAS' own description of its build, e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ... OpenMP".
std::string blas_config();

}  // namespace engine::cpu
