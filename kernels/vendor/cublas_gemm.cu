// Row-major through column-major cuBLAS: a row-major (r, c) matrix with row length ld is the
// column-major (c, r) matrix, its transpose, with leading dimension ld. So C = op(A) op(B)
// row-major is C^T = op(B)^T op(A)^T column-major: swap the operands, keep each one's flag.
#include "core/error.h"
#include "kernels/cuda_check.h"
#include "kernels/vendor/cublas_gemm.h"

namespace engine::cuda::vendor {
namespace {

cublasHandle_t handle() {
  static const cublasHandle_t h = [] {
    cublasHandle_t created = nullptr;
    CHECK_CUBLAS(cublasCreate(&created));
    return created;
  }();
  return h;
}

}  // namespace

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line) {
  throw DeviceError(detail::concat("cuBLAS error: ", call, " failed at ", file, ":", line, ": ",
                                   cublasGetStatusString(status)));
}

void cublas_sgemm(const matmul::Gemm& g, bool tf32, cudaStream_t stream) {
  ENGINE_CHECK(g.k_slice == 0, "cublas_sgemm: split-K is our kernels' business, not cuBLAS'");
  CHECK_CUBLAS(cublasSetStream(handle(), stream));
  const cublasOperation_t op_a = g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  CHECK_CUBLAS(cublasGemmEx(handle(), op_b, op_a, g.N, g.M, g.K, &g.alpha, g.B, CUDA_R_32F, g.ldb,
                            g.A, CUDA_R_32F, g.lda, &g.beta, g.C, CUDA_R_32F, g.ldc, compute,
                            CUBLAS_GEMM_DEFAULT));
}

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  CHECK_CUBLAS(cublasGetProperty(MAJOR_VERSION, &major));
  CHECK_CUBLAS(cublasGetProperty(MINOR_VERSION, &minor));
  CHECK_CUBLAS(cublasGetProperty(PATCH_LEVEL, &patch));
  return detail::concat("cuBLAS ", major, ".", minor, ".", patch);
}

}  // namespace engine::cuda::vendor
