// The convolutions on Hopper: TMA gathers the activations tap by tap, wgmma multiplies (TF32).
//
// Why a kernel of its own. The implicit GEMMs (implicit_gemm.cuh) feed mma.sync from shared
// memory that every thread fills with cp.async, computing each element's (image, row, column)
// and whether it lies in the padding; in TF32 their deep layers ran at 20-38% of cuDNN's
// (docs/results/cnn.md, the layer table). Hopper can do both jobs in hardware:
//   - the gather: for a stride-1 convolution, the patch rows of output pixels (n, oh, ow) at
//     tap (r, s) are the activations at (n, oh - pad_h + r, ow - pad_w + s): for a block of
//     pixels that is a rectangle of the activation tensor, one TMA box of a 4-D tensor map
//     (channels, width, height, batch), shifted by the tap. TMA fills what lies outside the
//     tensor (the padding, the edges of the last tiles) with zeros, so the main loop has no
//     addresses, predicates or index arithmetic at all;
//   - the product: wgmma reads both operands from shared memory in the 128-byte swizzle TMA
//     writes, as the matmul ladder's v11 does (kernels/matmul/v11_tf32_tma.cu, whose
//     producer/consumer structure this follows, with narrower tiles).
//
// The passes as one kernel. out[n, oh, ow, :] = sum over taps (r, s) and channel chunks of
// src[n, oh - pad_h + r, ow - pad_w + s, chunk] @ filters[tap](chunk, :), where
//   forward:       src = x, pad = the convolution's, filters[tap] = w's (in_c, out_c) matrix
//                  of that tap transposed to (out_c, in_c) by the caller (tf32 wgmma reads
//                  shared-memory operands K-major only, so k = in_c must be contiguous);
//   backward-data: src = dy, pad = kernel - 1 - pad (a "full" correlation), the taps flipped
//                  (tap (r, s) uses w's (kh - 1 - r, kw - 1 - s)), and w's (in_c, out_c)
//                  matrix of that tap as stored: rows in_c, k = out_c contiguous. No copy.
// Stride 1 only: with a stride the rows of a tile are not a rectangle of src.
//
// Napkin math, CIFAR's 8x8x128 -> 128 forward at batch 100 (M = 6,400 pixels, N = 128, K =
// 9 x 128 = 1,152): 1.89 GFLOP, 3.8 us at the tensor cores' 494 TFLOP/s; x and y 3.3 MB
// each, w 0.6 MB: ~2.4 us of DRAM. From L2 a bm x bn tile reads (bm + bn) rows of 128 bytes
// per 32-deep k step for 2 bm bn 32 FLOP, i.e. bm bn / (2 (bm + bn)) FLOP a byte: 16 for
// 64 x 64, 32 for 128 x 128; at ~5.5 TB/s from L2 that would cap the kernel at ~90 or ~180
// TFLOP/s, while 128 x 128 tiles leave 82 of 132 SMs idle (50 blocks). choose_hopper_tiles
// takes the largest tile that still gives every SM a block. Shared memory: 4 stages of
// (bm + bn) x 128 bytes: 48 KB (64 x 32) to 128 KB (128 x 128) a block.
// Measured (H200, 2026-11-29; docs/results/cnn.md): 16.8 us with 64 x 64 tiles, 112 TFLOP/s;
// cuDNN 11.1 us. L2 does not bound it: ncu shows L2 at 34% of its throughput, and neither
// halving the L2 reads (2 x 2 clusters that load each shared box once, by TMA multicast:
// 17.9 us) nor doubling the bytes in flight (8 stages: 16.8 us at 64 x 128 tiles, slower
// where they cost blocks an SM) made it faster. What does is still open.
//
// Block: bm / 64 consumer warpgroups (64 rows of the tile each, bn / 2 accumulators a thread)
// and one producer warp, whose lane 0 issues two TMA copies per stage (the activations' box,
// the tap's filter rows) and waits on "empty" mbarriers; consumers wait on "full" ones, as in
// v11. The output tile's pixels are tile_n images x tile_h rows x tile_w columns (powers of
// two, their product bm), chosen on the host to waste the fewest rows at the image's edges.
//
// Precision: wgmma truncates both FP32 operands to TF32 (v11's header): a product errs by
// less than 2^-9, the TF32 bound of tests/test_gpu_conv.cpp.
#include "kernels/conv/tma_wgmma.h"

#include <cstdint>
#include <type_traits>  // integral_constant: a tile size as a type

#include "core/error.h"
#include "kernels/activation_math.cuh"
#include "kernels/conv/tma_wgmma_pipeline.cuh"
#include "kernels/cuda_check.h"
#include "kernels/matmul/tma.h"
#include "kernels/matmul/wgmma.h"

