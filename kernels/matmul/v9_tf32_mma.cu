// v9: TF32 tensor cores. Each warp multiplies 16 x 8 x 8 blocks with one instruction,
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (HMMA in SASS), accumulating in FP32.
//
// What changes from v8: the multiply itself. v8 spends one FFMA instruction per 32 multiply-
// adds (one per lane), and the FP32 pipes cap it at ~60 TFLOP/s on an H100. One mma.sync does
// 16 x 8 x 8 = 1024 multiply-adds for the warp: the tensor cores' TF32 rate is several times
// the FP32 rate (cuBLAS reaches ~380-400 TFLOP/s in TF32 against ~51 in FP32). The price is
// precision: the operands are rounded to TF32 (10 mantissa bits, cvt.rna: to nearest, ties
// away from zero) before each multiply; products and sums stay FP32. Hence tf32 = true in
// the version table, and looser tolerances in the tests. The rest follows from the faster
// multiply, which leaves less time to hide loads behind: v8's three-stage cp.async pipeline
// now carries both operands whatever their layout (mma's fragments are read one float at a
// time, so each tile stays in shared memory as it is stored, and nothing is staged through
// registers as v8 stages a k-contiguous operand); BK = 32 (v8: 8), so that each barrier is
// paid for with twice v8's multiply-adds (128 x 128 x 32 against 128 x 256 x 8); and with
// only 64 accumulators per thread, two blocks share an SM again (128 registers).
//
// Napkin math, 4096^3: 137 GFLOP; at cuBLAS's TF32 ~380 TFLOP/s, 0.36 ms. DRAM: 201 MB,
// 67 us at 3 TB/s: still 680 FLOP/byte, compute-bound. But L2 -> shared memory now matters:
// 128 x 128 tiles move 4.3 GB in all (32 FLOP/byte), ~0.7 ms at an L2 bandwidth of ~6 TB/s
// (others' measurements, not ours). So this kernel is bounded by L2 bandwidth near
// ~190 TFLOP/s, about half of cuBLAS, before any inefficiency of its own; larger tiles, TMA
// and wgmma (sm_90a) are what close the rest. Per warp and 8-deep k step: 16 mma.sync, 24
// LDS.32 and 24 cvt for the fragments.
//
// Tiles: 128 x 128 x 32 per block, 256 threads = 8 warps as 2 (m) x 4 (n), warp tile 64 x 32
// = 4 x 4 mma tiles of 16 x 8, 64 FP32 accumulators per thread. Shared memory keeps each
// operand in its stored orientation (cp.async copies bytes, it cannot transpose), padded so
// that the fragment loads are conflict-free (see SmemLayout). Any M, N, K, all four
// transposes: 16-byte cp.async when every row is 16-byte aligned (float4_rows.h), 4-byte
// copies otherwise; elements outside the matrix are zero-filled by the copy itself.
#include <cstdint>

#include "kernels/cuda_check.h"
#include "kernels/matmul/cp_async.h"
#include "kernels/matmul/float4_rows.h"
#include "kernels/matmul/gemm.h"
#include "kernels/matmul/mma_tf32.h"

