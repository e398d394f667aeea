// The tiled implicit-GEMM kernel every convolution pass runs (kernels/conv/forward.cu,
// backward_data.cu, backward_filter.cu): C (M x N) = A (M x K) @ B (K x N), where a pass says
// how to gather a group of 4 elements of A or B from the activations (its "loaders"), and this
// kernel does the rest: shared-memory tiles, register blocking, double buffering, the FP32 or
// TF32 multiply, split-K and the store of C.
//
// Tiles: BM x BN x BK per block with BK = 16 and 256 threads = 8 warps as WARPS_M x WARPS_N,
// each warp a (4 TM) x 32 sub-tile; BN = 32, 64 or 128 (the seed layers' out_c and in_c) and
// TM = 8 or 4 give BM = TM * 1024 / BN: 256 x 32, 128 x 64, 64 x 128 (or half as many rows).
//  - FP32: lane (lm, ln) = (lane / 8, lane % 8) owns rows lm * TM .. + TM - 1 and columns
//    4 ln .. 4 ln + 3 of its warp's tile: per k step 1 + TM / 4 LDS.128 (A's a broadcast to
//    8 lanes, B's 128 consecutive bytes) for 4 TM FFMA, v7's ratio (kernels/matmul/).
//  - TF32: the warp's tile is (TM / 4) x 4 mma.sync m16n8k8 tiles (v9's instruction and
//    fragments, kernels/matmul/mma_tf32.h), 4 TM accumulators per thread as in FP32.
// Shared memory holds both operands k-major, As[k][m] and Bs[k][n], rows padded by 8 floats:
// the rows stay 16-byte aligned for LDS.128, and mma's fragment loads (lane (g, t) reads row
// t, column g) fall in banks 8 t + g, all 32 different. Two stages: the global loads of tile
// t + 1 go to registers before tile t is multiplied and to the other stage after (v7's double
// buffering), one barrier per tile. TF32 with Tiling::stages 3 or 4 runs a second kernel,
// implicit_gemm_pipelined_kernel below: the same multiply behind a deeper cp.async pipeline.
//
// Groups of 4: a loader reads 4 consecutive k of one row of A (K_CONTIGUOUS: the gathered
// channels, as the forward pass reads x's in_c) or 4 consecutive m (n) of one k (the
// backward-filter pass's patches, B = w or dy). Which group a thread loads is fixed for the
// whole K loop except for its k, so each loader decodes its fixed coordinate once (an image's
// base pointer and window corner) and walks k with a cursor: no division per tile. VEC: every
// group is one 16-byte load (the channels it runs along are a multiple of 4 and the operands
// 16-byte aligned: vectorized() in implicit_gemm.cu); otherwise each element is decoded and
// read alone (the first layers' 1 or 3 channels).
//
// Split-K (Args::k_slice > 0): blockIdx.z takes k in [z k_slice, (z + 1) k_slice) and writes its
// partial C to workspace + z M N; gemm::split_k_reduce then adds the slices in order: the
// same bits on every run, no float atomics.
#pragma once
#include <cstdint>

#include "kernels/conv/implicit_gemm.h"
#include "kernels/cuda_check.h"
#include "kernels/matmul/cp_async.h"
#include "kernels/matmul/mma_tf32.h"