// kernels/CMakeLists.txt compiles this file for sm_90a alone, and only where the build has
// code for compute capability 9.0.
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "tma_wgmma.cu is built for sm_90a only"
#endif

namespace engine::cuda::conv {
namespace {

using gemm::DESC_PER_KSTEP;
using gemm::SWIZZLE_ALIGN;

using hopper::PRODUCER_THREADS;
using hopper::ROW_BYTES;
using hopper::STAGES;
constexpr int BK = hopper::BOX_CHANNELS;  // gathered channels per stage

// What a launch needs besides its tensor maps. The output is an NHWC image tensor (batch,
// out_h, out_w, out_c): y forward, dx backward (in its terms, x's sizes and in_c).
struct Launch {
  int batch, out_h, out_w, out_c;
  int pad_h, pad_w;               // src row of output pixel (oh, ow) at tap (r, s): oh - pad_h + r
  int kernel_h, kernel_w, chunks;  // chunks: the gathered channels / 32
  int flip;                        // 1: tap (r, s) multiplies the filters of tap (kh-1-r, kw-1-s)
  int tile_w, tile_h, tile_n;      // a block's pixels: tile_n images x tile_h rows x tile_w columns
  int tiles_w, tiles_h;            // tiles across and down one image
  const float* bias;               // forward: (out_c,), added before `act`; backward: null
  Activation act;
};

// What is stored for the product v at column col: the layer's bias and activation applied as
// y is written, rather than in a pass over y of their own (26 MB read and written at CIFAR's
// first layers, ~9 us, and a launch).
__device__ __forceinline__ float finish(const Launch& p, int col, float v) {
  return p.bias ? activate(p.act, v + p.bias[col]) : v;
}

template <int BM, int BN>
__global__ void __launch_bounds__(2 * BM + PRODUCER_THREADS)
    conv_tma_wgmma_kernel(const __grid_constant__ CUtensorMap src_map,
                          const __grid_constant__ CUtensorMap filter_map, float* __restrict__ out,
                          const Launch p) {
  constexpr int CONSUMER_WARPS = BM / 16;  // BM / 64 warpgroups of 4 warps
  constexpr int ACC = BN / 2;
  constexpr int A_BYTES = BM * ROW_BYTES, B_BYTES = BN * ROW_BYTES;
  static_assert(A_BYTES % SWIZZLE_ALIGN == 0 && B_BYTES % SWIZZLE_ALIGN == 0,
                "every stage starts on a swizzle period");
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const uint32_t base =
      (static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw)) + SWIZZLE_ALIGN - 1) &
      ~uint32_t{SWIZZLE_ALIGN - 1};
  auto a_stage = [&](int s) { return base + static_cast<uint32_t>(s * A_BYTES); };
  auto b_stage = [&](int s) { return base + static_cast<uint32_t>(STAGES * A_BYTES + s * B_BYTES); };
  const hopper::StageBarriers<STAGES> bars{base + static_cast<uint32_t>(STAGES * (A_BYTES + B_BYTES))};
  auto full = [&](int s) { return bars.full(s); };
  auto empty = [&](int s) { return bars.empty(s); };

  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  // This block's pixels (blockIdx.x: a tile of tile_n images x tile_h x tile_w) and columns.
  const int tile = static_cast<int>(blockIdx.x);
  const int ow0 = tile % p.tiles_w * p.tile_w;
  const int oh0 = tile / p.tiles_w % p.tiles_h * p.tile_h;
  const int n0 = tile / (p.tiles_w * p.tiles_h) * p.tile_n;
  const int c0 = static_cast<int>(blockIdx.y) * BN;
  const int taps = p.kernel_h * p.kernel_w;
  const int k_tiles = taps * p.chunks;

  bars.init(CONSUMER_WARPS);

  if (warp == CONSUMER_WARPS) {
    // The producer: k tile t is tap t / chunks, channels 32 (t % chunks) onwards.
    if (lane == 0) {
      gemm::prefetch_tensor_map(&src_map);
      gemm::prefetch_tensor_map(&filter_map);
      for (int t = 0; t < k_tiles; ++t) {
        const int s = t % STAGES;
        if (t >= STAGES) gemm::mbarrier_wait(empty(s), static_cast<uint32_t>(t / STAGES - 1) & 1);
        const int tap = t / p.chunks, k = t % p.chunks * BK;
        const int r = tap / p.kernel_w, c = tap % p.kernel_w;
        // Both boxes count in full, zeros outside the tensors included.
        gemm::mbarrier_arrive_expect_tx(full(s), A_BYTES + B_BYTES);
        gemm::tma_load_4d(a_stage(s), &src_map, k, ow0 - p.pad_w + c, oh0 - p.pad_h + r, n0, full(s));
        gemm::tma_load_3d(b_stage(s), &filter_map, k, c0, p.flip ? taps - 1 - tap : tap, full(s));
      }
    }
    return;
  }

