// One error macro family for every CUDA call (DESIGN.md section 4). A failure throws
// engine::Error naming the call, the file and the line, and CUDA's own description, e.g.
//   CUDA error: cudaMalloc(&ptr, bytes) failed at kernels/cuda_backend.cu:41: out of memory
// CHECK_LAUNCH() follows every kernel launch: it catches bad launch configurations at once;
// faults inside a kernel surface at the next synchronising call, which names itself.
#pragma once
#include <cuda_runtime.h>

#include "core/error.h"

namespace engine::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);

}  // namespace engine::cuda

#define CHECK_CUDA(call)                                                                    \
  do {                                                                                      \
    const cudaError_t check_cuda_status_ = (call);                                          \
    if (check_cuda_status_ != cudaSuccess)                                                  \
      ::engine::cuda::throw_cuda_error(check_cuda_status_, #call, __FILE__, __LINE__);      \
  } while (0)

#define CHECK_LAUNCH() CHECK_CUDA(cudaGetLastError())
