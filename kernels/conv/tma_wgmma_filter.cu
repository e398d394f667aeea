// The filter gradient on Hopper: TMA gathers x tap by tap, wgmma multiplies it (TF32) as its
// register operand against a copy of dy.
//
// dw[tap][ci][co] = sum over output pixels p of x[p moved by the tap][ci] * dy[p][co]: a GEMM
// D (M x N) = A (M x K) B (K x N) with M = taps x in_c (dw's rows), N = out_c and K the output
// pixels. Both operands are stored pixel after pixel with their channels contiguous, so K is
// their outer axis, and TF32 wgmma reads an operand from shared memory only K-major (k
// contiguous). The way round it:
//   - A is x, as wgmma's register operand, which has no such rule. TMA copies the box the
//     forward pass gathers (kernels/conv/tma_wgmma.cu): 32 channels of a tile of 32 output
//     pixels, moved by the tap, zeros where the tap reaches past the image; each thread then
//     reads its fragment out of the swizzled box (4 LDS a k step).
//   - B is dy, copied once before the kernel into dyT, (out_c, pixel tiles x 32): each tile's
//     32 pixels contiguous, in the order the kernel walks them, zeros where a tile passes the
//     edge of the images. A 2-D TMA box of dyT is then a K-major tile. dy is not moved by the
//     taps, so one copy serves all of them.
// (The first design, kept on a branch, copied x channel-major instead, where each tap is a
// shift along the pixel axis: TMA starts a box only on a 16-byte boundary, so it needed four
// copies of x and ran slower than the mma.sync kernels: docs/results/cnn.md.)
//
// Napkin math, CIFAR's 8x8x128 -> 128 at batch 100 (M = 1,152, N = 128, K = 6,400 pixels, 200
// tiles of 32): 1.89 GFLOP, 3.8 us at 494 TFLOP/s. A block's k step reads (64 + bn) rows of
// 128 bytes from L2 for 2 x 64 bn 32 FLOP: 18 blocks x 200 steps x 24 KB = 88 MB, ~16 us at
// ~5.5 TB/s; dyT is 3.3 MB written and read, ~2 us; the split-K partials (20 slices of
// 0.6 MB) ~3 us more: ~21 us, measured 21.4 (H200, the copy and the reduction included).
// CIFAR's 32x32x32 -> 32 (M = 288, N = 32, K = 102,400): 5 blocks x 3,200 steps x 12 KB =
// 197 MB from L2, ~36 us, and a 13 MB dyT, ~9 us: ~45 us, measured 41.9. In 4 stages, at most
// 4 blocks an SM and one-tile blocks for the dy copy it took 52.8: then what bounded it was not
// the bytes (ncu: L2 at a quarter of its throughput) but each warp's short chain of LDS ->
// wgmma per k step, with few warps on an SM to cover it: hence 3 stages, not the forward
// pass's 4, so that up to 6 blocks fit an SM (16x16x32 -> 64: 33.5 us in 4 stages, 27.4 in 3).
//
// Block: one consumer warpgroup (64 rows of dw: two x boxes) and a producer warp, as in
// tma_wgmma.cu: per k step the producer's lane 0 issues the two boxes of x (each a tap's 32
// channels) and one box of dyT (bn rows of 32 pixels), counted on the stage's "full"
// mbarrier. Why 64 rows, not 128 as the forward pass can: more warpgroups on an SM at once,
// more blocks (slices) of one warpgroup rather than fewer of two, pay more than the bytes
// saved (H200: 8x8x128 -> 128 25.3 us against 30.7 with 128 rows; CIFAR's 32x32x32 -> 32 53.0
// us with four blocks an SM against 73.1 with two). The consumers load their fragments from
// the x boxes, one wgmma group per k step (8 pixels); before a k step rewrites its fragment
// registers, the same k step of the previous tile, which read them, must be done (v10's rule,
// kernels/matmul/v10_tf32_wgmma.cu), and once the last of a tile's groups is, its stage goes
// back to the producer. (Loading a whole tile's fragments while the previous tile's group
// ran, into a second set of registers, was slower: 31.9 -> 42.6 us on 16x16x32 -> 64.)
//
// Split-K: blockIdx.z takes slice_tiles pixel tiles and writes its partial dw; add_partials
// adds the slices in order (the same bits every run), and in the same launch the dy copy's
// column sums into the bias gradient.
//
// Precision: the fragments are rounded to TF32 (cvt.rna), dyT truncated by wgmma: a product
// errs by less than 2^-9, the TF32 bound of tests/test_gpu_conv.cpp.
#include <cstdint>