  // A consumer warpgroup: rows 64 (warp / 4) .. + 63 of the tile, all BN columns.
  float acc[ACC];  // written first by the first wgmma (scale-d false)
  const uint32_t a_rows = static_cast<uint32_t>(warp / 4 * 64 * ROW_BYTES);
  for (int t = 0; t < k_tiles; ++t) {
    const int s = t % STAGES;
    gemm::mbarrier_wait(full(s), static_cast<uint32_t>(t / STAGES) & 1);
    gemm::wgmma_fence();
    const uint64_t desc_a = gemm::sw128_descriptor(a_stage(s) + a_rows);
    const uint64_t desc_b = gemm::sw128_descriptor(b_stage(s));
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk)
      gemm::wgmma_m64nNk8_ss<BN>(acc, desc_a + kk * DESC_PER_KSTEP, desc_b + kk * DESC_PER_KSTEP,
                                 t > 0 || kk > 0);
    gemm::wgmma_commit();
    // Tile t - 1's wgmmas done: its stage goes back to the producer.
    if (t > 0) {
      gemm::wgmma_wait<1>();
      if (lane == 0) gemm::mbarrier_arrive_local(empty((t - 1) % STAGES));
      __syncwarp();
    }
  }
  gemm::wgmma_wait<0>();
  gemm::fence_accumulators(acc);

  // Epilogue: a thread's accumulators lie in two rows of the tile (acc_row's h = 0, 1), pairs
  // of adjacent columns. Rows are pixels; those past the image or the batch are not stored.
  const int tile_pixels = p.tile_w * p.tile_h;
  int64_t row_offset[2];
  for (int h = 0; h < 2; ++h) {
    const int m = gemm::acc_row(tid, 2 * h);
    const int n = n0 + m / tile_pixels, oh = oh0 + m / p.tile_w % p.tile_h, ow = ow0 + m % p.tile_w;
    row_offset[h] = n < p.batch && oh < p.out_h && ow < p.out_w
                        ? ((int64_t{n} * p.out_h + oh) * p.out_w + ow) * p.out_c
                        : -1;
  }
  const bool pairs = p.out_c % 2 == 0;  // then (offset + column) is even: 8-byte stores
#pragma unroll
  for (int i = 0; i < ACC; i += 2) {
    const int64_t offset = row_offset[i / 2 % 2];
    const int col = c0 + gemm::acc_col(tid, i);
    if (offset < 0 || col >= p.out_c) continue;
    float* to = out + offset + col;
    if (pairs) {
      *reinterpret_cast<float2*>(to) = make_float2(finish(p, col, acc[i]), finish(p, col + 1, acc[i + 1]));
    } else {
      to[0] = finish(p, col, acc[i]);
      if (col + 1 < p.out_c) to[1] = finish(p, col + 1, acc[i + 1]);
    }
  }
}

