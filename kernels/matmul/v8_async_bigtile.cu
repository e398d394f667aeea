// v8: large tiles and a cp.async pipeline, one block per SM. Each thread computes 16 x 8
// outputs of a 128 x 256 block tile; three K tiles are in shared memory at once, two of them
// still arriving while the third is multiplied.
//
// What changes from v7, and why. Nsight Compute at 4096^3 on an H100 says the FP32 GEMM is
// bound by instruction issue: cuBLAS (256 x 128 x 8 tiles, 8 warps, 254 registers, 1 block per
// SM) keeps the issue slots busier than v7 does with twice the warps, though both issue about
// the same instructions per FFMA (the readings: docs/kernels/matmul.md, the ladder table and
// "Behind the rungs' comments"). So the difference is stalls, and v7's suspect is shared
// memory: a warp's LDS.128 returns 512 bytes, 4 cycles of the SM's 128 bytes a cycle (2 when
// lane pairs share an address, see the lane layout), and v7 needs 4 of them per 64 FFMA cycles
// of its sub-partition, so at full FFMA rate the four sub-partitions would ask for 75-100% of
// it.
// Four changes:
//  (1) A 16 x 8 thread tile (v7: 8 x 8): 128 FFMA per 6 LDS.128 per k step, a quarter fewer
//      shared-memory cycles per FFMA, and 128 accumulators. With double-buffered fragments
//      (48 registers) and addresses that is ~240 registers: one block of 256 threads per SM
//      (__launch_bounds__(256, 1)), two warps per scheduler, like cuBLAS. Latency is then
//      hidden within each warp, not by other warps: step k + 1's fragments load while step k's
//      128 FFMAs run, and the next tile's first fragments load during the last step of the
//      current tile (the barrier moves before that step).
//  (2) cp.async (cp_async.h), three stages: an operand stored with its x (m or n) contiguous
//      is copied global -> shared with no registers and no STS, two tiles ahead. An operand
//      stored with k contiguous (A as (M, K): the common case) cannot be, since the shared
//      layout is Xs[k][x] and cp.async cannot transpose; it is staged through registers as in
//      v7, one tile ahead. The alternative, keeping such a tile k-contiguous in shared memory
//      and reading LDS.128 along k, needs the same 2 LDS.128 per k step for A, but holds 4 k
//      steps of A (32 registers) at once, a second inner loop, and for B^T 64 registers
//      (16 x 4): no room. Staging costs 1 LDG.128 and 4 STS.32 per thread and tile of A, 5
//      instructions per 1024 FFMA.
//  (3) A 128 x 256 block tile (cuBLAS: 256 x 128): with n the long side, the operand that is
//      staged in the common case, A, is the smaller one: 4 staging registers, not 8.
//  (4) BK = 8 (v7: 16), as cuBLAS: one barrier per 1024 FFMA of a warp already, and an
//      unrolled tile of ~1200 instructions (19 KB) rather than twice that for the instruction
//      cache.
//
// Napkin math, 4096^3: 137 GFLOP; cuBLAS 51.7 TFLOP/s (2.66 ms); the FP32 pipes' peak
// 132 SMs x 128 FMA/clk x 2 FLOP ~ 67 TFLOP/s at 1.98 GHz, most of which cuBLAS's FMA pipe
// uses. Per thread and tile (PTX, A (M, K), B (K, N)): 1024 FFMA, 48 LDS.128 and ~100
// others (address and loop arithmetic, 2 cp.async, 1 LDG, 4 STS, wait, barrier): 87% FFMA,
// about as in cuBLAS's kernel (its ncu readings: docs/kernels/matmul.md). Shared memory: 6
// LDS.128 per 128 FFMA, 12-24 of the SM's cycles per 128 cycles of one sub-partition, x 4
// sub-partitions: 37-75% of its rate at full FFMA rate.
// L2 -> shared: 12 KB per block and tile for 524 kFLOP (43 FLOP/byte): 3.2 GB in all, ~1.1
// TB/s at 46 TFLOP/s, far below L2 bandwidth. Latency: a cp.async has two tiles (2 x 2048
// issue cycles of its sub-partition, ~2 us) to land, a staged load one (~1 us); an L2 or DRAM
// read takes well under 1 us unless queued. Grid: 512 blocks on 132 SMs, 3.88 waves (cuBLAS's
// grid too). If the issue slots are as busy as cuBLAS's, v8 matches it; expected 44-50
// TFLOP/s.
//
// Tiles: 128 x 256 x 8 per block, 256 threads = 8 warps as 2 (m) x 4 (n), warp tile 64 x 64.
// Lane (lm, ln), lm in 0..3, ln in 0..7, owns rows {4 lm + 16 i .. + 3} (i = 0..3) and columns
// {4 ln + 32 j .. + 3} (j = 0, 1) of its warp's tile: per LDS.128, A's 4 addresses (B's 8)
// are 64 (128) consecutive bytes, no bank conflicts. Lanes are numbered lane = 16 (lm / 2) +
// 2 ln + lm % 2 (CUTLASS's interleaved SIMT lane layout): lanes l and l ^ 1 read the same B
// address, l and l ^ 2 the same A address, the pattern in which (an NVIDIA engineer's forum
// answer, for sm_70-75; not measured here) an LDS.128 returns its data in 2 cycles, not 4.
// Shared memory: As[3][8][128 + 4] and Bs[3][8][256 + 4], 37.6 KB, static. Any M, N, K and
// all four transposes; 16-byte copies and loads when rows are 16-byte aligned (float4_rows.h),
// 4-byte ones otherwise; elements outside the matrix read as zeros.
#include <cstdint>
#include <type_traits>