#include "core/error.h"
#include "kernels/activation_math.cuh"
#include "kernels/conv/tma_wgmma.h"
#include "kernels/conv/tma_wgmma_pipeline.cuh"
#include "kernels/cuda_check.h"
#include "kernels/matmul/float4_rows.h"  // load_row4
#include "kernels/matmul/gemm.h"
#include "kernels/matmul/mma_tf32.h"
#include "kernels/matmul/tma.h"
#include "kernels/matmul/wgmma.h"

// kernels/CMakeLists.txt compiles this file for sm_90a alone, as tma_wgmma.cu.
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "tma_wgmma_filter.cu is built for sm_90a only"
#endif

namespace engine::cuda::conv {
namespace {

using gemm::DESC_PER_KSTEP;
using gemm::SWIZZLE_ALIGN;
using hopper::PRODUCER_THREADS;
using hopper::ROW_BYTES;

constexpr int TILE_PIXELS = 32;  // k per stage: one 128-byte row of a dyT box
constexpr int CHUNK = hopper::BOX_CHANNELS;  // dw rows per x box: one tap's 32 channels
constexpr int BOX_BYTES = TILE_PIXELS * ROW_BYTES;  // one x box, 4 KB
constexpr int K_STEPS = TILE_PIXELS / 8;            // wgmmas a tile: 8 pixels each
// A block's tile of dw: 64 rows (two x boxes: taps' 32 channels) by bn, one consumer warpgroup.
constexpr int BM = 64;
constexpr int CONSUMER_THREADS = 128;
constexpr int STAGES = hopper::FILTER_STAGES;

// What a launch needs besides its tensor maps.
struct FilterLaunch {
  int batch, out_h, out_w, out_c, in_c, kernel_w;
  int pad_h, pad_w;   // x row of output pixel (oh, ow) at tap (r, s): oh - pad_h + r
  int rows;           // M = taps x in_c
  PixelTile tile;     // the pixel tiles; tile.count of them, K = 32 tile.count
  int slice_tiles;    // pixel tiles a slice (blockIdx.z)
  float* out;         // dw, or the partials: slice z at out + z rows out_c
};

// The first output pixel of pixel tile `t`: tiles run along a row of tiles, then down the
// image, then across the batch.
struct TileCorner {
  int n, oh, ow;
};
__device__ __forceinline__ TileCorner corner_of(const FilterLaunch& p, int t) {
  const int across = static_cast<int>(p.tile.across), down = static_cast<int>(p.tile.down);
  return {t / (across * down) * p.tile.n, t / across % down * p.tile.h, t % across * p.tile.w};
}

// dyT[co][32 t + j] = dy at pixel j of tile t (j = (image, row, column) within the tile, the
// order TMA stores a box of x in), zero outside the images. A block takes DY_COPY_TILES pixel
// tiles (128 pixels) by 32 channels, 16 KB, through shared memory: read along dy's channels
// (8 lanes a pixel's 128 bytes, 16-byte loads where out_c allows), written along dyT's pixels.
// Napkin: CIFAR's 32x32x32 layer moves 13 MB each way, ~7 us at ~4 TB/s. Blocks of one tile
// (4 KB, four 4-byte loads a thread) took 29 us there (ncu, H200): too few bytes in flight an
// SM to cover the memory's latency; each thread now has four 16-byte loads out at once: 13.4 us.
// With column_sums, each warp also adds up the 128 pixels of the channels it writes (in a
// fixed order: the same bits every run) into column_sums[block][channel], the bias gradient's
// partials: a conv layer without activation then reads dy once for dw and db, not twice.
// With an activation (ACT), the copy is of dz = act'(y) dy, y read beside dy, and dz is also
// written where it was read (when dz is given), for the data pass: one pass over dy and y
// where a column pass (reading both, writing dz) and the copy (reading dz) were two. The MNIST
// CNN's 26x26x32 -> 64 layer: 57 MB + 38 MB of traffic become 75 MB, and a launch goes.
constexpr int COPY_TILES = DY_COPY_TILES;
constexpr int COPY_THREADS = 256;
// A group's 4 channels at q, the first `left` of them inside the tensor (zeros past them): one
// 16-byte access where `vec` (every pixel's channels 16-byte aligned), else one at a time.
__device__ __forceinline__ float4 load4(const float* q, bool vec, int left) {
  return vec ? gemm::load_row4<true>(q, left) : gemm::load_row4<false>(q, left);
}
__device__ __forceinline__ void store4(float* q, float4 v, bool vec, int left) {
  if (vec && left >= 4) {
    *reinterpret_cast<float4*>(q) = v;
    return;
  }
  if (left > 0) q[0] = v.x;
  if (left > 1) q[1] = v.y;
  if (left > 2) q[2] = v.z;
  if (left > 3) q[3] = v.w;
}
template <Activation ACT>
__global__ void __launch_bounds__(COPY_THREADS)
    transpose_dy_kernel(const float* __restrict__ dy, const float* __restrict__ y, float* __restrict__ dz,
                        float* __restrict__ dyt, float* __restrict__ column_sums, const FilterLaunch p) {
  constexpr int PIXELS = COPY_TILES * TILE_PIXELS;
  constexpr int PIXELS_A_PASS = COPY_THREADS / (CHUNK / 4);  // 8 threads a pixel, 4 channels each
  __shared__ float s[PIXELS][CHUNK + 1];  // + 1: both the row stores and the column reads hit 32 banks
  const int t0 = static_cast<int>(blockIdx.x) * COPY_TILES, co0 = static_cast<int>(blockIdx.y) * CHUNK;
  const int tid = static_cast<int>(threadIdx.x), c = tid % (CHUNK / 4) * 4;
  const bool vec = p.out_c % 4 == 0;  // every pixel's channels start 16-byte aligned (dy is)
  float4 v[PIXELS / PIXELS_A_PASS];
#pragma unroll
  for (int i = 0; i < PIXELS / PIXELS_A_PASS; ++i) {
    const int j = tid / (CHUNK / 4) + i * PIXELS_A_PASS, t = t0 + j / TILE_PIXELS, in_tile = j % TILE_PIXELS;
    const TileCorner corner = corner_of(p, t);
    const int n = corner.n + in_tile / (p.tile.w * p.tile.h), oh = corner.oh + in_tile / p.tile.w % p.tile.h,
              ow = corner.ow + in_tile % p.tile.w;
    const bool inside = t < p.tile.count && n < p.batch && oh < p.out_h && ow < p.out_w;
    const int64_t at = ((int64_t{n} * p.out_h + oh) * p.out_w + ow) * p.out_c + co0 + c;
    const int left = inside ? p.out_c - co0 - c : 0;  // channels of this group inside dy
    v[i] = load4(dy + at, vec, left);
    if constexpr (ACT != Activation::None) {
      const float4 o = load4(y + at, vec, left);
      v[i] = make_float4(derivative_from_output<ACT>(o.x) * v[i].x, derivative_from_output<ACT>(o.y) * v[i].y,
                         derivative_from_output<ACT>(o.z) * v[i].z, derivative_from_output<ACT>(o.w) * v[i].w);
      if (dz) store4(dz + at, v[i], vec, left);
    }
  }
#pragma unroll
  for (int i = 0; i < PIXELS / PIXELS_A_PASS; ++i) {
    float* row = s[tid / (CHUNK / 4) + i * PIXELS_A_PASS] + c;
    row[0] = v[i].x;
    row[1] = v[i].y;
    row[2] = v[i].z;
    row[3] = v[i].w;
  }
  __syncthreads();
  const int64_t ld = p.tile.count * TILE_PIXELS;
  const int pixels = min(PIXELS, static_cast<int>(ld - int64_t{t0} * TILE_PIXELS));
  for (int k = tid / 32; k < CHUNK && co0 + k < p.out_c; k += COPY_THREADS / 32) {
    float sum = 0.0f;
    for (int j = tid % 32; j < pixels; j += 32) {
      dyt[(co0 + k) * ld + int64_t{t0} * TILE_PIXELS + j] = s[j][k];
      sum += s[j][k];
    }
    if (column_sums == nullptr) continue;  // uniform across the block
#pragma unroll
    for (int lanes = 16; lanes > 0; lanes /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, lanes);
    if (tid % 32 == 0) column_sums[int64_t{blockIdx.x} * p.out_c + co0 + k] = sum;
  }
}

// Element (pixel p, channel c) of a 32 x 32 box in TMA's 128-byte swizzle: pixel p's row of
// 128 bytes, its 16-byte pieces permuted by XOR with p mod 8 (the box starts 1 KB-aligned).
__device__ __forceinline__ float box_at(const unsigned char* box, int p, int c) {
  return *reinterpret_cast<const float*>(box + p * ROW_BYTES + (((c >> 2) ^ (p & 7)) << 4) + (c & 3) * 4);
}

template <int BN>
__global__ void __launch_bounds__(CONSUMER_THREADS + PRODUCER_THREADS)
    filter_gradient_kernel(const __grid_constant__ CUtensorMap x_map, const __grid_constant__ CUtensorMap dyt_map,
                           const FilterLaunch p) {
  constexpr int CONSUMER_WARPS = CONSUMER_THREADS / 32;
  constexpr int ACC = BN / 2;
  constexpr int A_BYTES = BM * ROW_BYTES, B_BYTES = BN * ROW_BYTES;
  static_assert(A_BYTES % SWIZZLE_ALIGN == 0 && B_BYTES % SWIZZLE_ALIGN == 0 && BOX_BYTES % SWIZZLE_ALIGN == 0,
                "every box starts on a swizzle period");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  const uint32_t base = (raw + SWIZZLE_ALIGN - 1) & ~uint32_t{SWIZZLE_ALIGN - 1};
  const unsigned char* const smem = smem_raw + (base - raw);  // base, for the fragment loads
  // x box j of stage s, as an offset from base (TMA takes base + it, the fragment loads smem + it).
  auto x_box = [&](int s, int j) { return static_cast<uint32_t>(s * A_BYTES + j * BOX_BYTES); };
  auto b_stage = [&](int s) { return base + static_cast<uint32_t>(STAGES * A_BYTES + s * B_BYTES); };
  const hopper::StageBarriers<STAGES> bars{base + static_cast<uint32_t>(STAGES * (A_BYTES + B_BYTES))};
  auto full = [&](int s) { return bars.full(s); };
  auto empty = [&](int s) { return bars.empty(s); };

  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const int m0 = static_cast<int>(blockIdx.x) * BM, co0 = static_cast<int>(blockIdx.y) * BN;
  const int first = static_cast<int>(blockIdx.z) * p.slice_tiles;
  const int k_tiles = min(p.slice_tiles, static_cast<int>(p.tile.count) - first);

  bars.init(CONSUMER_WARPS);

  if (warp == CONSUMER_WARPS) {
    // The producer: the tile's rows are 32-row chunks, each a tap's 32 channels; the last
    // tile of dw may have fewer (those rows of D are computed from stale shared memory and
    // never stored).
    if (lane == 0) {
      gemm::prefetch_tensor_map(&x_map);
      gemm::prefetch_tensor_map(&dyt_map);
      const int chunk0 = m0 / CHUNK, per_tap = p.in_c / CHUNK;
      const int chunks = min(BM / CHUNK, p.rows / CHUNK - chunk0);
      for (int t = 0; t < k_tiles; ++t) {
        const int s = t % STAGES;
        if (t >= STAGES) gemm::mbarrier_wait(empty(s), static_cast<uint32_t>(t / STAGES - 1) & 1);
        const TileCorner c = corner_of(p, first + t);
        gemm::mbarrier_arrive_expect_tx(full(s), chunks * BOX_BYTES + B_BYTES);
        for (int j = 0; j < chunks; ++j) {
          const int tap = (chunk0 + j) / per_tap, ci = (chunk0 + j) % per_tap * CHUNK;
          gemm::tma_load_4d(base + x_box(s, j), &x_map, ci, c.ow - p.pad_w + tap % p.kernel_w,
                            c.oh - p.pad_h + tap / p.kernel_w, c.n, full(s));
        }
        gemm::tma_load(b_stage(s), &dyt_map, (first + t) * TILE_PIXELS, co0, full(s));
      }
    }
    return;
  }

  // A consumer warp: tile rows 16 warp .. + 15, i.e. channels 16 (warp % 2) .. + 15 of x box
  // warp / 2. wgmma's A fragment (v10's load_fragment): lane (g, t) holds rows g and g + 8 at
  // k t and t + 4 of each 8-pixel k step.
  const int my_box = warp / 2, row = warp % 2 * 16 + lane / 4, k_lane = lane % 4;
  float acc[ACC];  // written first by the first wgmma (scale-d false)
  uint32_t a[K_STEPS][4];
  for (int t = 0; t < k_tiles; ++t) {
    const int s = t % STAGES;
    gemm::mbarrier_wait(full(s), static_cast<uint32_t>(t / STAGES) & 1);
    const unsigned char* const box = smem + x_box(s, my_box);
    const uint64_t desc_b = gemm::sw128_descriptor(b_stage(s));
#pragma unroll
    for (int kk = 0; kk < K_STEPS; ++kk) {
      // k step kk of tile t - 1 read a[kk]: K_STEPS - 1 groups were committed after it.
      gemm::wgmma_wait<K_STEPS - 1>();
      const int k = 8 * kk + k_lane;
      a[kk][0] = gemm::to_tf32(box_at(box, k, row));
      a[kk][1] = gemm::to_tf32(box_at(box, k, row + 8));
      a[kk][2] = gemm::to_tf32(box_at(box, k + 4, row));
      a[kk][3] = gemm::to_tf32(box_at(box, k + 4, row + 8));
      gemm::wgmma_fence();  // the fragment's registers were just written
      gemm::wgmma_m64nNk8_rs<BN>(acc, a[kk], desc_b + kk * DESC_PER_KSTEP, t > 0 || kk > 0);
      gemm::wgmma_commit();
    }
    // The last wait above retired the last of tile t - 1's groups: its stage goes back to the
    // producer. Lane 0 of each warp, predicated rather than a branch, which makes ptxas
    // serialize the wgmmas (C7513).
    gemm::mbarrier_arrive_local_if(empty((t + STAGES - 1) % STAGES), t > 0 && lane == 0);
  }
  gemm::wgmma_wait<0>();
  gemm::fence_accumulators(acc);

  // Epilogue: pairs of adjacent columns of two rows a thread (acc_row, acc_col).
  float* const out = p.out + int64_t{blockIdx.z} * p.rows * p.out_c;
  const bool pairs = p.out_c % 2 == 0;  // then (row offset + column) is even: 8-byte stores
#pragma unroll
  for (int i = 0; i < ACC; i += 2) {
    const int m = m0 + gemm::acc_row(tid, i), co = co0 + gemm::acc_col(tid, i);
    if (m >= p.rows || co >= p.out_c) continue;
    float* to = out + int64_t{m} * p.out_c + co;
    if (pairs) {
      *reinterpret_cast<float2*>(to) = make_float2(acc[i], acc[i + 1]);
    } else {
      to[0] = acc[i];
      if (co + 1 < p.out_c) to[1] = acc[i + 1];
    }
  }
}

template <int BN>
void launch_tiles(const CUtensorMap& x_map, const CUtensorMap& dyt_map, const FilterLaunch& p, int slices,
                  cudaStream_t stream) {
  constexpr int SMEM = hopper::smem_bytes(BM, BN, STAGES);
  static const bool configured = [] {
    CHECK_CUDA(cudaFuncSetAttribute(filter_gradient_kernel<BN>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    SMEM));
    return true;
  }();
  (void)configured;
  const dim3 grid(static_cast<unsigned>((p.rows + BM - 1) / BM), static_cast<unsigned>((p.out_c + BN - 1) / BN),
                  static_cast<unsigned>(slices));
  filter_gradient_kernel<BN><<<grid, CONSUMER_THREADS + PRODUCER_THREADS, SMEM, stream>>>(x_map, dyt_map, p);
  CHECK_LAUNCH_NAMED("filter_gradient_kernel");
}

}  // namespace

void hopper_backward_filter(const Conv2dGeometry& g, const HopperFilterPlan& plan, const float* x, const float* dy,
                            float* dw, float* db, float* workspace, cudaStream_t stream,
                            const FilterActivation& activation) {
  ENGINE_CHECK(plan.bn == 32 || plan.bn == 64 || plan.bn == 128, "conv2d on Hopper: no filter-gradient kernel for ",
               plan.bn, " columns");
  FilterLaunch p{};
  p.batch = to_int(g.batch, "the batch");
  p.out_h = to_int(g.out_h, "out_h");
  p.out_w = to_int(g.out_w, "out_w");
  p.out_c = to_int(g.out_c, "out_c");
  p.in_c = to_int(g.in_c, "in_c");
  p.kernel_w = to_int(g.kernel_w, "kernel_w");
  p.pad_h = to_int(g.pad_top, "pad_top");
  p.pad_w = to_int(g.pad_left, "pad_left");
  p.rows = to_int(g.kernel_h * g.kernel_w * g.in_c, "the filter rows");
  p.tile = plan.pixels;
  p.slice_tiles = plan.slice_tiles;
  ENGINE_CHECK(p.in_c % CHUNK == 0, "conv2d on Hopper: the filter gradient gathers 32 channels at a time, not ",
               p.in_c);
  if (int64_t{p.rows} * p.out_c == 0) return;
  if (plan.pixels.count == 0) {  // an empty batch: dw and db are sums of nothing
    CHECK_CUDA(cudaMemsetAsync(dw, 0, sizeof(float) * p.rows * p.out_c, stream));
    if (db) CHECK_CUDA(cudaMemsetAsync(db, 0, sizeof(float) * p.out_c, stream));
    return;
  }
  // The workspace: dyT, the slices' partial dw (if split), the copy blocks' column sums.
  const int64_t k = plan.pixels.count * TILE_PIXELS;
  const int64_t partial_floats = plan.slices > 1 ? int64_t{plan.slices} * p.rows * p.out_c : 0;
  float* const dyt = workspace;
  p.out = plan.slices > 1 ? workspace + g.out_c * k : dw;
  float* const column_sums = db ? workspace + g.out_c * k + partial_floats : nullptr;

  const int copy_blocks = to_int(plan.copy_blocks(), "the dy copy's blocks");
  const dim3 copy_grid(static_cast<unsigned>(copy_blocks), static_cast<unsigned>((p.out_c + CHUNK - 1) / CHUNK));
  const float* const y = activation.y;
  float* const dz = activation.dz;
  with_activation(activation.act, "conv2d's filter gradient on Hopper", [&](auto act) {
    transpose_dy_kernel<decltype(act)::value><<<copy_grid, COPY_THREADS, 0, stream>>>(dy, y, dz, dyt, column_sums, p);
  });
  CHECK_LAUNCH_NAMED("transpose_dy_kernel");
  // db = the copy blocks' column sums, in order: in the launch that adds dw's slices where
  // there is one, else alone.
  const gemm::PartialSums bias_sums =
      db ? gemm::PartialSums{column_sums, copy_blocks, 1, p.out_c, db, p.out_c} : gemm::PartialSums{};
  if (plan.slices == 1) gemm::add_partials(bias_sums, {}, stream);

  const CUtensorMap x_map =
      hopper::activations_map(x, p.in_c, to_int(g.in_w, "in_w"), to_int(g.in_h, "in_h"), p.batch, plan.pixels);
  const CUtensorMap dyt_map = gemm::swizzled_tensor_map<2>(
      dyt, {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(p.out_c)}, {static_cast<cuuint64_t>(k) * 4},
      {TILE_PIXELS, static_cast<cuuint32_t>(plan.bn)}, "conv2d on Hopper: the copy of dy's map");
  if (plan.bn == 32) launch_tiles<32>(x_map, dyt_map, p, plan.slices, stream);
  else if (plan.bn == 64) launch_tiles<64>(x_map, dyt_map, p, plan.slices, stream);
  else launch_tiles<128>(x_map, dyt_map, p, plan.slices, stream);
  if (plan.slices > 1)  // in order
    gemm::add_partials({p.out, plan.slices, p.rows, p.out_c, dw, p.out_c}, bias_sums, stream);
}

}  // namespace engine::cuda::conv