namespace engine::cuda::gemm {
namespace {

constexpr int BM = 128, BN = 128, BK = 32;
constexpr int THREADS = 256;
constexpr int STAGES = 3;                // tiles t, t + 1, t + 2 in shared memory at once
constexpr int WM = 64, WN = 32;          // warp tile
constexpr int WARPS_N = BN / WN;         // 4 (and BM / WM = 2 warps down m)
constexpr int MI = WM / 16, NI = WN / 8;  // mma tiles per warp: 4 x 4
static_assert((BM / WM) * (BN / WN) * 32 == THREADS, "warp layout");

// Where element (row x, k) of an operand's tile lies in shared memory; x is m for A, n for B.
// K_CONTIGUOUS: the operand is stored with k contiguous (A as (M, K), B as (N, K)), and the
// tile is kept as Xs[x][k] with rows of BK + 4 floats; otherwise as Xs[k][x] with rows of
// 128 + 8 floats. Both paddings keep rows 16-byte aligned for cp.async, and spread a
// fragment load over all 32 banks: a lane (g, t) = (lane / 4, lane % 4) reads (x0 + g, k0 + t)
// (A's a0, B's b0; the other registers are +8 in x or +4 in k), at word g * 36 + t, i.e.
// bank 4 g + t, in Xs[x][k], and at t * 136 + g, bank 8 t + g, in Xs[k][x]: 32 lanes, 32
// banks either way. Unpadded (rows of 32 or 128 words) all 8 g or all 4 t would share a bank.
template <bool K_CONTIGUOUS>
struct SmemLayout {
  static constexpr int ROW = K_CONTIGUOUS ? BK + 4 : BM + 8;  // floats per shared row
  static constexpr int SIZE = K_CONTIGUOUS ? BM * ROW : BK * ROW;  // floats per stage
  static constexpr int STORED_ROW = K_CONTIGUOUS ? BK : BM;  // floats per stored row of tile
  __device__ static int at(int x, int k) { return K_CONTIGUOUS ? x * ROW + k : k * ROW + x; }
};
static_assert(BM == BN, "SmemLayout serves A and B alike");

template <bool TA, bool TB>
constexpr int smem_bytes() {
  return STAGES * (SmemLayout<!TA>::SIZE + SmemLayout<TB>::SIZE) * int{sizeof(float)};
}

// Copies one operand's tile into a stage. The tile is 128 stored rows of 32 floats when k is
// contiguous, 32 rows of 128 otherwise (STORED_ROW): 1024 groups of 4, 4 per thread, a
// warp's 32 groups consecutive in memory (coalesced). Row r of the stored tile is
// base + r * ld; `limit_row` and `limit_col` are how many rows and columns of the stored
// matrix remain from the tile's corner, so edge groups copy only what exists and the rest of
// the stage is zero-filled. `any` is a valid address for copies that read nothing.
template <bool K_CONTIGUOUS, bool VEC>
__device__ __forceinline__ void copy_tile(float* stage, const float* base, int ld, int limit_row,
                                          int limit_col, const float* any) {
  using L = SmemLayout<K_CONTIGUOUS>;
  constexpr int GROUPS = L::STORED_ROW / 4;  // per stored row
  constexpr int ROW_STEP = THREADS / GROUPS;  // rows between a thread's groups
  const int row0 = threadIdx.x / GROUPS, col = threadIdx.x % GROUPS * 4;
  // One source pointer walked ROW_STEP rows at a time: with each group's address computed
  // from scratch, ptxas kept four 64-bit offsets live across the main loop and spilled under
  // the 128-register cap.
  const float* src = base + int64_t{row0} * ld + col;
#pragma unroll
  for (int i = 0; i < BM * BK / 4 / THREADS; ++i, src += int64_t{ROW_STEP} * ld) {
    const int row = row0 + i * ROW_STEP;
    // In shared memory the stored row is x when k is contiguous, k otherwise.
    float* dst = stage + (K_CONTIGUOUS ? L::at(row, col) : L::at(col, row));
    const int n = row < limit_row ? min(max(limit_col - col, 0), 4) : 0;  // elements that exist
    if (VEC) {
      cp_async_16(dst, n > 0 ? src : any, 4 * n);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) cp_async_4(dst + e, e < n ? src + e : any, e < n ? 4 : 0);
    }
  }
}

// (THREADS, 2): at most 128 registers, so two blocks (and 2 x 108 KB of shared memory, of the
// SM's 228 KB) share an SM, one block's barrier waits filled by the other's mma.
template <bool TA, bool TB, bool VEC>
__global__ void __launch_bounds__(THREADS, 2) tf32_mma_kernel(const Gemm g) {
  const GemmSlice s = slice_of(g);
  using LA = SmemLayout<!TA>;  // A stored (M, K) has k contiguous
  using LB = SmemLayout<TB>;   // B stored (N, K) has k contiguous
  // STAGES tiles of A, then STAGES tiles of B: over 48 KB, so dynamic (see the launch).
  extern __shared__ __align__(16) float smem[];
  float* const As = smem;
  float* const Bs = smem + STAGES * LA::SIZE;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / WARPS_N * WM, wn = warp % WARPS_N * WN;  // warp tile's corner
  const int g4 = lane / 4, t4 = lane % 4;                        // mma's groupID, threadID_in_group
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  // Issues the copies of K tile `tile` into stage `stage` (the caller commits them as a group).
  auto load_tile = [&](int tile, int stage) {
    const int k0 = tile * BK;
    if (TA)  // stored (K, M): stored rows are k
      copy_tile<false, VEC>(As + stage * LA::SIZE, s.A + int64_t{k0} * g.lda + m0, g.lda,
                            s.K - k0, g.M - m0, s.A);
    else  // stored (M, K): stored rows are m
      copy_tile<true, VEC>(As + stage * LA::SIZE, s.A + int64_t{m0} * g.lda + k0, g.lda,
                           g.M - m0, s.K - k0, s.A);
    if (TB)  // stored (N, K): stored rows are n
      copy_tile<true, VEC>(Bs + stage * LB::SIZE, s.B + int64_t{n0} * g.ldb + k0, g.ldb,
                           g.N - n0, s.K - k0, s.B);
    else  // stored (K, N): stored rows are k
      copy_tile<false, VEC>(Bs + stage * LB::SIZE, s.B + int64_t{k0} * g.ldb + n0, g.ldb,
                            s.K - k0, g.N - n0, s.B);
  };

  const int tiles = (s.K + BK - 1) / BK;
  // Prologue: tiles 0 .. STAGES - 2 in flight. A group is committed even when there is no
  // tile left to load, so that "group t holds tile t" stays true for the waits below.
#pragma unroll
  for (int t = 0; t < STAGES - 1; ++t) {
    if (t < tiles) load_tile(t, t);
    cp_async_commit();
  }

  float acc[MI][NI][4] = {};
  for (int t = 0; t < tiles; ++t) {
    // Groups 0 .. t + STAGES - 2 are committed; allowing STAGES - 2 in flight means groups
    // 0 .. t, so tile t, have landed: this thread's copies of it, that is.
    cp_async_wait<STAGES - 2>();
    // After the barrier: every thread's copies of tile t are visible, and every warp is done
    // with tile t - 1, whose stage the copies below overwrite.
    __syncthreads();
    if (t + STAGES - 1 < tiles) load_tile(t + STAGES - 1, (t + STAGES - 1) % STAGES);
    cp_async_commit();

    const float* a_tile = As + t % STAGES * LA::SIZE;
    const float* b_tile = Bs + t % STAGES * LB::SIZE;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      // This warp's fragments of the 8-deep slice: 4 of A (rows wm + 16 i ..), 4 of B.
      uint32_t a[MI][4], b[NI][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        const int m = wm + 16 * i + g4, k = kk + t4;
        a[i][0] = to_tf32(a_tile[LA::at(m, k)]);
        a[i][1] = to_tf32(a_tile[LA::at(m + 8, k)]);
        a[i][2] = to_tf32(a_tile[LA::at(m, k + 4)]);
        a[i][3] = to_tf32(a_tile[LA::at(m + 8, k + 4)]);
      }
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const int n = wn + 8 * j + g4, k = kk + t4;
        b[j][0] = to_tf32(b_tile[LB::at(n, k)]);
        b[j][1] = to_tf32(b_tile[LB::at(n, k + 4)]);
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) mma_tf32(acc[i][j], a[i], b[j]);
    }
    // No barrier here: the next iteration's barrier comes before anyone overwrites this stage.
  }
  cp_async_wait<0>();  // only empty groups can remain; leave none behind all the same

  // acc[i][j] is the 16 x 8 tile at rows wm + 16 i, columns wn + 8 j of the block tile, in
  // mma's d layout: rows g4 and g4 + 8, columns 2 t4 and 2 t4 + 1.
