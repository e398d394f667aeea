// v5: 2-D register blocking. Each thread computes a 4 x 4 block of outputs in registers.
//
// What changes from v4 (1-D blocking, one thread -> a column of outputs): every value a
// thread reads from shared memory now feeds four FMAs instead of one or eight of one kind:
// per k step a thread loads 4 values of A and 4 of B (8 shared loads) for 16 FMAs, where v3
// loaded 2 for 1. Shared-memory bandwidth stops being the limit; the FMA units start to be.
//
// Napkin math, 4096^3: 137 GFLOP; at cuBLAS's ~51 TFLOP/s on an H100/H200, 2.7 ms. Per
// block of 256 threads, a 64 x 64 tile over K = 4096 moves 2 x 64 x 4096 x 4 B = 2 MB from
// global memory (L2 mostly) for 33.5 MFLOP: 16 FLOP/byte, enough to be compute-bound.
//
// Tiles: 64 x 64 outputs per block, 16 deep in k, staged in shared memory as As[k][m] and
// Bs[k][n]; loaded so that consecutive threads read consecutive addresses whichever way an
// operand is stored. Every load and store is bounds-checked: any M, N, K is correct.
#include "kernels/cuda_check.h"
#include "kernels/matmul/gemm.h"

namespace engine::cuda::gemm {
namespace {

constexpr int BM = 64, BN = 64, BK = 16;
constexpr int THREADS = 256;  // 16 x 16 threads, 4 x 4 outputs each
constexpr int TM = 4, TN = 4;

template <bool TA, bool TB>
__global__ void __launch_bounds__(THREADS) blocktile_2d_kernel(const Gemm g) {
  const GemmSlice s = slice_of(g);
  // As[k][m], Bs[k][n]: the inner loop reads a row of each, broadcast or consecutive.
  __shared__ float As[BK][BM + 4];  // +4: the transposing store of A spreads over banks
  __shared__ float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < s.K; k0 += BK) {
    // Each thread stages 4 elements of the A tile and 4 of the B tile (64 x 16 each).
#pragma unroll
    for (int i = 0; i < BM * BK / THREADS; ++i) {
      const int l = tid + i * THREADS;
      // Consecutive threads walk the operand's contiguous dimension: coalesced loads.
      const int am = TA ? l % BM : l / BK, ak = TA ? l / BM : l % BK;
      As[ak][am] = m0 + am < g.M && k0 + ak < s.K ? load_a<TA>(s.A, g.lda, m0 + am, k0 + ak) : 0.0f;
      const int bn = TB ? l / BK : l % BN, bk = TB ? l % BK : l / BN;
      Bs[bk][bn] = n0 + bn < g.N && k0 + bk < s.K ? load_b<TB>(s.B, g.ldb, k0 + bk, n0 + bn) : 0.0f;
    }
    __syncthreads();  // the tiles are complete before anyone multiplies
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
      // Rows ty, ty+16, ...: a warp's two ty values broadcast; columns tx, tx+16, ...:
      // consecutive lanes read consecutive banks.
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[k][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + ty + 16 * i;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + tx + 16 * j;
      if (m < g.M && n < g.N) store_c(s, m, n, acc[i][j]);
    }
  }
}

}  // namespace

void v5_blocktile_2d(const Gemm& g, cudaStream_t stream) {
  dispatch_transposes(g, [&](auto ta, auto tb) {
    blocktile_2d_kernel<decltype(ta)::value, decltype(tb)::value>
        <<<tile_grid(g, BM, BN), THREADS, 0, stream>>>(g);
  });
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
