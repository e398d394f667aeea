// v1: naive. One thread per output element; every operand value comes from global memory.
//
// What this version is: the loop a textbook writes, C[m, n] = sum over k of op(A)[m, k] *
// op(B)[k, n], one thread per (m, n), with the thread mapping a first guess picks:
// threadIdx.x, the index that varies fastest within a warp, walks the rows m. So the 32
// threads of a warp read A at 32 different rows (addresses lda floats apart): each load
// instruction touches 32 cache lines and uses 4 bytes of each, where a coalesced one touches
// one. The stores of C are strided the same way. B[k, n] is the same for the whole warp (one
// n per warp): a broadcast. That is the lesson: the work is right, the access pattern is not.
// (With a transposed A, stored (K, M), the reads of A happen to run along m and coalesce;
// the stores of C never do.) v2 swaps the mapping.
//
// Napkin math, 4096^3: 137 GFLOP, 2 x 4096^3 = 137 G loads of 4 bytes (550 GB requested);
// 0.25 FLOP/byte at the level of load instructions. Caches absorb most of the bytes (the
// block's 32 warps read the same 32 rows of A), so the bound is the load path: each warp
// load of A costs ~32 L1 wavefronts (one per cache line) against ~1 for a coalesced load:
// ~33 wavefronts per k step of a warp (32 FMAs). At ~one wavefront per clock per SM (132 SMs,
// ~1.98 GHz on an H100/H200) that is ~2 FLOP per clock per SM: ~0.5 TFLOP/s, ~0.3 s, under
// 1% of the FP32 peak (~67 TFLOP/s).
//
// Blocks: 32 x 32 threads, one output each; blockIdx.x picks 32 columns, blockIdx.y 32 rows
// (tile_grid). Threads outside M x N return at once: any M, N, K is correct.
#include "kernels/cuda_check.h"
#include "kernels/matmul/gemm.h"

namespace engine::cuda::gemm {
namespace {

constexpr int BM = 32, BN = 32;  // outputs per block, one per thread

template <bool TA, bool TB>
__global__ void __launch_bounds__(BM * BN) naive_kernel(const Gemm g) {
  const GemmSlice s = slice_of(g);
  // The naive mapping: consecutive threads of a warp (threadIdx.x) take consecutive rows m,
  // so their reads of an (M, K) A and their writes of C are lda and ldc floats apart.
  const int m = blockIdx.y * BM + threadIdx.x;
  const int n = blockIdx.x * BN + threadIdx.y;
  if (m >= g.M || n >= g.N) return;

  float acc = 0.0f;
  for (int k = 0; k < s.K; ++k) acc += load_a<TA>(s.A, g.lda, m, k) * load_b<TB>(s.B, g.ldb, k, n);
  store_c(s, m, n, acc);
}

}  // namespace

void v1_naive(const Gemm& g, cudaStream_t stream) {
  dispatch_transposes(g, [&](auto ta, auto tb) {
    naive_kernel<decltype(ta)::value, decltype(tb)::value>
        <<<tile_grid(g, BM, BN), dim3(BM, BN), 0, stream>>>(g);
  });
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
