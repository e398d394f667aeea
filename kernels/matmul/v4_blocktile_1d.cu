// v4: 1-D register blocking. Each thread computes a column of 8 outputs in registers.
//
// What changes from v3 (one output per thread, two shared loads per FMA): a thread now owns
// TM = 8 outputs stacked in one column, C[m .. m+7, n]. Per k step it reads one value of B
// from shared memory, keeps it in a register, and uses it for 8 FMAs, one per output; the 8
// values of A it pairs it with are the same for the whole warp (broadcasts). That is 9
// shared loads for 8 FMAs where v3 needed 16, so shared-memory traffic per FLOP roughly
// halves. The bigger 64 x 64 tile also halves global traffic per FLOP.
//
// Napkin math, 4096^3: 137 GFLOP. Global memory: per block of 512 threads, a 64 x 64 tile
// over K = 4096 moves 2 x 64 x 4096 x 4 B = 2 MB (L2 mostly) for 33.5 MFLOP: 16 FLOP/byte,
// twice v3's, enough to be compute-bound. Shared memory still is the limit: per k a warp
// issues 9 shared loads (8 broadcasts of As, one row of Bs) for 8 x 32 FMAs, ~57 FLOP per
// clock per SM at one load per clock (128 B/clock), ~15 TFLOP/s (~9 ms) on an H100/H200,
// about 1/4 of the FP32 peak. v5 goes further by making each A value feed several FMAs too.
//
// Tiles: 64 x 64 outputs per block, 8 deep in k, staged in shared memory as As[k][m] and
// Bs[k][n]; loaded so that consecutive threads read consecutive addresses whichever way an
// operand is stored. Every load and store is bounds-checked: any M, N, K is correct.
#include "kernels/cuda_check.h"
#include "kernels/matmul/gemm.h"

namespace engine::cuda::gemm {
namespace {

constexpr int BM = 64, BN = 64, BK = 8;
constexpr int TM = 8;  // outputs per thread, one column
constexpr int THREADS = BM * BN / TM;  // 512: 64 columns x 8 groups of 8 rows
static_assert(BM * BK == THREADS && BN * BK == THREADS, "one element of each tile per thread");

template <bool TA, bool TB>
__global__ void __launch_bounds__(THREADS) blocktile_1d_kernel(const Gemm g) {
  const GemmSlice s = slice_of(g);
  // As[k][m], Bs[k][n]: the inner loop reads a row of each, broadcast or consecutive. +4:
  // the stores of an operand loaded along k (an (M, K) A, a stored (N, K) B) land 68 floats
  // apart per k, which spreads a warp's 8 k x 4 elements over 32 banks (64 apart: 4 banks).
  __shared__ float As[BK][BM + 4];
  __shared__ float Bs[BK][BN + 4];
  const int tid = threadIdx.x;
  // A warp is 32 consecutive columns of one row group: As reads broadcast, Bs reads do not
  // conflict, and the stores of C are 32 consecutive floats.
  const int tx = tid % BN, ty = tid / BN;  // column tx, rows ty * TM .. ty * TM + TM - 1
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  float acc[TM] = {};
  for (int k0 = 0; k0 < s.K; k0 += BK) {
    // Each thread stages one element of the A tile (64 x 8) and one of the B tile (8 x 64).
    // Consecutive threads walk the operand's contiguous dimension: coalesced loads.
    const int am = TA ? tid % BM : tid / BK, ak = TA ? tid / BM : tid % BK;
    As[ak][am] = m0 + am < g.M && k0 + ak < s.K ? load_a<TA>(s.A, g.lda, m0 + am, k0 + ak) : 0.0f;
    const int bn = TB ? tid / BK : tid % BN, bk = TB ? tid % BK : tid / BN;
    Bs[bk][bn] = n0 + bn < g.N && k0 + bk < s.K ? load_b<TB>(s.B, g.ldb, k0 + bk, n0 + bn) : 0.0f;
    __syncthreads();  // the tiles are complete before anyone multiplies
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float b = Bs[k][tx];  // one shared load of B, reused for TM FMAs
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] += As[k][ty * TM + i] * b;
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }

  const int n = n0 + tx;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + ty * TM + i;
    if (m < g.M && n < g.N) store_c(s, m, n, acc[i]);
  }
}

}  // namespace

void v4_blocktile_1d(const Gemm& g, cudaStream_t stream) {
  dispatch_transposes(g, [&](auto ta, auto tb) {
    blocktile_1d_kernel<decltype(ta)::value, decltype(tb)::value>
        <<<tile_grid(g, BM, BN), THREADS, 0, stream>>>(g);
  });
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
