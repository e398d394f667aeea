// small_splitk: the engine's GEMM for small and skinny outputs, the seed models' products at
// batch 32 (and CIFAR's 100): 32 x 32 output tiles, split-K with the slices added in the same
// launch, in a fixed order, by whichever block of an output tile finishes last.
//
// Napkin math (H100: 132 SMs, 128 FP32 FMA per clock and SM, 50 MB of L2; timed in a CUDA
// graph of 20 calls, so the operands are L2-resident, as a training step's weights are):
//   mlp fwd     (32 x 784) @ (784 x 128):    6.4 MFLOP, 0.5 MB of operands
//   wide fwd    (32 x 1000) @ (1000 x 1000):  64 MFLOP, 4.1 MB (B: 4 MB)
//   wide dW     (1000 x 32) @ (32 x 1000), A stored (32, 1000): 64 MFLOP, 0.3 MB read, 4 MB
//               written
//   cifar dense (100 x 8192) @ (8192 x 128): 210 MFLOP, 7.5 MB
// At cuBLAS's 51 TFLOP/s and 3 TB/s these are 0.1-4 us of arithmetic or memory, yet cuBLAS
// takes several times that (measured: docs/kernels/matmul.md, "The shapes the seed models
// use"): none is bound by a roofline. The time goes to latency: the launch (a graph node costs
// ~2 us, most of what v5 took for two blocks of one K tile), the global loads a block waits
// for one after another (each K tile's), and SMs left without work.
//
// What changes from the engine's previous choice (v5's 64 x 64 tiles, split-K, and
// split_k_reduce as a second launch), and why it is faster:
//  (1) One launch. Each K slice writes its partial tile to a workspace and counts itself in
//      (last_to_arrive); the block that completes its tile's count adds the slices in order
//      0, 1, ... (the same bits whichever block is last), applies alpha and beta, writes C and
//      sets the counter back to zero for the next launch or graph replay: a graph node (~2 us)
//      traded for a fence, an atomic and the read-back (~0.5-1 us).
//  (2) Small tiles, more blocks, shorter chains: a 64-row tile of a 32-row output computed 32
//      rows of zeros, and 32 x 32 tiles split the seed shapes' work over up to 4x more SMs
//      (dW1 784 x 128: 100 blocks where v5 had 26; each block's FMAs take ~0.2 us, not 0.8).
//  (3) Slices of whole 32-deep K tiles, enough for about BLOCKS_PER_SM blocks per SM, at most
//      16: the last block reads slices x 4 KB back (64 KB at 16, ~0.6 us at the ~64 B per
//      clock an SM draws from L2), the counterweight of short slices. Outputs of >= 264 tiles,
//      and K of one tile, are not split.
//  (4) Two K tiles in flight: while a block multiplies tile t, its loads of tiles t + 1 and
//      t + 2 are on their way (register staging as in v7, which has one ahead), so a slice of
//      four tiles waits about one load latency, not four.
//  (5) 16-byte loads where rows are aligned (float4_rows.h), coalesced whichever way an
//      operand is stored; B is read once per 32 rows of C (once for M <= 32).
//
// Per thread 2 x 4 outputs: per k step a warp issues 8 FFMA (8 cycles of its scheduler) and
// 2 shared loads of one wavefront each (2 cycles of the SM's shared memory, which serves all
// four schedulers), so at full FFMA rate shared memory is as busy as the FMA pipes: expect
// ~60-70% of the FMA peak while multiplying (~80 FMA per clock and SM).
// Predicted per call on an H100 in a graph (~2 us of launch + the rest; tiles x slices =
// blocks, K tiles per block; measured beside cuBLAS: docs/kernels/matmul.md, "The shapes the
// seed models use"):
//   mlp fwd  32x784 @ 784x128         4 x 13 = 52, 2, 52 KB read back   ~4 us
//   mlp fwd  32x128 @ 128x10          1 x 4 = 4, 1                      ~3.5 us
//   mlp dW1  784x32 @ 32x128 (A^T)    100, 1, no split                  ~2.6 us
//   mlp dX2  32x10 @ 10x128 (B^T)     4, 1, no split                    ~2.6 us
//   wide fwd 32x1000 @ 1000x1000      32 x 8 = 256, 4, 32 KB            ~5 us
//   wide dW  1000x32 @ 32x1000 (A^T)  1024, 1, no split                 ~4 us
//   cifar    100x8192 @ 8192x128      16 x 16 = 256, 16, 64 KB          ~10-11 us
// cifar is the one bound by arithmetic: 1 M FMA per SM (M = 100 pads to 128 rows) at ~80 a
// clock is ~7 us; it also reads ~30 MB from L2 (A 4 times, B 4 times), ~4 TB/s over those 7 us.
//
// Tiles: 32 x 32 x 32 per block, blockIdx.x the output tile (row-major), blockIdx.y the K
// slice; 128 threads = 4 warps down m, warp tile 8 x 32; lane (lm, ln) = (lane / 8, lane % 8)
// owns rows 2 lm, 2 lm + 1 and columns 4 ln .. 4 ln + 3 of its warp's tile. Shared: two
// stages of As[k][m] and Bs[k][n]. Any M, N, K, all four transposes; elements outside the
// matrix read as zeros.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/error.h"
#include "kernels/cuda_check.h"
#include "kernels/matmul/float4_rows.h"
#include "kernels/matmul/mma_tf32.h"
#include "kernels/matmul/small_splitk.h"

