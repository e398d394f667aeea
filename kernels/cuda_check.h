// One error macro family for every CUDA call. A failure throws
// engine::CudaError (a DeviceError: apps exit with status 2) naming the call, the file and the
// line, and CUDA's own description, e.g.
//   CUDA error: cudaMalloc(&splitk_counters_, counter_bytes) failed at
//   kernels/cuda_device.cu:199: out of memory
// CHECK_LAUNCH() follows every kernel launch: it catches bad launch configurations at once, and
// notes the launch's site (kernels/launch_site.h). Faults inside a kernel surface at the next
// synchronising call; their message names the last kernel launched before it, e.g.
//   GPU fault: an illegal memory access was encountered (cudaErrorIllegalAddress), reported by
//   cudaStreamSynchronize(g_stream) at kernels/cuda_device.cu:273; the last kernel launched
//   before that: strided_copy_kernel launched at kernels/strided_copy.cu:92 (kernels run
//   asynchronously, so it may be an earlier one: rerun with --sync-check to find the op exactly)
// CHECK_LAUNCH_NAMED("kernel") does the same and puts the kernel's name in those messages.
#pragma once
#include <cuda_runtime.h>

#include "core/error.h"
#include "kernels/launch_site.h"

namespace engine::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
// A launch's own error (a bad configuration), or a fault of an earlier kernel that it found.
[[noreturn]] void throw_launch_error(cudaError_t status, const LaunchSite* site);

// What CHECK_LAUNCH does after every launch: one call that only reads a flag, one store.
inline void check_launch(const LaunchSite* site) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw_launch_error(status, site);
  note_launch(site);
}

}  // namespace engine::cuda

#define CHECK_CUDA(call)                                                                    \
  do {                                                                                      \
    const cudaError_t check_cuda_status_ = (call);                                          \
    if (check_cuda_status_ != cudaSuccess)                                                  \
      ::engine::cuda::throw_cuda_error(check_cuda_status_, #call, __FILE__, __LINE__);      \
  } while (0)

// The site is a constant in static storage, one per launch site (and template instance).
#define CHECK_LAUNCH_NAMED(kernel_name)                                                     \
  do {                                                                                      \
    static constexpr ::engine::cuda::LaunchSite engine_launch_site_{__FILE__, __LINE__,     \
                                                                    kernel_name};           \
    ::engine::cuda::check_launch(&engine_launch_site_);                                     \
  } while (0)
#define CHECK_LAUNCH() CHECK_LAUNCH_NAMED(nullptr)