namespace engine::cuda::conv {

constexpr int THREADS = 256;
constexpr int BK = 16;
constexpr int PAD = 8;  // floats after each shared row (see above)

// The kernel's arguments: the convolution's geometry (checked on the host to fit in int), the
// GEMM's shape, and the operands.
struct Args {
  int in_h, in_w, in_c, kernel_h, kernel_w, out_c;
  int stride_h, stride_w, pad_top, pad_left, out_h, out_w;
  int M, N, K;
  int k_slice;     // 0, or split-K slices of this many k (a multiple of BK)
  const float* a;  // what A is gathered from: x (forward, backward_filter) or dy (backward_data)
  const float* b;  // what B is read from: w (forward, backward_data) or dy (backward_filter)
  float* c;        // C (M, N) row-major, or the (slices, M, N) workspace when split
  bool c_vec;      // C's rows take 16-byte stores: N % 4 == 0 and c 16-byte aligned
};

// ---- what the loaders share --------------------------------------------------------------

__device__ __forceinline__ float4 zero4() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }
// __ldg: global loads through the read-only path; the operands are never written during a pass.
__device__ __forceinline__ float4 load4(const float* p) {
  return __ldg(reinterpret_cast<const float4*>(p));
}
__device__ __forceinline__ float& component(float4& v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

// A position in a filter's taps, k = (kh * kernel_w + kw) * channels + c, the order of the
// filter (kh, kw, in_c, out_c) and of a patch's NHWC elements.
struct Tap {
  int kh, kw, c;
};
__device__ __forceinline__ Tap decode_tap(int k, int channels, int kernel_w) {
  const int pos = k / channels;
  return {pos / kernel_w, pos % kernel_w, k - pos * channels};
}
// Moves the tap `step` k on: one subtraction when channels >= step (every layer but the
// first), a few rounds for 1 or 3 channels, whose K is one or two tiles anyway.
__device__ __forceinline__ void advance_tap(Tap& t, int step, int channels, int kernel_w) {
  t.c += step;
  while (t.c >= channels) {
    t.c -= channels;
    if (++t.kw == kernel_w) {
      t.kw = 0;
      ++t.kh;
    }
  }
}

// An output pixel (n, oh, ow) of the (out_h, out_w) grid, walked in row-major order.
struct Pixel {
  int n, oh, ow;
};
__device__ __forceinline__ Pixel decode_pixel(int m, int h, int w) {
  const int row = m / w;
  return {row / h, row % h, m - row * w};
}
__device__ __forceinline__ void advance_pixel(Pixel& p, int step, int h, int w) {
  p.ow += step;
  while (p.ow >= w) {
    p.ow -= w;
    if (++p.oh == h) {
      p.oh = 0;
      ++p.n;
    }
  }
}

__device__ __forceinline__ bool inside(int i, int extent) {
  return static_cast<unsigned>(i) < static_cast<unsigned>(extent);
}

// An operand loader (DenseRows below, and one per pass in forward.cu, backward_data.cu,
// backward_filter.cu) splits what a thread needs to find its groups into
//   Fixed: what its fixed coordinate x (an m or n) gives, decoded once: an image's base
//     pointer and window corner, a filter tap;
//   Walk:  where along k it is, moved BK on after every tile: k and its decoded form.
// A thread's loads of a tile share one Walk when the operand is K_CONTIGUOUS (group_of gives
// all of them the same columns) and one Fixed otherwise (the same x): no register holds what
// another holds already. The interface:
//   static Fixed fix(const Args&, int x);   x past the end of its axis: the loads read nothing
//   static Walk walk(const Args&, int k);
//   static const float* source(const Args&, const Fixed&, const Walk&, int k_end);
//     with 16-byte loads (VEC), the group's address, or null where the group is all zeros
//     (padding, past k_end or past the axis): what the cp.async pipeline copies;
//   template <bool VEC> static float4 fetch(const Args&, const Fixed&, const Walk&, int k_end);
//     the group itself (VEC: a load from source(); else element by element);
//   static void advance(const Args&, Walk&);  // BK further along k

// B read straight from a row-major (K x N) matrix: w (kh*kw*in_c, out_c) in the forward pass,
// dy (batch*oh*ow, out_c) in the backward-filter pass. Group (k, n .. n + 3).
struct DenseRows {
  static constexpr bool K_CONTIGUOUS = false;
  struct Fixed {
    int n;
  };
  struct Walk {
    int k;
  };
  __device__ static Fixed fix(const Args&, int n) { return {n}; }
  __device__ static Walk walk(const Args&, int k) { return {k}; }
  // VEC: the group's 16 bytes, or null where it is all zeros (N % 4 == 0: whole or absent).
  __device__ static const float* source(const Args& p, const Fixed& f, const Walk& w, int k_end) {
    return w.k < k_end && f.n < p.N ? p.b + int64_t{w.k} * p.N + f.n : nullptr;
  }
  template <bool VEC>
  __device__ static float4 fetch(const Args& p, const Fixed& f, const Walk& w, int k_end) {
    float4 v = zero4();
    if (w.k >= k_end) return v;
    const float* row = p.b + int64_t{w.k} * p.N + f.n;
    if (VEC) {
      if (const float* group = source(p, f, w, k_end)) v = load4(group);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (f.n + e < p.N) component(v, e) = __ldg(row + e);
    }
    return v;
  }
  __device__ static void advance(const Args&, Walk& w) { w.k += BK; }
};

// ---- the kernel --------------------------------------------------------------------------

// Which group of an operand tile load i of this thread takes: its row and first column in
// the tile as the operand is stored (K_CONTIGUOUS: X rows (m or n) by BK columns (k); else BK
// rows by X columns); false when the tile has fewer groups than the threads' loads. Either
// way one coordinate does not depend on i: the column (k) when K_CONTIGUOUS, else the column
// (x), so the loads share a Walk or a Fixed.
//   k contiguous: half-warps take 16 consecutive rows, lanes l and l + 16 the two 16-byte
//     halves of one 32-byte sector (whole sectors from global memory); 64 threads cover 16
//     rows, load i the rows 64 i further on. The transposing stores into As[k][x] put a
//     half-warp on 16 consecutive floats of a shared row.
//   x contiguous: consecutive threads take consecutive groups of a row (coalesced), and
//     store them as one STS.128 each; load i the rows THREADS / (X / 4) further on.
template <int X, bool K_CONTIGUOUS>
__device__ __forceinline__ bool group_of(int i, int& row, int& col) {
  constexpr int GROUPS = X * BK / 4;
  static_assert(BK == 16 && X % 32 == 0 && THREADS % (X / 4) == 0, "the mappings below");
  const int g = static_cast<int>(threadIdx.x) + i * THREADS;
  if constexpr (K_CONTIGUOUS) {
    row = g / 64 * 16 + g % 16;
    col = g / 32 % 2 * 8 + g % 32 / 16 * 4;
  } else {
    row = g / (X / 4);
    col = g % (X / 4) * 4;
  }
  return GROUPS % THREADS == 0 || g < GROUPS;
}

// A thread's loads of one operand's X x BK tile: LOADS groups, their Fixed and Walk parts.
template <class Loader, int X>
struct TileLoads {
  static constexpr bool KC = Loader::K_CONTIGUOUS;
  static constexpr int LOADS = (X * BK / 4 + THREADS - 1) / THREADS;
  // A thread without a group (the tile has fewer groups than threads) has only one load.
  static_assert((X * BK / 4) % THREADS == 0 || LOADS == 1, "unused loads come alone");
  typename Loader::Fixed fixed[KC ? LOADS : 1];
  typename Loader::Walk walk[KC ? 1 : LOADS];
  float4 r[LOADS];  // the next tile, between global and shared memory

  // The tile at x0 (its first m or n) and k0; `limit`: the end of x's axis (M or N).
  __device__ void init(const Args& p, int x0, int k0, int limit) {
#pragma unroll
    for (int i = 0; i < LOADS; ++i) {
      int row, col;
      const bool used = group_of<X, KC>(i, row, col);
      if (KC) {
        fixed[i] = Loader::fix(p, used ? x0 + row : limit);
        if (i == 0) walk[0] = Loader::walk(p, k0 + col);
      } else {
        if (i == 0) fixed[0] = Loader::fix(p, used ? x0 + col : limit);
        walk[i] = Loader::walk(p, k0 + row);
      }
    }
  }
  // Global -> registers: this tile's groups, then every Walk moves on to the next tile.
  template <bool VEC>
  __device__ void fetch(const Args& p, int k_end) {
#pragma unroll
    for (int i = 0; i < LOADS; ++i)
      r[i] = Loader::template fetch<VEC>(p, fixed[KC ? i : 0], walk[KC ? 0 : i], k_end);
    advance(p);
  }
  // Global -> shared without registers (the pipelined kernel; 16-byte groups only): one
  // cp.async per group into `stage` (laid out as StageLayout<X, KC>), zeros where the loader
  // has no group (src-size 0 reads nothing: `p.a` is only a valid address to name), then every
  // Walk moves on to the next tile. L1-cached: a gather reads its neighbours' elements again.
  template <int STRIDE>
  __device__ void issue(const Args& p, int k_end, float* stage) {
#pragma unroll
    for (int i = 0; i < LOADS; ++i) {
      int row, col;
      if (!group_of<X, KC>(i, row, col)) continue;
      const float* group = Loader::source(p, fixed[KC ? i : 0], walk[KC ? 0 : i], k_end);
      gemm::cp_async_16<true>(stage + row * STRIDE + col, group ? group : p.a, group ? 16 : 0);
    }
    advance(p);
  }
  __device__ void advance(const Args& p) {
#pragma unroll
    for (int i = 0; i < (KC ? 1 : LOADS); ++i) Loader::advance(p, walk[i]);
  }
};

// Registers -> shared: Xs[k][x] whichever way the operand is stored.
template <int X, bool K_CONTIGUOUS, int LOADS>
__device__ __forceinline__ void stage_tile(float (*Xs)[X + PAD], const float4 (&r)[LOADS]) {
#pragma unroll
  for (int i = 0; i < LOADS; ++i) {
    int row, col;
    if (!group_of<X, K_CONTIGUOUS>(i, row, col)) continue;
    if (K_CONTIGUOUS) {
      Xs[col + 0][row] = r[i].x;
      Xs[col + 1][row] = r[i].y;
      Xs[col + 2][row] = r[i].z;
      Xs[col + 3][row] = r[i].w;
    } else {
      *reinterpret_cast<float4*>(&Xs[row][col]) = r[i];
    }
  }
}

// ---- what both kernels share ------------------------------------------------------------

// The block's tile of C and its K range: rows m0.., columns n0.., k in [k_begin, k_end), and
// where its C goes (the workspace slice of blockIdx.z when split).
struct BlockTile {
  int m0, n0, k_begin, k_end;
  float* c;
};
template <int BM, int BN>
__device__ __forceinline__ BlockTile block_tile(const Args& p) {
  const int k_begin = p.k_slice > 0 ? static_cast<int>(blockIdx.z) * p.k_slice : 0;
  return {static_cast<int>(blockIdx.x) * BM, static_cast<int>(blockIdx.y) * BN, k_begin,
          p.k_slice > 0 ? min(p.K, k_begin + p.k_slice) : p.K,
          p.c + (p.k_slice > 0 ? int64_t{blockIdx.z} * p.M * p.N : 0)};
}

// Element (k, x) of one stage of an operand tile in shared memory: x-major (rows of STRIDE
// floats along k) or k-major (rows of STRIDE floats along x).
template <bool X_MAJOR, int STRIDE>
struct SmemTile {
  const float* base;
  __device__ float operator()(int k, int x) const {
    return X_MAJOR ? base[x * STRIDE + k] : base[k * STRIDE + x];
  }
};

// TF32: one BK-deep tile through mma.sync m16n8k8 (v9's instruction and fragments,
// kernels/matmul/mma_tf32.h). The warp's tile is MI x 4 mma tiles at rows wm0 + 16 i and
// columns wn0 + 8 j of the block tile; acc[i * 4 + j] holds tile (i, j) in mma's d layout.
// Operands are rounded to TF32 (cvt.rna) as they are loaded into fragments.
template <int MI, int TM, class ATile, class BTile>
__device__ __forceinline__ void mma_k_tile(float (&acc)[TM][4], const ATile& as, const BTile& bs,
                                           int wm0, int wn0, int lane) {
  constexpr int NI = 4;
  static_assert(MI * NI == TM, "one accumulator group of 4 per mma tile");
  const int g4 = lane / 4, t4 = lane % 4;  // mma's groupID, threadID
#pragma unroll
  for (int kk = 0; kk < BK; kk += 8) {
    uint32_t a[MI][4], b[NI][2];
#pragma unroll
    for (int i = 0; i < MI; ++i) {
      const int m = wm0 + 16 * i + g4;
      a[i][0] = gemm::to_tf32(as(kk + t4, m));
      a[i][1] = gemm::to_tf32(as(kk + t4, m + 8));
      a[i][2] = gemm::to_tf32(as(kk + t4 + 4, m));
      a[i][3] = gemm::to_tf32(as(kk + t4 + 4, m + 8));
    }
#pragma unroll
    for (int j = 0; j < NI; ++j) {
      const int n = wn0 + 8 * j + g4;
      b[j][0] = gemm::to_tf32(bs(kk + t4, n));
      b[j][1] = gemm::to_tf32(bs(kk + t4 + 4, n));
    }
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) gemm::mma_tf32(acc[i * NI + j], a[i], b[j]);
  }
}

