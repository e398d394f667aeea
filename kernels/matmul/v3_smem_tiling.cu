// v3: shared-memory tiling. A block stages 32 x 32 tiles of op(A) and op(B) in shared memory.
//
// What changes from v2 (every FMA reads its two operands from global memory, reuse left to
// L1): the block loads a 32 x 32 tile of op(A) and one of op(B) into shared memory, one
// element per thread, then each thread runs 32 FMAs out of shared memory. A value fetched
// from global memory now serves 32 threads by construction instead of by luck of the cache:
// global load instructions drop 32x (two per thread per 32 k instead of two per k), and the
// 64 shared loads that replace them never miss and wait less. Staging also frees the load
// from the compute mapping: tiles are loaded along whichever dimension an operand is stored
// contiguously, so a transposed A or B coalesces too (v2's transposed B did not).
//
// Napkin math, 4096^3: 137 GFLOP. Global memory: per block, a 32 x 32 tile over K = 4096
// moves 2 x 32 x 4096 x 4 B = 1 MB (L2 mostly) for 8.4 MFLOP: 8 FLOP/byte; the 16384
// blocks move 17 GB in all, a few ms of L2 bandwidth, not yet the limit. Shared memory is:
// per k a warp issues two shared loads (a broadcast of As, a row of Bs) for 32 FMAs, 0.25
// FLOP per byte of shared traffic. At 128 B per clock per SM (132 SMs, ~1.98 GHz on an
// H100/H200; ~33 TB/s) that caps it at ~8 TFLOP/s (~17 ms), the same ceiling as v2's L1,
// now reached more nearly; v4 raises it by reusing each shared value for several FMAs.
//
// Tiles: 32 x 32 outputs per block, 32 deep in k, one output per thread (1024 threads),
// staged as As[m][k] and Bs[k][n]. Every load and store is bounds-checked (zero-fill
// outside): any M, N, K is correct.
#include "kernels/cuda_check.h"
#include "kernels/matmul/gemm.h"

namespace engine::cuda::gemm {
namespace {

constexpr int BM = 32, BN = 32, BK = 32;
constexpr int THREADS = BM * BN;  // 32 x 32 threads, one output each
static_assert(BM == BN && BN == BK, "the tile loads map (tx, ty) onto either side of a tile");

template <bool TA, bool TB>
__global__ void __launch_bounds__(THREADS) smem_tiling_kernel(const Gemm g) {
  const GemmSlice s = slice_of(g);
  // As[m][k], Bs[k][n]: the inner loop reads As[ty][k] (one address per warp, a broadcast)
  // and Bs[k][tx] (consecutive lanes, consecutive banks). +1: a transposed operand is stored
  // down a column of the tile, 33 floats apart, which spreads a warp's stores over 32 banks
  // (32 apart would put them all in one bank).
  __shared__ float As[BM][BK + 1];
  __shared__ float Bs[BK][BN + 1];
  const int tid = threadIdx.x;
  const int tx = tid % BN, ty = tid / BN;  // output column and row within the tile
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  float acc = 0.0f;
  for (int k0 = 0; k0 < s.K; k0 += BK) {
    // Each thread stages one element of each tile. Consecutive threads (tx) walk the
    // operand's contiguous dimension: k for an (M, K) A, m for a stored (K, M) A; n for a
    // (K, N) B, k for a stored (N, K) B. Every warp reads 128 consecutive bytes.
    const int am = TA ? tx : ty, ak = TA ? ty : tx;
    As[am][ak] = m0 + am < g.M && k0 + ak < s.K ? load_a<TA>(s.A, g.lda, m0 + am, k0 + ak) : 0.0f;
    const int bk = TB ? tx : ty, bn = TB ? ty : tx;
    Bs[bk][bn] = n0 + bn < g.N && k0 + bk < s.K ? load_b<TB>(s.B, g.ldb, k0 + bk, n0 + bn) : 0.0f;
    __syncthreads();  // the tiles are complete before anyone multiplies
#pragma unroll
    for (int k = 0; k < BK; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }

  const int m = m0 + ty, n = n0 + tx;
  if (m < g.M && n < g.N) store_c(s, m, n, acc);
}

}  // namespace

void v3_smem_tiling(const Gemm& g, cudaStream_t stream) {
  dispatch_transposes(g, [&](auto ta, auto tb) {
    smem_tiling_kernel<decltype(ta)::value, decltype(tb)::value>
        <<<tile_grid(g, BM, BN), THREADS, 0, stream>>>(g);
  });
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
