// The one point every op passes through on its way to the code that runs.
//
// Each op's dispatch function (raw::X in core/ops/<family>.cpp) calls dispatch() with its
// output tensor, a description of the call, and one callable per implementation:
//
//   void raw::matmul(a, ta, b, tb, c, alpha, beta) {
//     dispatch(c, [&] { return matmul_call(a, ta, b, tb, c); },
//              [&] { cpu::matmul(a, ta, b, tb, c, alpha, beta); },
//              [&] { ENGINE_CUDA(cuda::matmul(a, ta, b, tb, c, alpha, beta)); },
//              [&] { ENGINE_CUDA(vendor::matmul(a, ta, b, tb, c, alpha, beta)); });
//   }
//
// The output's device picks the implementation: the CPU's, or the GPU's, or (where the op has
// one and --device cudnn is on: DeviceServices::vendor_libraries) the vendor library's.
// The description (the op's name, its operands' sizes and its cost: core/op_cost.h) is only
// worked out while an OpHook watches the device: --profile times each call (core/profiler.h),
// --sync-check waits after each one (core/sync_check.h). Hooks are chosen per run, by device,
// and read at every call, so every op of the run is seen, whenever its tensors were made.
#pragma once
#include <string>

#include "core/device.h"
#include "core/device_services.h"
#include "core/op_cost.h"
#include "core/tensor.h"

namespace engine {

// One op call, as a hook sees it.
struct OpCall {
  const char* op;     // "matmul"
  std::string shape;  // its operands' sizes: "32x784 @ 784x128"
  OpCost cost;        // its FLOPs and bytes, from the shapes
};

// The implementation's call, for a hook to run once: a reference to a callable, without
// std::function's allocation.
class OpRun {
 public:
  template <typename Call>
  explicit OpRun(Call& call) : call_(&call), run_([](void* c) { (*static_cast<Call*>(c))(); }) {}
  void operator()() const { run_(call_); }

 private:
  void* call_;
  void (*run_)(void*);
};

// Watches every op and tensor copy on a device: runs `run` exactly once (or lets an
// exception out), doing what it likes around it.
class OpHook {
 public:
  virtual ~OpHook() = default;
  virtual void around_op(const OpCall& call, const OpRun& run) = 0;
};

// From now on every op on `device` goes through `hook`, which must live until the process
// ends. A hook added later runs outside the earlier ones (--profile, added after
// --sync-check, times the checked calls). Call it at start-up, before any other thread exists.
void add_op_hook(Device device, OpHook* hook);
// Whether any hook watches `device` (then DeviceServices::capture records no graph).
bool has_op_hooks(Device device);

namespace detail {
void run_hooked(Device device, const OpCall& call, const OpRun& run);
[[noreturn]] void no_cuda_in_this_build();
}  // namespace detail

// Runs `run` on `device`, through the hooks if any: `describe` returns the OpCall.
template <typename Describe, typename Run>
void run_op(Device device, const Describe& describe, Run&& run) {
  if (!has_op_hooks(device)) {
    run();
    return;
  }
  detail::run_hooked(device, describe(), OpRun(run));
}

// A copy of `bytes` through `device`, watched by the hooks like an op: a profile row
// "copy host->device 1.2 MB", a --sync-check wait after it. Tensors copy through this
// (core/tensor.cpp), and so does the input prefetch (datasets/image_batches.cpp).
enum class Copy { host_to_device, device_to_host, within_device, pinned_host_to_device_async };
void copy_bytes(DeviceServices& device, Copy kind, void* dst, const void* src, size_t bytes);

// An op with two implementations: the CPU's and the GPU's.
template <typename Describe, typename Cpu, typename Gpu>
void dispatch(const Tensor& out, const Describe& describe, Cpu&& cpu, Gpu&& gpu) {
  const Device device = out.device();
  run_op(device, describe, [&] {
    if (device.is_cpu()) {
      cpu();
    } else {
      gpu();
    }
  });
}

// An op with a vendor-library variant too, run instead of the GPU's under --device cudnn.
template <typename Describe, typename Cpu, typename Gpu, typename Vendor>
void dispatch(const Tensor& out, const Describe& describe, Cpu&& cpu, Gpu&& gpu, Vendor&& vendor) {
  const Device device = out.device();
  run_op(device, describe, [&] {
    if (device.is_cpu()) {
      cpu();
    } else if (out.services().vendor_libraries()) {
      vendor();
    } else {
      gpu();
    }
  });
}

}  // namespace engine

// A call into kernels/, which a build without CUDA does not have: there no tensor lives on a
// GPU (device_services refuses one), so this branch is never taken.
#if defined(ENGINE_WITH_CUDA)
#define ENGINE_CUDA(call) call
#else
#define ENGINE_CUDA(call) ::engine::detail::no_cuda_in_this_build()
#endif