// TF32: the warp's accumulators into C (rows m_base + 16 i + ..., columns n_base + 8 j + ...).
template <int MI, int TM>
__device__ __forceinline__ void store_mma_tiles(const Args& p, float* c, const float (&acc)[TM][4],
                                                int m_base, int n_base, int lane) {
  constexpr int NI = 4;
  const int g4 = lane / 4, t4 = lane % 4;
#pragma unroll
  for (int i = 0; i < MI; ++i) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // mma's d rows g4 and g4 + 8
      const int m = m_base + 16 * i + g4 + 8 * h;
      if (m >= p.M) continue;
      float* row = c + int64_t{m} * p.N;
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const int n = n_base + 8 * j + 2 * t4;
        if (n < p.N) row[n] = acc[i * NI + j][2 * h];
        if (n + 1 < p.N) row[n + 1] = acc[i * NI + j][2 * h + 1];
      }
    }
  }
}

// ---- the two-stage kernel: FP32, and TF32 with Tiling::stages 2 ---------------------------

// (THREADS, 2): at most 128 registers a thread, two blocks per SM (2 x at most 39 KB of shared
// memory), so one block's barrier waits are filled by the other's multiplies.
template <class Gather, int BN, int TM, bool VEC, bool TF32>
__global__ void __launch_bounds__(THREADS, 2) implicit_gemm_kernel(const Args p) {
  constexpr int BM = TM * 1024 / BN;
  constexpr int WARPS_N = BN / 32, WARPS_M = 8 / WARPS_N;
  constexpr int WM = BM / WARPS_M;  // 4 TM rows per warp, 32 columns
  static_assert(WM == 4 * TM && WARPS_M * WARPS_N == THREADS / 32, "warp layout");
  static_assert(TM % 4 == 0, "TF32: whole 16-row mma tiles, FP32: float4 reads of As");
  static_assert(!TF32 || VEC, "TF32 runs only with 16-byte loads");
  using ALoads = TileLoads<typename Gather::A, BM>;
  using BLoads = TileLoads<typename Gather::B, BN>;

  // Two stages of As[k][m] and Bs[k][n]: at most 2 x 16 x (256 + 8) + 2 x 16 x (32 + 8) floats,
  // 39 KB, under the 48 KB of static shared memory.
  __shared__ __align__(16) float As[2][BK][BM + PAD];
  __shared__ __align__(16) float Bs[2][BK][BN + PAD];

  const BlockTile bt = block_tile<BM, BN>(p);
  ALoads a_loads;
  BLoads b_loads;
  a_loads.init(p, bt.m0, bt.k_begin, p.M);
  b_loads.init(p, bt.n0, bt.k_begin, p.N);
  auto fetch = [&] {
    a_loads.template fetch<VEC>(p, bt.k_end);
    b_loads.template fetch<VEC>(p, bt.k_end);
  };
  auto stage = [&](int s) {
    stage_tile<BM, ALoads::KC>(As[s], a_loads.r);
    stage_tile<BN, BLoads::KC>(Bs[s], b_loads.r);
  };

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int wm0 = warp / WARPS_N * WM, wn0 = warp % WARPS_N * 32;  // the warp's sub-tile
  // FP32: this thread's rows and columns in the block tile.
  const int r0 = wm0 + lane / 8 * TM, c0 = wn0 + lane % 8 * 4;
  constexpr int MI = WM / 16;  // TF32: mma tiles per warp, MI x 4
  // FP32: acc[i][j] is C[r0 + i][c0 + j]. TF32: mma_k_tile's layout.
  float acc[TM][4] = {};

  fetch();
  stage(0);
  __syncthreads();  // stage 0 is complete before anyone multiplies it
  const int tiles = (bt.k_end - bt.k_begin + BK - 1) / BK;
  for (int t = 0; t < tiles; ++t) {
    const int s = t & 1;
    const bool more = t + 1 < tiles;  // uniform across the block
    if (more) fetch();                // in flight while this tile is multiplied
    if constexpr (TF32) {
      mma_k_tile<MI>(acc, SmemTile<false, BM + PAD>{&As[s][0][0]}, SmemTile<false, BN + PAD>{&Bs[s][0][0]},
                     wm0, wn0, lane);
    } else {
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        float a[TM];
#pragma unroll
        for (int i = 0; i < TM; i += 4) {
          const float4 v = *reinterpret_cast<const float4*>(&As[s][k][r0 + i]);
          a[i] = v.x;
          a[i + 1] = v.y;
          a[i + 2] = v.z;
          a[i + 3] = v.w;
        }
        const float4 b = *reinterpret_cast<const float4*>(&Bs[s][k][c0]);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
          acc[i][0] += a[i] * b.x;
          acc[i][1] += a[i] * b.y;
          acc[i][2] += a[i] * b.z;
          acc[i][3] += a[i] * b.w;
        }
      }
    }
    // The other stage was last read in the previous iteration, before the barrier that ended it.
    if (more) stage(s ^ 1);
    // The next stage is complete before anyone multiplies it, and everyone is done with this
    // one before the next iteration's stores overwrite it.
    __syncthreads();
  }

  if constexpr (TF32) {
    store_mma_tiles<MI>(p, bt.c, acc, bt.m0 + wm0, bt.n0 + wn0, lane);
  } else {
    const int n = bt.n0 + c0;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int m = bt.m0 + r0 + i;
      if (m >= p.M || n >= p.N) continue;
      float* out = bt.c + int64_t{m} * p.N + n;
      if (p.c_vec) {  // N % 4 == 0, so the whole group is inside
        *reinterpret_cast<float4*>(out) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (n + j < p.N) out[j] = acc[i][j];
      }
    }
  }
}