template <int BM, int BN>
void launch_tiles(const CUtensorMap& src, const CUtensorMap& filters, float* out, const Launch& p,
                  int64_t blocks, cudaStream_t stream) {
  constexpr int SMEM = hopper::smem_bytes(BM, BN);
  static const bool configured = [] {
    CHECK_CUDA(cudaFuncSetAttribute(conv_tma_wgmma_kernel<BM, BN>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    return true;
  }();
  (void)configured;
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>((p.out_c + BN - 1) / BN));
  conv_tma_wgmma_kernel<BM, BN><<<grid, 2 * BM + PRODUCER_THREADS, SMEM, stream>>>(src, filters, out, p);
  CHECK_LAUNCH_NAMED("conv_tma_wgmma_kernel");
}

void check_tiles(const HopperTiles& t) {
  ENGINE_CHECK((t.bm == 64 || t.bm == 128) && (t.bn == 32 || t.bn == 64 || t.bn == 128),
               "conv2d on Hopper: no kernel for tiles of ", t.bm, " x ", t.bn);
}

// One pass: src (batch, src_h, src_w, chunks * 32) gathered, filters (taps, out_c rows, chunks
// * 32 k) as stored, out (batch, out_h, out_w, out_c).
void run(const HopperTiles& t, Launch p, int src_h, int src_w, const float* src, const float* filters,
         float* out, cudaStream_t stream) {
  const int64_t outputs = int64_t{p.batch} * p.out_h * p.out_w * p.out_c;
  if (outputs == 0) return;
  const int channels = p.chunks * BK;
  const auto c = static_cast<cuuint64_t>(channels);
  const PixelTile tile = choose_pixel_tile(t.bm, p.batch, p.out_h, p.out_w);
  p.tile_w = tile.w;
  p.tile_h = tile.h;
  p.tile_n = tile.n;
  p.tiles_w = static_cast<int>(tile.across);
  p.tiles_h = static_cast<int>(tile.down);
  const int64_t blocks = tile.count;
  ENGINE_CHECK(blocks <= 0x7fffffff && (p.out_c + t.bn - 1) / t.bn <= 65535,
               "conv2d on Hopper: ", blocks, " pixel tiles do not fit a grid");
  const CUtensorMap src_map = hopper::activations_map(src, channels, src_w, src_h, p.batch, tile);
  const int taps = p.kernel_h * p.kernel_w;
  const CUtensorMap filter_map = gemm::swizzled_tensor_map<3>(
      filters, {c, static_cast<cuuint64_t>(p.out_c), static_cast<cuuint64_t>(taps)},
      {c * 4, c * 4 * p.out_c}, {BK, static_cast<cuuint32_t>(t.bn), 1}, "conv2d on Hopper: the filters' map");
  const auto go = [&](auto bm, auto bn) {
    launch_tiles<decltype(bm)::value, decltype(bn)::value>(src_map, filter_map, out, p, blocks, stream);
  };
  using I64 = std::integral_constant<int, 64>;
  using I128 = std::integral_constant<int, 128>;
  using I32 = std::integral_constant<int, 32>;
  if (t.bm == 64) {
    if (t.bn == 32) go(I64{}, I32{});
    else if (t.bn == 64) go(I64{}, I64{});
    else go(I64{}, I128{});
  } else {
    if (t.bn == 32) go(I128{}, I32{});
    else if (t.bn == 64) go(I128{}, I64{});
    else go(I128{}, I128{});
  }
}

// A pass in the kernel's terms. Forward: y from x, the convolution's padding. Backward-data:
// dx (x's sizes, in_c channels) from dy (out_c channels gathered), padded by kernel - 1 - pad
// (a "full" correlation), the taps flipped.
Launch launch_of(Pass pass, const Conv2dGeometry& g) {
  const bool forward = pass == Pass::Forward;
  Launch p{};
  p.batch = to_int(g.batch, "the batch");
  p.out_h = to_int(forward ? g.out_h : g.in_h, "the output height");
  p.out_w = to_int(forward ? g.out_w : g.in_w, "the output width");
  p.out_c = to_int(forward ? g.out_c : g.in_c, "the output channels");
  p.pad_h = to_int(forward ? g.pad_top : g.kernel_h - 1 - g.pad_top, "the padding");
  p.pad_w = to_int(forward ? g.pad_left : g.kernel_w - 1 - g.pad_left, "the padding");
  p.kernel_h = to_int(g.kernel_h, "kernel_h");
  p.kernel_w = to_int(g.kernel_w, "kernel_w");
  p.chunks = to_int((forward ? g.in_c : g.out_c) / BK, "the gathered channel chunks");
  p.flip = forward ? 0 : 1;
  return p;
}

}  // namespace

CUtensorMap hopper::activations_map(const float* src, int channels, int width, int height, int batch,
                                    const PixelTile& tile) {
  const auto c = static_cast<cuuint64_t>(channels);
  return gemm::swizzled_tensor_map<4>(
      src, {c, static_cast<cuuint64_t>(width), static_cast<cuuint64_t>(height), static_cast<cuuint64_t>(batch)},
      {c * 4, c * 4 * width, c * 4 * width * height},
      {BOX_CHANNELS, static_cast<cuuint32_t>(tile.w), static_cast<cuuint32_t>(tile.h), static_cast<cuuint32_t>(tile.n)},
      "conv2d on Hopper: the gathered activations' map");
}

void hopper_forward(const Conv2dGeometry& g, const HopperTiles& t, const float* x, const float* filters_t,
                    const float* bias, Activation act, float* y, cudaStream_t stream) {
  check_tiles(t);
  ENGINE_CHECK(act == Activation::None || (bias && act != Activation::Softmax),
               "conv2d on Hopper: only an elementwise activation after a bias is fused");
  Launch p = launch_of(Pass::Forward, g);
  p.bias = bias;
  p.act = act;
  run(t, p, to_int(g.in_h, "in_h"), to_int(g.in_w, "in_w"), x, filters_t, y, stream);
}

void hopper_backward_data(const Conv2dGeometry& g, const HopperTiles& t, const float* dy, const float* w,
                          float* dx, cudaStream_t stream) {
  check_tiles(t);
  run(t, launch_of(Pass::BackwardData, g), to_int(g.out_h, "out_h"), to_int(g.out_w, "out_w"), dy, w, dx, stream);
}

}  // namespace engine::cuda::conv
