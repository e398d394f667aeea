// cuBLAS SGEMM behind the same problem description as the ladder (kernels/matmul/gemm.h):
// the yardstick for our kernels in apps/kernel_bench and the matmul of `--device cudnn`
// (vendor::matmul, core/ops/matmul.h, defined in kernels/vendor/cublas_gemm.cu). Vendor code
// lives only in kernels/vendor/: our kernels never call it; the ops reach it only through
// vendor::matmul, which the dispatch point (core/dispatch.h) runs under --device cudnn.
#pragma once
#include <cublas_v2.h>

#include <string>

#include "kernels/matmul/gemm.h"

namespace engine::cuda::vendor {

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);

#define CHECK_CUBLAS(call)                                                                 \
  do {                                                                                     \
    const cublasStatus_t check_cublas_status_ = (call);                                    \
    if (check_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                     \
      ::engine::cuda::vendor::throw_cublas_error(check_cublas_status_, #call, __FILE__, __LINE__); \
  } while (0)

// C = alpha * op(A) op(B) + beta * C (row-major, g.k_slice must be 0), in FP32, or with
// TF32 tensor cores when `tf32` is set. Runs on `stream`.
void cublas_sgemm(const gemm::Gemm& g, bool tf32, cudaStream_t stream);

// "cuBLAS 13.1.0": the library that loaded.
std::string cublas_version();

}  // namespace engine::cuda::vendor
