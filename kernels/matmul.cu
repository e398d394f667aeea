// The engine's GPU matmul: C = alpha * op(A) @ op(B) + beta * C through the best version of
// the SGEMM ladder (kernels/matmul/), with split-K for outputs too small to fill the GPU.
//
// Napkin math, the seed-000 shapes (batch 32):
//   small forward  (32 x 784) @ (784 x 128):   6.4 MFLOP, 0.5 MB of operands
//   wide forward   (32 x 1000) @ (1000 x 1000): 64 MFLOP, 4.1 MB
//   wide dW        (1000 x 32) @ (32 x 1000):   64 MFLOP, 4.1 MB written
// At 51 TFLOP/s (cuBLAS FP32 on an H100) the wide GEMMs are ~1.3 us of arithmetic and ~1.4
// us of memory: small, and so limited by how many SMs get work and by latency. A (32 x 1000)
// output is only 16 tiles of 64 x 64 for 132 SMs, hence split-K: slices of K each write a
// partial product, and one more kernel adds them in a fixed order (deterministic, unlike
// atomics) and applies alpha and beta.
#include <algorithm>

#include "kernels/cuda_backend.h"
#include "kernels/dot.h"
#include "kernels/launch.h"
#include "kernels/matmul/gemm.h"

namespace engine::cuda {
namespace {

// The version every engine matmul uses (FP32, as the articles compute).
constexpr const char* ENGINE_VERSION = "v5_blocktile_2d";
constexpr int TILE = 64;  // the output tile of ENGINE_VERSION

// How many slices of K: enough to give every SM a block, each slice at least 32 deep.
// Short slices matter even when SMs are not short: a block walks its K tiles one after the
// other, each waiting ~1 us for global memory, so a lone (32 x 10 x 128) block took 15 us
// (ncu, H200, 2026-11-22) where four slices of 32 take a quarter of the chain.
int split_k_slices(int M, int N, int K) {
  const int tiles = ((M + TILE - 1) / TILE) * ((N + TILE - 1) / TILE);
  const int by_sms = (multiprocessor_count() + tiles - 1) / tiles;
  const int by_depth = K / 32;
  return std::max(1, std::min({by_sms, by_depth, 16}));
}

}  // namespace

void CudaBackend::matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b,
                         Tensor& c, float alpha, float beta) {
  const int64_t M = c.dim(0), N = c.dim(1);
  const int64_t K = transpose_a ? a.dim(0) : a.dim(1);
  ENGINE_CHECK(M < (int64_t{1} << 31) && N < (int64_t{1} << 31) && K < (int64_t{1} << 31),
               "matmul: dimensions beyond 2^31 are not supported");
  if (M == 0 || N == 0) return;
  if (K == 0) {  // an empty sum: C = beta * C
    axpby(0.0f, c, beta, c);
    return;
  }
  if (M == 1 && N == 1) {  // (1 x K) @ (K x 1): a memory-bound dot product (kernels/dot.cu)
    dot(a, b, c, alpha, beta);
    return;
  }
  matmul::Gemm g;
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

  const int slices = split_k_slices(g.M, g.N, g.K);
  Tensor workspace;
  int used_slices = 1;
  if (slices > 1) {
    g.k_slice = ((g.K + slices - 1) / slices + 15) / 16 * 16;
    used_slices = (g.K + g.k_slice - 1) / g.k_slice;
    workspace = Tensor::empty({used_slices, M, N}, DType::F32, device());
    g.partial = workspace.data<float>();
  }
  static const matmul::Version& version = matmul::version_named(ENGINE_VERSION);
  version.launch(g, stream());
  if (used_slices > 1) matmul::split_k_reduce(g, used_slices, stream());
}

}  // namespace engine::cuda