// ---- the pipelined TF32 kernel: Tiling::stages 3 or 4 -------------------------------------
//
// Why: on an H100 the two-stage TF32 kernel ran the CIFAR CNN's deep layers at about a tenth of
// what mma.sync can do (ncu: docs/HISTORY.md, 2026-11-24), with 2 blocks
// of 8 warps per SM and one tile of loads in flight per block: each of the 18-72 K tiles waits
// for its gather from L2. Here STAGES - 1 tiles are in flight: cp.async copies global -> shared
// directly (no staging registers, no transposing stores), tile t + S - 1 is issued while tile t
// is multiplied, one barrier per tile. The multiply and the store are the two-stage kernel's
// (mma_k_tile, store_mma_tiles) on the same values in the same order, so both give the same bits
// (tests/test_gpu_conv.cpp checks it).
//
// Shared memory per stage (StageLayout): an operand whose groups run along k (K_CONTIGUOUS) is
// stored x-major, rows of BK + 4 = 20 floats, so each 16-byte group is one cp.async; rows of
// 80 bytes put mma's fragment loads (8 rows x 4 k) on 32 different banks. The others stay
// k-major with rows of X + 8 floats, as in the two-stage kernel. Largest (256 x 32 tiles, A
// x-major): 256 x 20 + 16 x 40 floats = 23 KB a stage, 92 KB for 4 stages, so two blocks
// still fit an SM's 228 KB (dynamic shared memory, opted into at the first launch).
template <int X, bool K_CONTIGUOUS>
struct StageLayout {
  static constexpr int STRIDE = K_CONTIGUOUS ? BK + 4 : X + PAD;
  static constexpr int FLOATS = (K_CONTIGUOUS ? X : BK) * STRIDE;
  __device__ static SmemTile<K_CONTIGUOUS, STRIDE> view(const float* stage) { return {stage}; }
};