namespace engine::cuda::gemm {
namespace {

constexpr int BM = SMALL_BM, BN = SMALL_BN, BK = SMALL_BK;
constexpr int THREADS = 128;  // 4 warps down m, warp tile 8 x 32
constexpr int WM = 8;         // warp tile rows (and BN columns)
constexpr int TM = 2;         // rows per thread (and 4 columns: one float4)
constexpr int LANES_N = BN / 4;  // 8 lanes across n, WM / TM = 4 down m
static_assert((BM / WM) * 32 == THREADS && (WM / TM) * LANES_N == 32, "warp layout");
// Row padding of the shared tiles, in floats: 4 keeps each row 16-byte aligned for LDS.128 and
// STS.128, and makes the transposing stores conflict-free (stage_tile).
constexpr int PAD = 4;
constexpr int TILE = BM * BN;     // floats of one partial tile
constexpr int BLOCKS_PER_SM = 2;  // split-K's aim: 8 warps per SM, 2 per scheduler
constexpr int MAX_SLICES = 16;    // the last block reads back slices x TILE floats
// float4 groups of an X x BK operand tile per thread: 2 for A and for B.
template <int X>
constexpr int LOADS = X * BK / 4 / THREADS;
static_assert(LOADS<BM> * 4 * THREADS == BM * BK && LOADS<BN> * 4 * THREADS == BN * BK, "whole tiles");

// Where load i of this thread lies in an operand tile of X (m or n) by BK (k): its stored row
// and the first of its 4 columns. K_MAJOR: the operand is stored with k contiguous (A as
// (M, K), B as (N, K)), the tile is X stored rows of BK floats; else BK rows of X floats.
//   x contiguous: consecutive threads take consecutive groups of a row, a warp 4 rows of 128
//     bytes.
//   k contiguous: half-warps take 16 consecutive rows, lanes l and l + 16 the two halves of
//     one 32-byte sector, so a warp reads 16 whole sectors; the next warps take the next 16
//     rows, then the next 8 columns. This order also makes the transposing stores into
//     shared memory conflict-free (stage_tile).
template <int X, bool K_MAJOR>
__device__ __forceinline__ void group_of(int i, int& row, int& col) {
  const int g = static_cast<int>(threadIdx.x) + i * THREADS;
  if constexpr (K_MAJOR) {
    const int warp = g / 32, lane = g % 32;
    row = warp % (X / 16) * 16 + lane % 16;
    col = warp / (X / 16) * 8 + lane / 16 * 4;
  } else {
    row = g / (X / 4);
    col = g % (X / 4) * 4;
  }
}

// Global -> registers: this thread's groups of the operand tile whose element (x 0, k 0) is at
// p, stored rows ld floats apart; x_left and k_left: how far the matrix extends from there
// (<= 0: not at all). Groups outside the matrix read as zeros (load_row4's count).
template <int X, bool K_MAJOR, bool VEC>
__device__ __forceinline__ void load_tile(const float* p, int ld, int x_left, int k_left,
                                          float4 (&r)[LOADS<X>]) {
#pragma unroll
  for (int i = 0; i < LOADS<X>; ++i) {
    int row, col;
    group_of<X, K_MAJOR>(i, row, col);
    const float* q = p + int64_t{row} * ld + col;
    // K_MAJOR: stored rows are x and columns k; otherwise rows are k and columns x.
    r[i] = K_MAJOR ? load_row4<VEC>(q, row < x_left ? k_left - col : 0)
                   : load_row4<VEC>(q, row < k_left ? x_left - col : 0);
  }
}

// Registers -> shared: Xs[k][x] whichever way the operand is stored. A group along x is one
// STS.128; a group along k (K_MAJOR) is written down a column, 4 STS.32: a half-warp writes
// 16 consecutive x at one k, the other half-warp the same x at k + 4, which rows of X + 4
// floats put 16 banks further on (4 (X + 4) = 16 mod 32 for X = 32): 32 lanes, 32 banks.
template <int X, bool K_MAJOR>
__device__ __forceinline__ void stage_tile(float (*Xs)[X + PAD], const float4 (&r)[LOADS<X>]) {
#pragma unroll
  for (int i = 0; i < LOADS<X>; ++i) {
    int row, col;
    group_of<X, K_MAJOR>(i, row, col);
    if (K_MAJOR) {
      Xs[col + 0][row] = r[i].x;
      Xs[col + 1][row] = r[i].y;
      Xs[col + 2][row] = r[i].z;
      Xs[col + 3][row] = r[i].w;
    } else {
      *reinterpret_cast<float4*>(&Xs[row][col]) = r[i];
    }
  }
}

__device__ __forceinline__ void fma4(float4& acc, float a, const float4& b) {
  acc.x += a * b.x;
  acc.y += a * b.y;
  acc.z += a * b.z;
  acc.w += a * b.w;
}

// acc[i] += row r0 + i of the A tile times columns c0 .. c0 + 3 of the B tile, over its BK k.
// Per k step a quarter-warp (8 lanes, one lm) reads one 8-byte address of A (a broadcast) and
// 8 consecutive float4 of B, 128 bytes: no bank conflicts.
__device__ __forceinline__ void multiply_tile(const float (*As)[BM + PAD], const float (*Bs)[BN + PAD],
                                              int r0, int c0, float4 (&acc)[TM]) {
#pragma unroll
  for (int k = 0; k < BK; ++k) {
    const float2 a = *reinterpret_cast<const float2*>(&As[k][r0]);
    const float4 b = *reinterpret_cast<const float4*>(&Bs[k][c0]);
    fma4(acc[0], a.x, b);
    fma4(acc[1], a.y, b);
  }
}

// The same on TF32 tensor cores (under --tf32 where a product has the arithmetic to pay for it:
// gpu_matmul_stays_fp32, core/ops/matmul.h): the 4 warps own
// 16 x 16 quarters of the tile (rows mw.., columns nw..), each k8 step one A fragment and two
// m16n8k8 products into d[0] (columns nw..nw+7) and d[1] (nw+8..). Fragments as in
// mma_tf32.h, read from the k-major stages: A(m, k) = As[k][m], B(k, n) = Bs[k][n]. Lanes
// (g, t) read rows k + t of 36 floats at column + g: banks 4t + g, two lanes on a bank at most.
// Napkin math, CIFAR's (100 x 8192) @ (8192 x 128) in 16 slices: 256 blocks of 16 K tiles,
// 8 mma.sync a warp per K tile instead of 256 FFMA: the 7 us of FMAs become ~1 us, leaving the
// loads (~30 MB from L2) and the slices' read-back.
__device__ __forceinline__ void multiply_tile_tf32(const float (*As)[BM + PAD], const float (*Bs)[BN + PAD],
                                                   int mw, int nw, int lane, float (&d)[2][4]) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int k = 0; k < BK; k += 8) {
    const uint32_t a[4] = {to_tf32(As[k + t][mw + g]), to_tf32(As[k + t][mw + g + 8]),
                           to_tf32(As[k + t + 4][mw + g]), to_tf32(As[k + t + 4][mw + g + 8])};
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const uint32_t b[2] = {to_tf32(Bs[k + t][nw + 8 * j + g]), to_tf32(Bs[k + t + 4][nw + 8 * j + g])};
      mma_tf32(d[j], a, b);
    }
  }
}