#include "kernels/cuda_check.h"
#include "kernels/matmul/cp_async.h"
#include "kernels/matmul/float4_rows.h"
#include "kernels/matmul/gemm.h"

namespace engine::cuda::gemm {
namespace {

constexpr int BM = 128, BN = 256, BK = 8;
constexpr int THREADS = 256;
constexpr int STAGES = 3;                            // tiles t, t + 1, t + 2 in shared memory
constexpr int WM = 64, WN = 64;                      // warp tile
constexpr int WARPS_N = BN / WN;                     // 4 (and BM / WM = 2 warps down m)
constexpr int TM = 16, TN = 8;                       // per thread: 4 x 2 blocks of 4 x 4
constexpr int LANES_M = WM / TM, LANES_N = WN / TN;  // 4 x 8 lanes
static_assert((BM / WM) * (BN / WN) * 32 == THREADS && LANES_M * LANES_N == 32, "warp layout");
// Row padding of the shared tiles, in floats: 4 keeps each row 16-byte aligned for LDS.128 and
// cp.async, and makes the transposing stores conflict-free (StagedLoader::store).
constexpr int PAD = 4;

// Loads one operand stored with x contiguous (x = m for A, n for B: A as (K, M), B as (K, N)):
// the stored tile is BK rows (k) of X floats, exactly the shared layout Xs[k][x], so cp.async
// copies it straight in. X / 4 groups of 4 floats a row, one 16-byte copy each; a warp's 32
// groups are 512 consecutive bytes of one row (coalesced, and 4 wavefronts of shared stores:
// the minimum). Tile after tile: fetch() issues the copies of the next one and moves on.
template <int X, bool VEC>
struct AsyncLoader {
  static constexpr int GROUPS = X / 4;               // groups per stored row: 32 or 64
  static constexpr int ROW_STEP = THREADS / GROUPS;  // rows between a thread's groups: 8 or 4
  static constexpr int PASSES = BK / ROW_STEP;       // groups per thread: 1 (A) or 2 (B)
  static_assert(PASSES * ROW_STEP == BK, "whole rows per pass");

  const float* src;  // this thread's first group of the next tile
  int ld;
  int row, col;      // that group's stored row (k) and column (x) in the tile
  int cols;          // how many of its 4 columns lie inside the matrix (0..4)
  int k_left;        // rows of K from the next tile's first
  const float* any;  // a valid address for copies that read nothing

  // base: the operand at (k 0, x0), the tile column's corner; x_left: columns from x0 to the
  // matrix edge.
  __device__ AsyncLoader(const float* base, int ld_, int x_left, int k, const float* any_)
      : ld(ld_), k_left(k), any(any_) {
    row = threadIdx.x / GROUPS;
    col = threadIdx.x % GROUPS * 4;
    src = base + int64_t{row} * ld + col;
    cols = min(max(x_left - col, 0), 4);
  }

  // Issues the next tile's copies into `stage` (Xs[k][x]); elements outside the matrix are
  // zero-filled by the copies themselves (src-size below the copy size).
  __device__ __forceinline__ void fetch(float (*stage)[X + PAD]) {
#pragma unroll
    for (int p = 0; p < PASSES; ++p) {
      const int r = row + p * ROW_STEP;
      const float* from = src + int64_t{p * ROW_STEP} * ld;
      float* to = &stage[r][col];
      const int n = r < k_left ? cols : 0;  // elements that exist
      if (VEC) {
        cp_async_16(to, n > 0 ? from : any, 4 * n);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) cp_async_4(to + e, e < n ? from + e : any, e < n ? 4 : 0);
      }
    }
    src += int64_t{BK} * ld;
    k_left -= BK;
  }
};

// Loads one operand stored with k contiguous (A as (M, K), B as (N, K)): the stored tile is X
// rows (x) of BK = 8 floats, and the shared layout Xs[k][x] is its transpose, which cp.async
// cannot do (it copies bytes). So the tile goes through registers: fetch() reads the thread's
// groups (LDG.128, or scalar loads), store() writes them down columns of Xs (STS.32). Two
// threads a stored row, one 32-byte sector: a warp reads 16 rows, 16 whole sectors.
template <int X, bool VEC>
struct StagedLoader {
  static constexpr int GROUPS = BK / 4;              // groups per stored row: 2
  static constexpr int ROW_STEP = THREADS / GROUPS;  // 128
  static constexpr int PASSES = X / ROW_STEP;        // groups per thread: 1 (A) or 2 (B)
  static_assert(PASSES * ROW_STEP == X, "whole tile per pass");