// The largest stage, whose size core/gpu_architecture.cpp uses to decide where two 3-stage
// blocks fit an SM (KernelChoice::conv_tf32_stages).
static_assert(sizeof(float) * (StageLayout<256, true>::FLOATS + StageLayout<32, false>::FLOATS) == 23040 &&
                  sizeof(float) * (StageLayout<256, true>::FLOATS + StageLayout<32, true>::FLOATS) <= 23040,
              "core/gpu_architecture.cpp: CONV_TF32_THREE_STAGES_BYTES");

template <class Gather, int BN, int TM, int STAGES>
__global__ void __launch_bounds__(THREADS, 2) implicit_gemm_pipelined_kernel(const Args p) {
  constexpr int BM = TM * 1024 / BN;
  constexpr int WARPS_N = BN / 32, WARPS_M = 8 / WARPS_N;
  constexpr int WM = BM / WARPS_M, MI = WM / 16;
  static_assert(WM == 4 * TM && WARPS_M * WARPS_N == THREADS / 32 && TM % 4 == 0, "warp layout");
  static_assert(STAGES >= 3, "two stages: implicit_gemm_kernel");
  using ALoads = TileLoads<typename Gather::A, BM>;
  using BLoads = TileLoads<typename Gather::B, BN>;
  using AStage = StageLayout<BM, ALoads::KC>;
  using BStage = StageLayout<BN, BLoads::KC>;
  extern __shared__ __align__(16) float smem[];
  float* const as = smem;                          // STAGES x AStage::FLOATS
  float* const bs = smem + STAGES * AStage::FLOATS;  // STAGES x BStage::FLOATS

  const BlockTile bt = block_tile<BM, BN>(p);
  ALoads a_loads;
  BLoads b_loads;
  a_loads.init(p, bt.m0, bt.k_begin, p.M);
  b_loads.init(p, bt.n0, bt.k_begin, p.N);
  // Tiles are issued in order, 0, 1, 2, ...: each issue moves the loaders' walks one tile on.
  auto issue = [&](int s) {
    a_loads.template issue<AStage::STRIDE>(p, bt.k_end, as + s * AStage::FLOATS);
    b_loads.template issue<BStage::STRIDE>(p, bt.k_end, bs + s * BStage::FLOATS);
  };

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int wm0 = warp / WARPS_N * WM, wn0 = warp % WARPS_N * 32;
  float acc[TM][4] = {};

  const int tiles = (bt.k_end - bt.k_begin + BK - 1) / BK;
  // One commit group per tile, empty past the last, so that "all but STAGES - 2 groups done"
  // always means "tile t is here".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) issue(s);
    gemm::cp_async_commit();
  }
  for (int t = 0; t < tiles; ++t) {
    gemm::cp_async_wait<STAGES - 2>();  // this thread's copies of tile t have landed
    // Everyone's have, and everyone is done multiplying tile t - 1, whose stage the next
    // issue reuses.
    __syncthreads();
    if (t + STAGES - 1 < tiles) issue((t + STAGES - 1) % STAGES);
    gemm::cp_async_commit();
    const int s = t % STAGES;
    mma_k_tile<MI>(acc, AStage::view(as + s * AStage::FLOATS), BStage::view(bs + s * BStage::FLOATS),
                   wm0, wn0, lane);
  }
  gemm::cp_async_wait<0>();  // nothing real is in flight; the empty groups, for tidiness
  store_mma_tiles<MI>(p, bt.c, acc, bt.m0 + wm0, bt.n0 + wn0, lane);
}