// Whether this block is the last of its tile's `slices` to have written its partial tile;
// the last one may then read every slice's. The pattern of CUTLASS's split-K semaphore and of
// cooperative groups' grid sync: a barrier (the block's partial stores are all issued), then
// one thread's fence and atomic (a release: those stores are visible GPU-wide before the new
// count is) and, in the last block, a fence after the atomic (an acquire: the other slices'
// partials are read after their counts). No block waits for another, so any number of blocks
// and any scheduling order is safe. The last block resets the counter: no other block of this
// launch touches it again, and the next launch on the stream (or graph replay) finds zero.
__device__ __forceinline__ bool last_to_arrive(unsigned* counter, int slices) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(counter, 1u) == static_cast<unsigned>(slices - 1);
    if (last) {
      *counter = 0;
      __threadfence();
    }
  }
  __syncthreads();  // everyone sees `last`; in the last block, after thread 0's acquire
  return last;
}

// (THREADS, 4): at most 128 registers, four blocks or more per SM where the grid has them.
template <bool TA, bool TB, bool VEC, bool TF32>
__global__ void __launch_bounds__(THREADS, 4) small_splitk_kernel(const Gemm g, unsigned* counters) {
  const int tiles_n = (g.N + BN - 1) / BN;
  const int tile = static_cast<int>(blockIdx.x);
  const int m0 = tile / tiles_n * BM, n0 = tile % tiles_n * BN;
  const int slices = static_cast<int>(gridDim.y);
  // This block's slice of K, [k0, k0 + depth); its C is the real one (the reduction is here).
  const int k0 = static_cast<int>(blockIdx.y) * g.k_slice;
  const int depth = g.k_slice > 0 ? min(g.k_slice, g.K - k0) : g.K;
  const GemmSlice s{a_from(g, k0), b_from(g, k0), g.C, g.ldc, depth, g.alpha, g.beta};

  // Two stages, tile t in stage t % 2: 2 x 2 x 32 x 36 x 4 B = 18 KB, static.
  __shared__ __align__(16) float As[2][BK][BM + PAD];
  __shared__ __align__(16) float Bs[2][BK][BN + PAD];
  // Tiles on their way from global to shared memory, tile t in register set t % 2. The sets
  // are indexed by compile-time constants only (std::integral_constant below): a runtime
  // index would put them in local memory.
  float4 ra[2][LOADS<BM>], rb[2][LOADS<BN>];

  // The tile columns' corners, and how far one K tile moves them: along a stored row when k
  // is contiguous, by BK rows otherwise.
  const float* a_corner = TA ? s.A + m0 : s.A + int64_t{m0} * g.lda;
  const float* b_corner = TB ? s.B + int64_t{n0} * g.ldb : s.B + n0;
  const int64_t a_step = TA ? int64_t{BK} * g.lda : BK;
  const int64_t b_step = TB ? BK : int64_t{BK} * g.ldb;
  auto fetch = [&](auto set, int t) {
    constexpr int R = decltype(set)::value;
    load_tile<BM, !TA, VEC>(a_corner + t * a_step, g.lda, g.M - m0, depth - t * BK, ra[R]);
    load_tile<BN, TB, VEC>(b_corner + t * b_step, g.ldb, g.N - n0, depth - t * BK, rb[R]);
  };
  auto stage = [&](auto set) {
    constexpr int R = decltype(set)::value;
    stage_tile<BM, !TA>(As[R], ra[R]);
    stage_tile<BN, TB>(Bs[R], rb[R]);
  };
  constexpr std::integral_constant<int, 0> EVEN{};
  constexpr std::integral_constant<int, 1> ODD{};

  const int tiles = (depth + BK - 1) / BK;
  // Prologue: tiles 0 and 1 in flight together; tile 0 into stage 0, tile 2 into its registers.
  fetch(EVEN, 0);
  if (tiles > 1) fetch(ODD, 1);
  stage(EVEN);
  if (tiles > 2) fetch(EVEN, 2);
  __syncthreads();  // stage 0 is complete before anyone multiplies it

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int r0 = warp * WM + TM * (lane / LANES_N);  // this thread's first row
  const int c0 = 4 * (lane % LANES_N);               // and first column
  float4 acc[TM] = {};
  [[maybe_unused]] const int mw = warp / 2 * 16, nw = warp % 2 * 16;  // TF32: the warp's quarter
  [[maybe_unused]] float d[2][4] = {};
  // Step t, register set and stage P = t % 2, Q = the other: multiply stage P; move tile t + 1
  // from registers Q to stage Q, which step t - 1 read before the barrier that ended it; refill
  // registers Q with tile t + 3, which then has two steps to arrive.
  auto step = [&](auto parity, int t) {
    constexpr int P = decltype(parity)::value;
    constexpr std::integral_constant<int, 1 - P> Q{};
    if constexpr (TF32) {
      multiply_tile_tf32(As[P], Bs[P], mw, nw, lane, d);
    } else {
      multiply_tile(As[P], Bs[P], r0, c0, acc);
    }
    if (t + 1 < tiles) stage(Q);
    if (t + 3 < tiles) fetch(Q, t + 3);
    // Stage Q is complete before step t + 1 multiplies it, and no one reads stage P again
    // before step t + 1 writes it.
    __syncthreads();
  };
  for (int t = 0; t < tiles; t += 2) {
    step(EVEN, t);
    if (t + 1 < tiles) step(ODD, t + 1);
  }
  if constexpr (TF32) {
    // The fragments into the FMA path's layout through shared memory (stage 0 of A, free
    // since the last step's barrier; BM x (BN + PAD) floats, as it is BK x (BM + PAD)), so
    // that the split-K and store code below is the same for both.
    float (*Cs)[BN + PAD] = As[0];
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int col = nw + 8 * j + 2 * t;
      Cs[mw + g][col] = d[j][0];
      Cs[mw + g][col + 1] = d[j][1];
      Cs[mw + g + 8][col] = d[j][2];
      Cs[mw + g + 8][col + 1] = d[j][3];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TM; ++i) acc[i] = *reinterpret_cast<const float4*>(&Cs[r0 + i][c0]);
  }

  // acc[i] is this slice's C[m0 + r0 + i, n .. n + 3]. Groups whose first row or column lies
  // outside the matrix are neither written nor read back.
  const int n = n0 + c0;
  bool inside[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) inside[i] = m0 + r0 + i < g.M && n < g.N;
  if (slices > 1) {
    // Partial tiles (tiles, slices, BM, BN): a tile's slices are one contiguous run, its own
    // lines; the float4 stores and loads are aligned (g.partial is, and BN is a multiple of 4).
    const float* tile_partials = g.partial + int64_t{tile} * slices * TILE;
    float* mine = g.partial + (int64_t{tile} * slices + blockIdx.y) * TILE;
#pragma unroll
    for (int i = 0; i < TM; ++i)
      if (inside[i]) *reinterpret_cast<float4*>(mine + (r0 + i) * BN + c0) = acc[i];
    if (!last_to_arrive(counters + tile, slices)) return;
    // The slices in order 0, 1, ..., this block's own read back too: the same sum, bit for
    // bit, whichever block is last. __ldcg reads L2, where other SMs' stores are, never a
    // line this SM's L1 might hold from before. Unrolled: 8 loads in flight per thread.
#pragma unroll
    for (int i = 0; i < TM; ++i) acc[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 4
    for (int z = 0; z < slices; ++z) {
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        if (!inside[i]) continue;
        const float4 p = __ldcg(reinterpret_cast<const float4*>(tile_partials + int64_t{z} * TILE +
                                                               (r0 + i) * BN + c0));
        acc[i].x += p.x;
        acc[i].y += p.y;
        acc[i].z += p.z;
        acc[i].w += p.w;
      }
    }
  }

  // C = alpha * acc + beta * C: one 16-byte store per group where C's rows allow it.
  const bool c_vec = reinterpret_cast<std::uintptr_t>(g.C) % 16 == 0 && g.ldc % 4 == 0;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    if (!inside[i]) continue;
    const int m = m0 + r0 + i;
    if (c_vec && n + 3 < g.N) {
      store_c4(s, m, n, acc[i]);
    } else {
      const float v[4] = {acc[i].x, acc[i].y, acc[i].z, acc[i].w};
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (n + e < g.N) store_c(s, m, n + e, v[e]);
    }
  }
}

