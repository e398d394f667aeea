// What a device offers besides ops: memory, copies, the order of work (fences, timers), graph
// capture, a probe of its peaks and its settings (TF32, the vendor libraries). The CPU
// (cpu/cpu_device.h) and each GPU (kernels/cuda_device.h) implement it once; ops do not live
// here: each op is a function of its own family (core/ops/), which picks the CPU or the GPU
// implementation at one dispatch point (core/dispatch.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/allocator.h"
#include "core/device.h"

namespace engine {

// How much memory a device has left for this process (DeviceServices::memory_info), in bytes.
struct DeviceMemory {
  // What new tensors can still get: memory nobody holds, plus the blocks this process's
  // caching allocator keeps for reuse.
  size_t free_bytes = 0;
  size_t total_bytes = 0;  // the device's whole memory; 0 where the device cannot tell
  bool known() const { return total_bytes > 0; }
};

// What a device does at best, measured on it: the denominators of every "% of peak" in a
// profile (core/profiler.h).
struct MeasuredPeaks {
  double flops_per_s = 0.0;     // FP32 multiply-adds (2 FLOPs each) per second
  double bytes_per_s = 0.0;     // memory copy bandwidth, bytes read + written
  double launch_seconds = 0.0;  // the floor under one op: a kernel launch, or waking threads
  // Copies between pinned host memory and the device, each way (bytes moved per second); 0
  // where there is no such copy (the CPU).
  double host_to_device_bytes_per_s = 0.0;
  double device_to_host_bytes_per_s = 0.0;
};

// Timestamps in the device's order of work (CUDA events on a GPU, so a span is the device's own
// time, not the host's launches; the host clock on the CPU). Each user makes its own set
// (DeviceServices::make_timers), so --profile and the epoch breakdown never share one.
class DeviceTimers {
 public:
  virtual ~DeviceTimers() = default;
  // A timestamp behind the work queued so far; its id counts up from 0 after reset().
  virtual uint64_t record() = 0;
  // Seconds from timer `start` to timer `end`; waits until the device has reached `end`.
  virtual double seconds(uint64_t start, uint64_t end) = 0;
  // Forgets every timer, so their ids and events can be used again.
  virtual void reset() = 0;
};

// A recorded training step (DeviceServices::capture); replay() runs it again on the device,
// asynchronously, with the same addresses.
class StepGraph {
 public:
  virtual ~StepGraph() = default;
  virtual void replay() = 0;
  virtual int64_t kernel_count() const = 0;  // kernel launches recorded in one step
};

class DeviceServices {
 public:
  virtual ~DeviceServices() = default;
  virtual Device device() const = 0;
  // "cpu (16 threads, OpenBLAS 0.3.21 ...)"; a GPU's name, with the vendor libraries while on.
  virtual std::string name() const = 0;

  // ---- memory ------------------------------------------------------------------------
  virtual CachingAllocator& allocator() = 0;
  // Raw copies. Tensors copy through core/tensor.h, which names each copy for --profile.
  virtual void copy_from_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_within(void* dst, const void* src, size_t bytes) = 0;
  virtual void synchronize() = 0;
  // Free and total memory (cudaMemGetInfo on a GPU; MemAvailable and MemTotal of the host on
  // the CPU); unknown (total 0) by default. The training apps' pre-flight check compares it
  // with nn/memory_estimate.h's estimate.
  virtual DeviceMemory memory_info() { return {}; }

  // ---- input prefetch (datasets/image_batches.h) ----------------------------------------
  // Page-locked host memory, which the device can copy from while the host works on (plain
  // memory on the CPU). Throws DeviceError when the host has none left.
  virtual void* allocate_pinned(size_t bytes) = 0;
  virtual void free_pinned(void* pointer) = 0;
  // Enqueues a copy of `bytes` from pinned host memory `src` to `dst` behind the work already
  // queued, and returns at once (the CPU copies now). `src` must stay unchanged until a fence
  // recorded after this call is reached.
  virtual void copy_from_pinned_async(void* dst, const void* src, size_t bytes) = 0;
  // A mark behind everything queued so far; fence_wait blocks the host until the device has
  // reached it. Fences are reused: at most one wait per fence.
  virtual uint64_t record_fence() = 0;
  virtual void fence_wait(uint64_t fence) = 0;
  // Whether the device has reached `fence`, without waiting.
  virtual bool fence_reached(uint64_t fence) = 0;

  // ---- measurement (core/profiler.h) ---------------------------------------------------
  virtual std::unique_ptr<DeviceTimers> make_timers() = 0;
  // Runs short probes (~0.1-0.5 s) of the FP32 rate, copy bandwidth and launch floor.
  virtual MeasuredPeaks measure_peaks() = 0;

  // ---- settings, read by the ops' implementations ----------------------------------------
  // Matmuls and convolutions on TF32 tensor cores (10-bit mantissa, ~1e-3 relative error)
  // instead of FP32. Off by default: the articles compute in FP32. Devices without TF32
  // ignore it.
  virtual void set_tf32(bool enabled) { (void)enabled; }
  // Whether TF32 is in use (asked for, on a device that has it).
  virtual bool tf32() const { return false; }
  // --device cudnn: matmul on cuBLAS, convolutions and pooling on cuDNN, everything else on
  // the engine's own kernels: the articles' "GPU + cuDNN" column and the yardstick for our
  // kernels. While on, the dispatch point (core/dispatch.h) runs an op's vendor:: variant
  // where it has one. Off by default; devices without vendor libraries refuse it (DeviceError).
  virtual void set_vendor_libraries(bool enabled);
  virtual bool vendor_libraries() const { return false; }
  // Op family -> the kernels it runs on this device in the current mode, for the run header
  // and --json ("matmul" -> "TF32 mma.sync ..."); chosen on a GPU by core/gpu_architecture.h.
  virtual std::vector<std::pair<std::string, std::string>> kernel_families() const { return {}; }
  // What the fused MLP kernels (core/ops/fused_mlp.h) have to work with here: the L2 cache
  // (the most bytes of parameters and Adam's moments they take on: nn/fused_mlp.h says why),
  // the SMs and the shared memory a block may have. All 0 where they cannot run (the CPU, a GPU
  // without cooperative launches).
  struct FusedMlpRoom {
    int64_t l2_bytes = 0, sms = 0, shared_bytes_per_block = 0;
  };
  virtual FusedMlpRoom fused_mlp_room() const { return {}; }

  // ---- whole-step replay (CUDA graphs) ----------------------------------------------------
  // Records everything `step` launches, without running it, into a graph that replay() runs
  // again with the same addresses. Memory that `step` allocates comes from a pool private
  // to the graph, so nothing outside can reuse it between replays. Returns nullptr where
  // the device cannot record (the CPU), or while an op hook watches the ops (core/dispatch.h:
  // a replay runs the kernels without calling the ops, so the hook would not see them).
  virtual std::unique_ptr<StepGraph> capture(const std::function<void()>& step) {
    (void)step;
    return nullptr;
  }
};

// The services of `device`; throws engine::Error if that device cannot be used (no CUDA
// backend built, no GPU present), with a one-line reason.
DeviceServices& device_services(Device device);

// Whether device_services(device) would succeed; `why_not` gets the reason when it would not.
bool device_available(Device device, std::string* why_not = nullptr);

}  // namespace engine