// ---- launching --------------------------------------------------------------------------

template <class Gather, int BN, int TM, int STAGES>
void launch_pipelined(const Args& p, dim3 grid, cudaStream_t stream) {
  constexpr int BM = TM * 1024 / BN;
  constexpr size_t bytes = sizeof(float) * STAGES *
                           (StageLayout<BM, Gather::A::K_CONTIGUOUS>::FLOATS +
                            StageLayout<BN, Gather::B::K_CONTIGUOUS>::FLOATS);
  const auto kernel = implicit_gemm_pipelined_kernel<Gather, BN, TM, STAGES>;
  // Above 48 KB a kernel must opt in to dynamic shared memory, once per kernel.
  static const bool opted_in = [&] {
    CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)));
    return true;
  }();
  (void)opted_in;
  kernel<<<grid, THREADS, bytes, stream>>>(p);
}

// Launches the pass `Gather` with tiling t: the kernel for (t.bn, t.tm), with 16-byte loads
// when `vec`, on TF32 tensor cores when t.tf32 and vec, pipelined when also t.stages > 2.
template <class Gather, int BN, int TM>
void launch_tiles(const Args& p, bool vec, const Tiling& t, dim3 grid, cudaStream_t stream) {
  const bool tf32 = vec && t.tf32;
  if (tf32 && t.stages == 4)
    launch_pipelined<Gather, BN, TM, 4>(p, grid, stream);
  else if (tf32 && t.stages == 3)
    launch_pipelined<Gather, BN, TM, 3>(p, grid, stream);
  else if (tf32)
    implicit_gemm_kernel<Gather, BN, TM, true, true><<<grid, THREADS, 0, stream>>>(p);
  else if (vec)
    implicit_gemm_kernel<Gather, BN, TM, true, false><<<grid, THREADS, 0, stream>>>(p);
  else
    implicit_gemm_kernel<Gather, BN, TM, false, false><<<grid, THREADS, 0, stream>>>(p);
}

