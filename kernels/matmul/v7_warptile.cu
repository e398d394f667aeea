// v7: warp tiling and double buffering. Each warp owns a 32 x 64 sub-tile of the block's
// 128 x 128 tile, each thread 8 x 8 outputs of its warp's; the next K tile is loaded from
// global memory while the current one is multiplied.
//
// What changes from v6: two things. (1) Warp tiles. In v6 a warp's 32 threads covered an
// 8 x 128 strip of the block tile (two rows of 16 threads), so per k step the warp read 16
// values of A and all 128 of B from shared memory: 144 distinct floats for its 2048 FMAs. Here
// the lanes of a warp are arranged 4 x 8 over a 32 x 64 sub-tile: 32 + 64 = 96 distinct floats
// for the same 2048 FMAs, a third fewer shared-memory bytes (the same argument as square block
// tiles, one level down), and every LDS.128 is a broadcast or 128 consecutive bytes per
// quarter-warp: no bank conflicts. (2) Double buffering. v6 loaded a tile, waited at a barrier,
// multiplied, waited again: while loads were in flight the block's FMA units idled, and only
// the other resident block could fill the gap. Here shared memory holds two stages; the global
// loads of tile t+1 are issued into registers while tile t is multiplied (A's before the
// first half of its 16 k steps, B's before the second), so their latency (hundreds of cycles
// from L2 or DRAM) hides behind 512 FMAs per thread, and they are written to the other stage
// afterwards: one barrier per tile instead of two. BK doubles to 16, halving the barriers
// again per FLOP.
//
// Napkin math, 4096^3: 137 GFLOP; cuBLAS ~51 TFLOP/s (2.7 ms) on an H100/H200, the FP32 pipes'
// peak ~60-67 TFLOP/s at the clocks they hold (132 SMs x 128 FMA/clk x 2 FLOP). DRAM: 201 MB
// at 3 TB/s, 67 us: 680 FLOP/byte, compute-bound. L2 -> shared: 4 MB per 128 x 128 block over
// K = 4096, 32 FLOP/byte, 4.3 GB in all: ~0.7 ms at an L2 bandwidth of ~6 TB/s (others'
// measurements, not ours), spread over and hidden behind the 2.7 ms of FMAs.
// Shared -> registers per k step and warp: 4 LDS.128, each a broadcast or 128 consecutive
// bytes, so ~4 wavefronts of 128 B, for 64 FFMA instructions, which take 64 issue cycles on
// the warp's sub-partition; the SM's shared memory serves one wavefront per cycle to four
// sub-partitions, so it runs at ~25% of its rate and the FFMA issue rate is the limit, as it
// must be for an FP32 GEMM to approach peak.
//
// Tiles: 128 x 128 x 16 per block, 256 threads = 8 warps as 4 (m) x 2 (n), warp tile 32 x 64.
// Lane (lm, ln) = (lane / 8, lane % 8) owns rows {4 lm .. 4 lm + 3} and {16 + 4 lm .. +3} of
// its warp's tile and columns {4 ln .. +3} and {32 + 4 ln .. +3}: two 4-wide halves in each
// direction, so a quarter-warp's B reads are 128 consecutive bytes and its A reads one address.
// Any M, N, K and all four transposes; float4 global loads when rows are 16-byte aligned
// (float4_rows.h), scalar loads otherwise, and for groups cut by the matrix edge.
#include "kernels/cuda_check.h"
#include "kernels/matmul/float4_rows.h"
#include "kernels/matmul/gemm.h"