int64_t output_tiles(int M, int N) { return int64_t{(M + BM - 1) / BM} * ((N + BN - 1) / BN); }

int slices_of(const Gemm& g) {
  return g.k_slice > 0 ? std::max(1, (g.K + g.k_slice - 1) / g.k_slice) : 1;
}

}  // namespace

int small_splitk_k_slice(int M, int N, int K, int sms) {
  const int64_t tiles = output_tiles(M, N);
  const int64_t k_tiles = (K + BK - 1) / BK;
  const int64_t by_sms = (int64_t{BLOCKS_PER_SM} * sms + tiles - 1) / tiles;
  const int64_t slices = std::min({by_sms, k_tiles, int64_t{MAX_SLICES}});
  if (slices <= 1 || tiles > SMALL_SPLITK_COUNTERS) return 0;
  // Whole K tiles per slice; rounding up may leave fewer slices than asked (784 = 25 tiles in
  // slices of 2: 13), never one (k_tiles >= 2 here, so ceil(k_tiles / slices) < k_tiles).
  return static_cast<int>((k_tiles + slices - 1) / slices * BK);
}

int64_t small_splitk_workspace(const Gemm& g) {
  const int slices = slices_of(g);
  return slices > 1 ? output_tiles(g.M, g.N) * slices * TILE : 0;
}

