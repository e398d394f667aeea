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

// The engine picks one of four kernels by the shape of C and the --tf32 setting. Measured
// on an H100 (docs/kernels/matmul.md, kernel_bench, 2026-11-22 and -23):
//  - small outputs (the seed MLPs' 32 x 128, 784 x 128, 32 x 1000 ...): 64 x 64 tiles and
//    split-K. A 128 x 128 tile would leave most of a 32-row output empty and give the 132 SMs
//    a handful of blocks; v5 beat cuBLAS at every seed-MLP shape, v7 at none.
//  - large outputs (both sides >= LARGE): the warp-tiled kernel, 2x faster than v5 from
//    2048^3 on, with split-K only while its tiles cannot fill the SMs.
//  - outputs with at least a wave of 128 x 256 tiles (2048^2 has 128 for 132 SMs): the
//    cp.async big-tile kernel, 90-93% of cuBLAS from 2048^3 on where v7 reaches 76-80%. At
//    1024^3 its 32 tiles leave three quarters of the SMs idle and it loses to v7 + split-K.
//  - large outputs with --tf32: the tensor-core kernel. Small outputs stay FP32 even then:
//    there the time is latency, not arithmetic, and FP32 is exact.
struct EngineKernel {
  const char* version;  // a name in the ladder's table (kernels/matmul/versions.cu)
  int tile_m, tile_n;   // its output tile
  int min_slice;        // shallowest K slice worth a block: several of its K tiles
};
constexpr EngineKernel SMALL{"v5_blocktile_2d", 64, 64, 32};
constexpr EngineKernel LARGE_FP32{"v7_warptile", 128, 128, 128};
constexpr EngineKernel HUGE_FP32{"v8_async_bigtile", 128, 256, 128};
constexpr EngineKernel LARGE_TF32{"v9_tf32_mma", 128, 128, 128};
constexpr int LARGE = 512;     // M and N from which the large kernels win
constexpr int MAX_SLICES = 64;  // bounds the split-K workspace to 64 x M x N floats

const EngineKernel& kernel_for(int M, int N, bool tf32) {
  if (M < LARGE || N < LARGE) return SMALL;
  if (tf32) return LARGE_TF32;
  const int64_t huge_tiles = int64_t{(M + HUGE_FP32.tile_m - 1) / HUGE_FP32.tile_m} *
                             ((N + HUGE_FP32.tile_n - 1) / HUGE_FP32.tile_n);
  return huge_tiles >= multiprocessor_count() * 9 / 10 ? HUGE_FP32 : LARGE_FP32;
}

// How many slices of K: enough to give every SM a block, each slice at least min_slice deep.
// Short slices matter even when SMs are not short: a block walks its K tiles one after the
// other, each waiting ~1 us for global memory, so a lone (32 x 10 x 128) block took 15 us
// (ncu, H200, 2026-11-22) where four slices of 32 take a quarter of the chain.
int split_k_slices(const EngineKernel& kernel, int M, int N, int K) {
  const int tiles = ((M + kernel.tile_m - 1) / kernel.tile_m) * ((N + kernel.tile_n - 1) / kernel.tile_n);
  const int by_sms = (multiprocessor_count() + tiles - 1) / tiles;
  const int by_depth = K / kernel.min_slice;
  return std::max(1, std::min({by_sms, by_depth, MAX_SLICES}));
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

  const EngineKernel& kernel = kernel_for(g.M, g.N, tf32_);
  const int slices = split_k_slices(kernel, g.M, g.N, g.K);
  Tensor workspace;
  int used_slices = 1;
  if (slices > 1) {
    g.k_slice = ((g.K + slices - 1) / slices + 15) / 16 * 16;
    used_slices = (g.K + g.k_slice - 1) / g.k_slice;
    workspace = Tensor::empty({used_slices, M, N}, DType::F32, device());
    g.partial = workspace.data<float>();
  }
  matmul::version_named(kernel.version).launch(g, stream());
  if (used_slices > 1) matmul::split_k_reduce(g, used_slices, stream());
}

}  // namespace engine::cuda