namespace engine::cuda::gemm {
namespace {

constexpr int BM = 128, BN = 128, BK = 16;
constexpr int THREADS = 256;
constexpr int WM = 32, WN = 64;                      // warp tile
constexpr int WARPS_N = BN / WN;                     // 2 (and BM / WM = 4 warps down m)
constexpr int TM = 8, TN = 8;                        // per thread: 2 x 2 blocks of 4 x 4
constexpr int LANES_M = WM / TM, LANES_N = WN / TN;  // 4 x 8 lanes
static_assert((BM / WM) * (BN / WN) * 32 == THREADS && LANES_M * LANES_N == 32, "warp layout");
// Row padding of the shared tiles, in floats: 4 keeps each row 16-byte aligned for LDS.128
// and STS.128, and makes the transposing stores conflict-free (see stage_tile).
constexpr int PAD = 4;
// float4 groups of each tile per thread: 128 x 16 floats = 512 groups, 2 per thread.
constexpr int LOADS = BM * BK / 4 / THREADS;
static_assert(LOADS == 2 && BM == BN, "group_of and stage_tile assume 2 loads, square tiles");

// Which stored row and which 4-element group of it load i of thread tid reads, for a tile
// whose stored rows are ROW_LEN floats long (BK: the operand is stored with K contiguous;
// 128: with M or N contiguous). Neighbouring threads take neighbouring addresses:
//   ROW_LEN 128: a warp reads one stored row, 512 consecutive bytes; the second load is the
//     row 8 further on.
//   ROW_LEN 16: half-warps read 16 consecutive rows, lanes l and l + 16 the two 16-byte halves
//     of one 32-byte sector of a row; the second load the row's other 8 floats. Reading 8
//     floats of 32 rows at once would coalesce as well, but this order also makes the
//     transposed stores into shared memory conflict-free (stage_tile).
template <int ROW_LEN>
__device__ __forceinline__ void group_of(int tid, int i, int& row, int& col) {
  static_assert(ROW_LEN == BK || ROW_LEN == BM, "tiles are 128 x 16 or 16 x 128");
  if constexpr (ROW_LEN == BK) {
    row = tid / 32 * 16 + tid % 16;
    col = (tid / 16 % 2) * 4 + i * 8;
  } else {
    row = tid / 32 + i * (THREADS / 32);
    col = tid % 32 * 4;
  }
}

// Global -> registers: 2 float4 of the A tile at depth k0 (load_b_tile: of the B tile) per
// thread. Groups outside the matrix read as zeros (load_row4's count).
template <bool TA, bool VEC>
__device__ __forceinline__ void load_a_tile(const Gemm& g, const GemmSlice& s, int m0, int k0,
                                            float4 (&r)[LOADS]) {
#pragma unroll
  for (int i = 0; i < LOADS; ++i) {
    int row, col;
    if (TA) {  // stored (K, M): rows are k, groups run along m
      group_of<BM>(threadIdx.x, i, row, col);
      const int k = k0 + row, m = m0 + col;
      r[i] = load_row4<VEC>(s.A + int64_t{k} * g.lda + m, k < s.K ? g.M - m : 0);
    } else {  // stored (M, K): rows are m, groups run along k
      group_of<BK>(threadIdx.x, i, row, col);
      const int m = m0 + row, k = k0 + col;
      r[i] = load_row4<VEC>(s.A + int64_t{m} * g.lda + k, m < g.M ? s.K - k : 0);
    }
  }
}
template <bool TB, bool VEC>
__device__ __forceinline__ void load_b_tile(const Gemm& g, const GemmSlice& s, int n0, int k0,
                                            float4 (&r)[LOADS]) {
#pragma unroll
  for (int i = 0; i < LOADS; ++i) {
    int row, col;
    if (TB) {  // stored (N, K): rows are n, groups run along k
      group_of<BK>(threadIdx.x, i, row, col);
      const int n = n0 + row, k = k0 + col;
      r[i] = load_row4<VEC>(s.B + int64_t{n} * g.ldb + k, n < g.N ? s.K - k : 0);
    } else {  // stored (K, N): rows are k, groups run along n
      group_of<BN>(threadIdx.x, i, row, col);
      const int k = k0 + row, n = n0 + col;
      r[i] = load_row4<VEC>(s.B + int64_t{k} * g.ldb + n, k < s.K ? g.N - n : 0);
    }
  }
}

// Registers -> shared: Xs[k][x] (x = m or n) whichever way the operand is stored; TRANSPOSED:
// stored with K contiguous, i.e. A as (M, K) or B as (N, K). A group along x is one STS.128; a
// group along k is written down a column, 4 stores: a half-warp writes 16 consecutive rows x
// at one k and the other half-warp the same rows at k + 4, with rows of 132 floats 4 * 132 =
// 528 = 16 (mod 32) banks apart, so the 32 stores fall in 32 different banks.
template <bool TRANSPOSED>
__device__ __forceinline__ void stage_tile(float (*Xs)[BM + PAD], const float4 (&r)[LOADS]) {
#pragma unroll
  for (int i = 0; i < LOADS; ++i) {
    int row, col;
    if (TRANSPOSED) {
      group_of<BK>(threadIdx.x, i, row, col);
      Xs[col + 0][row] = r[i].x;
      Xs[col + 1][row] = r[i].y;
      Xs[col + 2][row] = r[i].z;
      Xs[col + 3][row] = r[i].w;
    } else {
      group_of<BM>(threadIdx.x, i, row, col);
      *reinterpret_cast<float4*>(&Xs[row][col]) = r[i];
    }
  }
}

// (THREADS, 2): at most 128 registers a thread, so that two blocks (16 warps, 4 per scheduler)
// share an SM: while one warp waits on a shared load or a barrier, another issues FMAs.
template <bool TA, bool TB, bool VEC>
__global__ void __launch_bounds__(THREADS, 2) warptile_kernel(const Gemm g) {
  const GemmSlice s = slice_of(g);
  // Two stages of As[k][m] and Bs[k][n]: tile t is multiplied out of one while tile t + 1 is
  // written into the other. 2 x 2 x 16 x 132 x 4 B = 33 KB, under the 48 KB static limit.
  __shared__ __align__(16) float As[2][BK][BM + PAD];
  __shared__ __align__(16) float Bs[2][BK][BN + PAD];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN;  // warp tile's corner
  const int lm = lane / LANES_N, ln = lane % LANES_N;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  float4 r[LOADS];  // part of tile t + 1 on its way from global to shared memory
  load_a_tile<TA, VEC>(g, s, m0, 0, r);
  stage_tile<!TA>(As[0], r);
  load_b_tile<TB, VEC>(g, s, n0, 0, r);
  stage_tile<TB>(Bs[0], r);
  __syncthreads();  // stage 0 is complete before anyone multiplies it

  float acc[TM][TN] = {};
  int stage = 0;
  for (int k0 = 0; k0 < s.K; k0 += BK) {
    const bool more = k0 + BK < s.K;  // uniform across the block
    // The next tile goes to the other stage, last read in the previous iteration, before the
    // barrier that ended it: it may be written at any time during this one. A's part is loaded
    // now and stored after the first half of the k steps, B's loaded then and stored at the
    // end: each load has half a tile of FMAs (512 per thread) to arrive, and only 8 staging
    // registers are live at a time. (Both at once needs 16; ptxas then spilled under the
    // 128-register cap.)
    if (more) load_a_tile<TA, VEC>(g, s, m0, k0 + BK, r);
#pragma unroll
    for (int half = 0; half < 2; ++half) {
#pragma unroll
      for (int k = half * BK / 2; k < (half + 1) * BK / 2; ++k) {
        const float* a_row = &As[stage][k][wm + 4 * lm];
        const float* b_row = &Bs[stage][k][wn + 4 * ln];
        const float4 a0 = *reinterpret_cast<const float4*>(a_row);
        const float4 a1 = *reinterpret_cast<const float4*>(a_row + WM / 2);
        const float4 b0 = *reinterpret_cast<const float4*>(b_row);
        const float4 b1 = *reinterpret_cast<const float4*>(b_row + WN / 2);
        const float a[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        const float b[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
      }
      if (more && half == 0) {
        stage_tile<!TA>(As[stage ^ 1], r);
        load_b_tile<TB, VEC>(g, s, n0, k0 + BK, r);
      }
    }
    if (more) stage_tile<TB>(Bs[stage ^ 1], r);
    // One barrier per tile: the next stage is complete before anyone multiplies it, and
    // everyone is done with this stage before the next iteration's stores overwrite it.
    __syncthreads();
    stage ^= 1;
  }

  // acc[i][j] is the output at row wm + (i / 4) * 16 + 4 lm + i % 4 of the block tile, column
  // wn + (j / 4) * 32 + 4 ln + j % 4. Rows outside the matrix are skipped whole: with one test
  // per element ptxas computes all 64 addresses at once and spills under the 128-register cap.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + wm + (i / 4) * (WM / 2) + 4 * lm + i % 4;
    if (m >= g.M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + wn + (j / 4) * (WN / 2) + 4 * ln + j % 4;
      if (n < g.N) store_c(s, m, n, acc[i][j]);
    }
  }
}

}  // namespace

void v7_warptile(const Gemm& g, cudaStream_t stream) {
  const bool vec = rows_allow_float4(g);
  dispatch_transposes(g, [&](auto ta, auto tb) {
    constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
    if (vec)
      warptile_kernel<TA, TB, true><<<tile_grid(g, BM, BN), THREADS, 0, stream>>>(g);
    else
      warptile_kernel<TA, TB, false><<<tile_grid(g, BM, BN), THREADS, 0, stream>>>(g);
  });
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