#pragma unroll
  for (int i = 0; i < MI; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = m0 + wm + 16 * i + g4 + 8 * h;
      if (m >= g.M) continue;
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const int n = n0 + wn + 8 * j + 2 * t4;
        if (n < g.N) store_c(s, m, n, acc[i][j][2 * h]);
        if (n + 1 < g.N) store_c(s, m, n + 1, acc[i][j][2 * h + 1]);
      }
    }
  }
}

// Launches one variant, raising its shared-memory limit the first time: past 48 KB a kernel
// must opt in (once per kernel; a function-local static makes it once per instantiation).
template <bool TA, bool TB, bool VEC>
void launch(const Gemm& g, cudaStream_t stream) {
  constexpr int SMEM = smem_bytes<TA, TB>();
  static const bool configured = [] {
    CHECK_CUDA(cudaFuncSetAttribute(tf32_mma_kernel<TA, TB, VEC>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    return true;
  }();
  (void)configured;
  tf32_mma_kernel<TA, TB, VEC><<<tile_grid(g, BM, BN), THREADS, SMEM, stream>>>(g);
}

}  // namespace

void v9_tf32_mma(const Gemm& g, cudaStream_t stream) {
  const bool vec = rows_allow_float4(g);
  dispatch_transposes(g, [&](auto ta, auto tb) {
    constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
    if (vec)
      launch<TA, TB, true>(g, stream);
    else
      launch<TA, TB, false>(g, stream);
  });
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
