// Row-major through column-major cuBLAS: a row-major (r, c) matrix with row length ld is the
// column-major (c, r) matrix, its transpose, with leading dimension ld. So C = op(A) op(B)
// row-major is C^T = op(B)^T op(A)^T column-major: swap the operands, keep each one's flag.
// Also the op's cuBLAS variant, vendor::matmul (core/ops/matmul.h), at the end.
#include "core/error.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "kernels/cuda_check.h"
#include "kernels/cuda_device.h"
#include "kernels/launch.h"
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

void cublas_sgemm(const gemm::Gemm& g, bool tf32, cudaStream_t stream) {
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

// The matmul of --device cudnn, which the dispatch point calls instead of cuda::matmul
// (kernels/matmul.cu): the same checks and empty cases, then every shape on cuBLAS, in TF32
// where the device has it switched on (set_tf32). (1 x K) @ (K x 1) too: the yardstick takes
// cuBLAS as it is.
namespace engine::vendor {

void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta) {
  const int64_t M = c.dim(0), N = c.dim(1);
  const int64_t K = transpose_a ? a.dim(0) : a.dim(1);
  ENGINE_CHECK(M < (int64_t{1} << 31) && N < (int64_t{1} << 31) && K < (int64_t{1} << 31),
               "matmul: dimensions beyond 2^31 are not supported");
  if (M == 0 || N == 0) return;
  if (K == 0) {  // an empty sum: C = beta * C, on our kernel (as cuda::matmul does)
    cuda::axpby(0.0f, c, beta, c);
    return;
  }
  cuda::gemm::Gemm g;
  g.M = static_cast<int>(M);
  g.N = static_cast<int>(N);
  g.K = static_cast<int>(K);
  g.A = a.data<float>();
  g.lda = static_cast<int>(a.dim(1));
  g.transpose_a = transpose_a;
  g.B = b.data<float>();
  g.ldb = static_cast<int>(b.dim(1));
  g.transpose_b = transpose_b;
  g.C = c.data<float>();
  g.ldc = g.N;
  g.alpha = alpha;
  g.beta = beta;
  cuda::vendor::cublas_sgemm(g, cuda::device_of(c).tf32(), cuda::stream());
}

}  // namespace engine::vendor