  const float* src;  // this thread's first group of the next tile
  int ld;
  int row, col;      // that group's stored row (x) and column (k) in the tile
  int x_left;        // rows (x) from the tile's first to the matrix edge
  int k_left;        // columns (k) from the next tile's first
  float4 r[PASSES];  // a tile on its way from global to shared memory

  // base: the operand at (x0, k 0); the last argument (cp.async's dummy address) is unused.
  __device__ StagedLoader(const float* base, int ld_, int x_left_, int k, const float*)
      : ld(ld_), x_left(x_left_), k_left(k) {
    row = threadIdx.x / GROUPS;
    col = threadIdx.x % GROUPS * 4;
    src = base + int64_t{row} * ld + col;
  }

  // Global -> registers: the next tile, zeros outside the matrix (load_row4's count).
  __device__ __forceinline__ void fetch() {
#pragma unroll
    for (int p = 0; p < PASSES; ++p) {
      const int x = row + p * ROW_STEP;
      r[p] = load_row4<VEC>(src + int64_t{p * ROW_STEP} * ld, x < x_left ? k_left - col : 0);
    }
    src += BK;
    k_left -= BK;
  }

  // Registers -> shared, transposed: a group along k is written down a column of Xs[k][x],
  // 4 stores. Per store a warp writes 16 consecutive x at k = col + e for its lanes with
  // col 0 and the same 16 x at col + 4 for the others; rows of X + 4 floats put those 4
  // rows (4 * 132 or 4 * 260 words) 16 banks apart: 32 lanes, 32 banks.
  __device__ __forceinline__ void store(float (*stage)[X + PAD]) const {
#pragma unroll
    for (int p = 0; p < PASSES; ++p) {
      const int x = row + p * ROW_STEP;
      stage[col + 0][x] = r[p].x;
      stage[col + 1][x] = r[p].y;
      stage[col + 2][x] = r[p].z;
      stage[col + 3][x] = r[p].w;
    }
  }
};

// N / 4 float4 of one shared row, `step` floats apart, into consecutive registers.
template <int N>
__device__ __forceinline__ void load_quads(float (&dst)[N], const float* src, int step) {
#pragma unroll
  for (int q = 0; q < N / 4; ++q) {
    const float4 v = *reinterpret_cast<const float4*>(src + step * q);
    dst[4 * q + 0] = v.x;
    dst[4 * q + 1] = v.y;
    dst[4 * q + 2] = v.z;
    dst[4 * q + 3] = v.w;
  }
}

// This thread's operands for k step k of a stage: 16 values of A (4 LDS.128, at columns
// a_col + 16 q), 8 of B (2 LDS.128, at b_col + 32 q).
__device__ __forceinline__ void load_fragments(float (&a)[TM], float (&b)[TN],
                                               const float (*As)[BM + PAD],
                                               const float (*Bs)[BN + PAD], int k, int a_col,
                                               int b_col) {
  load_quads(a, &As[k][a_col], 4 * LANES_M);
  load_quads(b, &Bs[k][b_col], 4 * LANES_N);
}

// (THREADS, 1): up to 255 registers a thread; one block (8 warps) per SM.
template <bool TA, bool TB, bool VEC>
__global__ void __launch_bounds__(THREADS, 1) async_bigtile_kernel(const Gemm g) {
  const GemmSlice s = slice_of(g);
  // STAGES tiles of As[k][m] and Bs[k][n]: 3 x 8 x (132 + 260) x 4 B = 37.6 KB, static.
  __shared__ __align__(16) float As[STAGES][BK][BM + PAD];
  __shared__ __align__(16) float Bs[STAGES][BK][BN + PAD];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN;  // warp tile's corner
  const int lm = (lane >> 4) << 1 | (lane & 1), ln = (lane >> 1) & 7;
  const int a_col = wm + 4 * lm, b_col = wn + 4 * ln;  // this thread's first A and B column
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  using ALoader = std::conditional_t<TA, AsyncLoader<BM, VEC>, StagedLoader<BM, VEC>>;
  using BLoader = std::conditional_t<TB, StagedLoader<BN, VEC>, AsyncLoader<BN, VEC>>;
  ALoader a_ld(TA ? s.A + m0 : s.A + int64_t{m0} * g.lda, g.lda, g.M - m0, s.K, s.A);
  BLoader b_ld(TB ? s.B + int64_t{n0} * g.ldb : s.B + n0, g.ldb, g.N - n0, s.K, s.B);
  auto issue_async = [&](int stage) {
    if constexpr (TA) a_ld.fetch(As[stage]);
    if constexpr (!TB) b_ld.fetch(Bs[stage]);
  };
  auto load_staged = [&] {
    if constexpr (!TA) a_ld.fetch();
    if constexpr (TB) b_ld.fetch();
  };
  auto store_staged = [&](int stage) {
    if constexpr (!TA) a_ld.store(As[stage]);
    if constexpr (TB) b_ld.store(Bs[stage]);
  };

  const int tiles = (s.K + BK - 1) / BK;
  // Prologue. Copies of tiles 0 .. STAGES - 1, one group each (committed even when empty, so
  // that "group t holds tile t" holds for the waits below); the staged operand's tile 0 through
  // registers to stage 0, and its tile 1 into registers.
#pragma unroll
  for (int t = 0; t < STAGES; ++t) {
    if (t < tiles) issue_async(t);
    cp_async_commit();
  }
  if (tiles > 0) {
    load_staged();
    store_staged(0);
  }
  if (tiles > 1) load_staged();
  cp_async_wait<STAGES - 1>();  // group 0, tile 0, has landed
  __syncthreads();

  float acc[TM][TN] = {};
  float a[2][TM], b[2][TN];  // fragments: step kk's in [kk % 2] while step kk + 1's load
  load_fragments(a[0], b[0], As[0], Bs[0], 0, a_col, b_col);
  int s0 = 0;  // stage of tile t
#pragma unroll 1
  for (int t = 0; t < tiles; ++t) {
    const int s1 = s0 + 1 == STAGES ? 0 : s0 + 1;  // stage of tile t + 1
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const int cur = kk % 2, nxt = cur ^ 1;
      if (kk + 1 < BK) {
        load_fragments(a[nxt], b[nxt], As[s0], Bs[s0], kk + 1, a_col, b_col);
      } else {
        // Tile t's last fragments are in registers: switch to tile t + 1 before the last
        // FFMAs, so that its first fragments load while they run.
        if (t + 1 < tiles) store_staged(s1);
        cp_async_wait<STAGES - 2>();  // groups 0 .. t + 1 (tile t + 1) have landed
        // After the barrier, every thread's part of tile t + 1 is visible, and no warp will
        // read stage s0 (tile t) again: it takes tile t + STAGES.
        __syncthreads();
        if (t + STAGES < tiles) issue_async(s0);
        cp_async_commit();
        if (t + 2 < tiles) load_staged();
        load_fragments(a[nxt], b[nxt], As[s1], Bs[s1], 0, a_col, b_col);
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[cur][i] * b[cur][j];
    }
    s0 = s1;
  }
  cp_async_wait<0>();  // only empty groups can remain; leave none behind all the same

  // acc[i][j] is the output at row wm + 16 (i / 4) + 4 lm + i % 4 of the block tile, column
  // wn + 32 (j / 4) + 4 ln + j % 4: 4 consecutive columns at a time, one float4 store when C's
  // rows allow it (8 lanes then write 128 consecutive bytes of a row).
  const bool c_vec = reinterpret_cast<std::uintptr_t>(s.C) % 16 == 0 && s.ldc % 4 == 0;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + wm + (i / 4) * 4 * LANES_M + 4 * lm + i % 4;
    if (m >= g.M) continue;
#pragma unroll
    for (int q = 0; q < TN / 4; ++q) {
      const int n = n0 + wn + q * 4 * LANES_N + 4 * ln;
      if (c_vec && n + 3 < g.N) {
        store_c4(s, m, n, make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2],
                                      acc[i][4 * q + 3]));
      } else {
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (n + c < g.N) store_c(s, m, n + c, acc[i][4 * q + c]);
      }
    }
  }
}

}  // namespace

void v8_async_bigtile(const Gemm& g, cudaStream_t stream) {
  const bool vec = rows_allow_float4(g);
  dispatch_transposes(g, [&](auto ta, auto tb) {
    constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
    if (vec)
      async_bigtile_kernel<TA, TB, true><<<tile_grid(g, BM, BN), THREADS, 0, stream>>>(g);
    else
      async_bigtile_kernel<TA, TB, false><<<tile_grid(g, BM, BN), THREADS, 0, stream>>>(g);
  });
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