void small_splitk(const Gemm& g, bool tf32, unsigned* counters, cudaStream_t stream) {
  if (g.M == 0 || g.N == 0) return;
  const int64_t tiles = output_tiles(g.M, g.N);
  const int slices = slices_of(g);
  ENGINE_CHECK(tiles < (int64_t{1} << 31), "small_splitk: ", tiles, " output tiles, beyond a grid's 2^31 - 1");
  ENGINE_CHECK(slices <= 65535, "small_splitk: ", slices, " K slices, beyond a grid's 65535");
  if (slices > 1) {
    ENGINE_CHECK(tiles <= SMALL_SPLITK_COUNTERS, "small_splitk: split-K over ", tiles,
                 " output tiles, but there are counters for ", SMALL_SPLITK_COUNTERS);
    ENGINE_CHECK(counters != nullptr && g.partial != nullptr &&
                     reinterpret_cast<std::uintptr_t>(g.partial) % 16 == 0,
                 "small_splitk: split-K needs counters and a 16-byte aligned workspace");
  }
  const bool vec = rows_allow_float4(g);
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(slices));
  dispatch_transposes(g, [&](auto ta, auto tb) {
    constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
    if (tf32) {
      if (vec)
        small_splitk_kernel<TA, TB, true, true><<<grid, THREADS, 0, stream>>>(g, counters);
      else
        small_splitk_kernel<TA, TB, false, true><<<grid, THREADS, 0, stream>>>(g, counters);
    } else if (vec) {
      small_splitk_kernel<TA, TB, true, false><<<grid, THREADS, 0, stream>>>(g, counters);
    } else {
      small_splitk_kernel<TA, TB, false, false><<<grid, THREADS, 0, stream>>>(g, counters);
    }
  });
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