template <class Gather>
void launch(const Args& p, const Tiling& t, bool vec, int slices, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((p.M + t.block_rows() - 1) / t.block_rows()),
                  static_cast<unsigned>((p.N + t.bn - 1) / t.bn), static_cast<unsigned>(slices));
  switch (t.bn * 10 + t.tm) {
    case 328: launch_tiles<Gather, 32, 8>(p, vec, t, grid, stream); break;
    case 324: launch_tiles<Gather, 32, 4>(p, vec, t, grid, stream); break;
    case 648: launch_tiles<Gather, 64, 8>(p, vec, t, grid, stream); break;
    case 644: launch_tiles<Gather, 64, 4>(p, vec, t, grid, stream); break;
    case 1288: launch_tiles<Gather, 128, 8>(p, vec, t, grid, stream); break;
    case 1284: launch_tiles<Gather, 128, 4>(p, vec, t, grid, stream); break;
    default: throw Error("conv: no kernel for this tiling (checked in prepare())");
  }
  CHECK_LAUNCH();
}

// The host side every pass shares (implicit_gemm.cu): checks the geometry and the tiling,
// fills the Args whose operands are a, b and c (c the workspace when split), and returns the
// number of K slices; 0 when there is nothing to launch (an empty C, or an empty sum, whose
// zeros it has already set on `stream`).
int prepare(Pass pass, const Conv2dGeometry& g, const Tiling& t, const float* a, const float* b,
            float* c, float* workspace, cudaStream_t stream, Args& p);
// After a split launch: C = the slices' sum, in order (gemm::split_k_reduce).
void reduce_slices(const Args& p, int slices, float* c, cudaStream_t stream);

// Runs a pass end to end: prepare, launch, reduce.
template <class Gather>
void run(Pass pass, const Conv2dGeometry& g, const Tiling& t, const float* a, const float* b,
         float* c, float* workspace, cudaStream_t stream) {
  Args p;
  const int slices = prepare(pass, g, t, a, b, c, workspace, stream, p);
  if (slices == 0) return;
  launch<Gather>(p, t, vectorized(pass, g, a, b), slices, stream);
  if (slices > 1) reduce_slices(p, slices, c, stream);
}

}  // namespace engine::cuda::conv
