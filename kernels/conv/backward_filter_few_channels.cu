// The filter gradient of a first layer, 3x3 filters over 1 or 3 input channels:
//   dw[(kh, kw, c), n] = sum over pixels k = (image, oh, ow) of x[patch(k, kh, kw), c] * dy[k, n]
//
// As an implicit GEMM (backward_filter.cu) this is M = 27 rows (9 for gray images), N = out_c
// columns and a reduction of K = batch*oh*ow, 700,928 for Dogs vs Cats' first layer: the
// 128-row tiles are a fifth full, and with 3 channels every element of x is a scalar load with
// its own bounds check: --profile found it at 2% of the FP32 peak and a quarter of that app's
// device time (docs/results/dogs_vs_cats.md, "Where the step's time goes").
//
// Here the reduction is spread over threads instead: a thread owns CH = 2 output channels (one
// float2 of dy's row) and all 9*C taps, so 18*C accumulators in registers (54 for RGB). The
// out_c/2 threads of one pixel read its dy row together (coalesced) and the same 9*C values
// of x (one broadcast from L1, which the 9 overlapping windows of neighbouring pixels share).
// Each block walks a fixed run of pixels; at the end it adds its threads' accumulators in
// shared memory, tap by tap, and writes one partial dw to the workspace; split_k_reduce adds
// the blocks' partials in order: the same result every run.
//
// Napkin math, Dogs vs Cats' first layer (batch 32, 150x150x3, 32 filters), FP32 on an H100:
// 2 * 700,928 * 27 * 32 = 1.21 GFLOP, ~30 us at 40 TFLOP/s; dy is read once (90 MB, ~35 us at
// 2.6 TB/s), x (8.6 MB) mostly from L1/L2; the workspace (2 blocks per SM x 27 x 32 floats,
// 0.9 MB) is written and read once. So ~40-70 us, bound by reading dy: a small fraction of
// what the implicit GEMM took.
#include "kernels/conv/backward_filter_few_channels.h"
#include "core/error.h"
#include "kernels/activation_math.cuh"
#include "kernels/cuda_check.h"
#include "kernels/device_caps.h"
#include "kernels/matmul/gemm.h"
#include "kernels/matmul/mma_tf32.h"

#include <algorithm>

namespace engine::cuda::conv {
namespace {

constexpr int THREADS = 256;
// Output channels per thread. With 4 (a float4 of dy, 108 accumulators for RGB) a thread took
// 152 registers and one block of 256 fit an SM; forcing two blocks spilled, and both were slower
// than 2 (measured: docs/HISTORY.md, 2026-11-23). With 2, 54 accumulators
// fit two blocks per SM without spills.
constexpr int CH = 2;
constexpr int BLOCKS_PER_SM = 2;
constexpr int MIN_PIXELS_PER_THREAD = 8;  // below this a block is mostly start-up and reduction

struct Args {
  const float* x;
  const float* dy;
  float* partial;  // (blocks, 9*C, out_c)
  int batch, in_h, in_w, out_h, out_w, out_c;
  int stride_h, stride_w, pad_top, pad_left;
  int64_t pixels, pixels_per_block;
  const float* y = nullptr;         // the TF32 form with an activation: the layer's output
  float* bias_partial = nullptr;    // the TF32 form with the bias gradient: (blocks, out_c)
};

template <int C>
__global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM) few_channels_filter_kernel(Args p) {
  constexpr int TAPS = 9 * C;
  const int groups = p.out_c / CH;  // threads per pixel
  const int group = threadIdx.x % groups;
  const int slot = threadIdx.x / groups;
  const int slots = THREADS / groups;
  float acc[TAPS][CH];
#pragma unroll
  for (int t = 0; t < TAPS; ++t) acc[t][0] = acc[t][1] = 0.0f;

  const int64_t begin = blockIdx.x * p.pixels_per_block;
  const int64_t end = begin + p.pixels_per_block < p.pixels ? begin + p.pixels_per_block : p.pixels;
  // The pixel k = (n, oh, ow) is decoded once and then walked forward `slots` at a time: a
  // 64-bit division per pixel would cost as much as the pixel's 108 multiply-adds.
  int64_t k = begin + slot;
  int ow = static_cast<int>(k % p.out_w);
  int oh = static_cast<int>((k / p.out_w) % p.out_h);
  int64_t n = k / (int64_t{p.out_w} * p.out_h);
  for (; k < end; k += slots) {
    const float2 d = __ldg(reinterpret_cast<const float2*>(p.dy + k * p.out_c) + group);
#pragma unroll
    for (int kh = 0; kh < 3; ++kh) {
      const int ih = oh * p.stride_h + kh - p.pad_top;
#pragma unroll
      for (int kw = 0; kw < 3; ++kw) {
        const int iw = ow * p.stride_w + kw - p.pad_left;
        if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;  // zero padding
        const float* px = p.x + ((n * p.in_h + ih) * p.in_w + iw) * C;
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const float v = __ldg(px + c);
          float* a = acc[(kh * 3 + kw) * C + c];
          a[0] = fmaf(v, d.x, a[0]);
          a[1] = fmaf(v, d.y, a[1]);
        }
      }
    }
    for (ow += slots; ow >= p.out_w;) {  // next pixel of this thread: rows wrap, then images
      ow -= p.out_w;
      if (++oh == p.out_h) {
        oh = 0;
        ++n;
      }
    }
  }

  // The block's sum, tap by tap: every slot's CH values into shared memory, then out_c threads
  // add the slots' in order.
  __shared__ float sums[THREADS * CH];
  float* out = p.partial + int64_t{blockIdx.x} * TAPS * p.out_c;
#pragma unroll
  for (int t = 0; t < TAPS; ++t) {
    *reinterpret_cast<float2*>(sums + (slot * groups + group) * CH) = make_float2(acc[t][0], acc[t][1]);
    __syncthreads();  // every slot's values are in
    if (threadIdx.x < p.out_c) {
      float s = 0.0f;
      for (int i = 0; i < slots; ++i) s += sums[i * p.out_c + threadIdx.x];
      out[t * p.out_c + threadIdx.x] = s;
    }
    __syncthreads();  // read before the next tap overwrites
  }
}

// The TF32 form (--tf32, compute capability 8.0 on): the same sum as a GEMM on the tensor cores,
// dw (taps x out_c) = patches^T (taps x pixels) dy (pixels x out_c), through mma.sync m16n8k8
// (kernels/matmul/mma_tf32.h gives the fragments' layout). A warp takes 8 pixels a k step; each
// lane gathers its A fragment, x at 2 pixels and 2 taps a 16-row tile (MI tiles: 9 taps in one,
// RGB's 27 padded to 32 in two), from global memory (L1 serves the windows' overlaps), and its
// B fragment, dy at the same 2 pixels and one channel of each of the NI n8 tiles; then MI x NI
// mma. Napkin math per 8 pixels of RGB and 32 channels: ~90 instructions a warp (8 gathers
// with their bounds, 8 loads of dy, 16 roundings, 8 mma), where the FMA kernel above issues
// ~330 (16 threads a pixel, each 27 broadcast loads and 54 FMA). Dogs vs Cats' first layer:
// 700,928 pixels, 1.21 GFLOP; its dy, 90 MB read once, ~35 us at ~2.6 TB/s, would then be the
// bound (the FMA kernel: 200 us on an H100). Measured (H200, 2026-11-28): 87 us there (ncu, a
// cold cache; fused as below, reading y too: 99 us), and CIFAR's 32x32x3 -> 32 14.3 us against
// the FMA kernel's 28.3 (kernel_bench); what holds Dogs vs Cats' above its 35 us has not been
// profiled yet.
//
// At the end the block's 8 warps put their tiles in shared memory and out_c x taps threads add
// them in warp order; split_k_reduce then adds the blocks' partials in order, as above.
//
// Fused (a network's first layer, whose x needs no gradient): with ACT Relu the kernel reads y
// beside dy and multiplies in act'(y) as it loads B, so dz = act'(y) dy, which only dw and db
// need, is never written; with BIAS each lane also adds up its B values in FP32, before their
// rounding, into the bias gradient's partial column sums. Dogs vs Cats' first layer: instead of
// a column pass reading y and dy and writing dz (270 MB) and this kernel reading dz (90 MB),
// this kernel reads y and dy (180 MB).
constexpr int WARPS = THREADS / 32;
constexpr int TF32_MAX_OUT_C = 32;  // NI <= 4: 8 warps x 32 x 32 floats of shared memory, 32 KB

// The fused forms (BIAS) hold more registers: capped so that two blocks still fit an SM (RGB
// with Relu then spills 12 bytes; 142 registers, one block an SM, without the cap).
template <int C, int NI, Activation ACT, bool BIAS>
__global__ void __launch_bounds__(THREADS, BIAS ? BLOCKS_PER_SM : 1) few_channels_filter_tf32_kernel(Args p) {
  constexpr int TAPS = 9 * C;
  constexpr int MI = (TAPS + 15) / 16;
  constexpr int ROWS = 16 * MI, COLS = 8 * NI;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, t = lane % 4;  // mma's groupID, threadID

  // This lane's taps, rows 16 i + g + 8 h of A, decoded once: the window offset and channel,
  // or `used` false past the last tap (a zero row).
  struct Tap {
    int dh, dw, c;
    bool used;
  };
  Tap taps[MI][2];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int m = 16 * i + g + 8 * h;
      taps[i][h] = {m / (3 * C) - p.pad_top, m / C % 3 - p.pad_left, m % C, m < TAPS};
    }

  const int64_t begin = blockIdx.x * p.pixels_per_block;
  const int64_t end = begin + p.pixels_per_block < p.pixels ? begin + p.pixels_per_block : p.pixels;
  // The lane's two pixels of a k step, base + t and base + t + 4, decoded once and walked
  // forward 8 WARPS at a time (as the FMA kernel walks its pixels).
  struct Cursor {
    int64_t k, n;
    int oh, ow;
  };
  auto cursor = [&](int64_t k) {
    return Cursor{k, k / (int64_t{p.out_w} * p.out_h), static_cast<int>((k / p.out_w) % p.out_h),
                  static_cast<int>(k % p.out_w)};
  };
  auto advance = [&](Cursor& q) {
    q.k += 8 * WARPS;
    for (q.ow += 8 * WARPS; q.ow >= p.out_w;) {
      q.ow -= p.out_w;
      if (++q.oh == p.out_h) {
        q.oh = 0;
        ++q.n;
      }
    }
  };
  // x at pixel q's window, tap `tap`; zero in the padding, past the run or past the taps.
  auto x_at = [&](const Cursor& q, const Tap& tap) {
    const int ih = q.oh * p.stride_h + tap.dh, iw = q.ow * p.stride_w + tap.dw;
    const bool inside = tap.used && q.k < end && ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w;
    return inside ? __ldg(p.x + ((q.n * p.in_h + ih) * p.in_w + iw) * C + tap.c) : 0.0f;
  };
  // dz at pixel q, column col: dy, times act'(y) with an activation; zero past the run.
  auto dz_at = [&](const Cursor& q, int col) {
    if (q.k >= end) return 0.0f;
    const float d = __ldg(p.dy + q.k * p.out_c + col);
    if constexpr (ACT == Activation::None) {
      return d;
    } else {
      return derivative_from_output<ACT>(__ldg(p.y + q.k * p.out_c + col)) * d;
    }
  };

  float acc[MI][NI][4] = {};
  [[maybe_unused]] float column_sum[NI] = {};  // BIAS: this lane's dz at column 8 j + g
  Cursor q0 = cursor(begin + 8 * warp + t), q1 = cursor(begin + 8 * warp + t + 4);
  for (int64_t base = begin + 8 * warp; base < end; base += 8 * WARPS) {
    uint32_t a[MI][4], b[NI][2];
#pragma unroll
    for (int i = 0; i < MI; ++i) {
      a[i][0] = gemm::to_tf32(x_at(q0, taps[i][0]));
      a[i][1] = gemm::to_tf32(x_at(q0, taps[i][1]));
      a[i][2] = gemm::to_tf32(x_at(q1, taps[i][0]));
      a[i][3] = gemm::to_tf32(x_at(q1, taps[i][1]));
    }
#pragma unroll
    for (int j = 0; j < NI; ++j) {
      const float d0 = dz_at(q0, 8 * j + g), d1 = dz_at(q1, 8 * j + g);
      if constexpr (BIAS) column_sum[j] += d0 + d1;
      b[j][0] = gemm::to_tf32(d0);
      b[j][1] = gemm::to_tf32(d1);
    }
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) gemm::mma_tf32(acc[i][j], a[i], b[j]);
    advance(q0);
    advance(q1);
  }

  // The block's sum: each warp's tile into shared memory (d's layout in mma_tf32.h), then the
  // warps' tiles added in warp order.
  __shared__ float tiles[WARPS][ROWS][COLS];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) tiles[warp][16 * i + g + 8 * (e / 2)][8 * j + 2 * t + e % 2] = acc[i][j][e];
  __syncthreads();
  float* out = p.partial + int64_t{blockIdx.x} * TAPS * p.out_c;
  for (int e = static_cast<int>(threadIdx.x); e < TAPS * COLS; e += THREADS) {
    const int m = e / COLS, n = e % COLS;
    float s = 0.0f;
    for (int w = 0; w < WARPS; ++w) s += tiles[w][m][n];
    out[m * p.out_c + n] = s;
  }
  if constexpr (BIAS) {
    // The column sums: the 4 lanes of a group (t) hold the same columns, then the warps in
    // order, as the tiles.
    __shared__ float sums[WARPS][COLS];
#pragma unroll
    for (int j = 0; j < NI; ++j) {
      float v = column_sum[j];
      v += __shfl_xor_sync(0xffffffffu, v, 1);
      v += __shfl_xor_sync(0xffffffffu, v, 2);
      if (t == 0) sums[warp][8 * j + g] = v;
    }
    __syncthreads();
    for (int n = static_cast<int>(threadIdx.x); n < COLS; n += THREADS) {
      float s = 0.0f;
      for (int w = 0; w < WARPS; ++w) s += sums[w][n];
      p.bias_partial[int64_t{blockIdx.x} * p.out_c + n] = s;
    }
  }
}

template <int C, Activation ACT, bool BIAS>
void launch_tf32(const Args& p, unsigned blocks, cudaStream_t stream) {
  switch (p.out_c / 8) {
    case 1: few_channels_filter_tf32_kernel<C, 1, ACT, BIAS><<<blocks, THREADS, 0, stream>>>(p); break;
    case 2: few_channels_filter_tf32_kernel<C, 2, ACT, BIAS><<<blocks, THREADS, 0, stream>>>(p); break;
    default: few_channels_filter_tf32_kernel<C, 4, ACT, BIAS><<<blocks, THREADS, 0, stream>>>(p); break;
  }
}

template <Activation ACT, bool BIAS>
void launch_tf32(const Conv2dGeometry& g, const Args& p, unsigned blocks, cudaStream_t stream) {
  if (g.in_c == 1) launch_tf32<1, ACT, BIAS>(p, blocks, stream);
  else launch_tf32<3, ACT, BIAS>(p, blocks, stream);
}

int64_t blocks_for(const Conv2dGeometry& g, int multiprocessors) {
  const int64_t pixels = g.batch * g.out_h * g.out_w;
  const int64_t slots = THREADS / (g.out_c / CH);
  const int64_t by_work = (pixels + slots * MIN_PIXELS_PER_THREAD - 1) / (slots * MIN_PIXELS_PER_THREAD);
  return std::max<int64_t>(1, std::min<int64_t>(by_work, int64_t{BLOCKS_PER_SM} * multiprocessors));
}

}  // namespace

bool few_channels_filter_fits(const Conv2dGeometry& g, const float* dy) {
  const bool power_of_two = g.out_c >= 4 && g.out_c <= 128 && (g.out_c & (g.out_c - 1)) == 0;
  return g.kernel_h == 3 && g.kernel_w == 3 && (g.in_c == 1 || g.in_c == 3) && power_of_two &&
         g.batch * g.out_h * g.out_w > 0 && reinterpret_cast<uintptr_t>(dy) % (CH * sizeof(float)) == 0;
}

bool few_channels_filter_tf32_fits(const Conv2dGeometry& g) {
  return device_caps().kernels.tf32_mma && g.out_c % 8 == 0 && g.out_c <= TF32_MAX_OUT_C;
}

bool few_channels_fused_fits(const Conv2dGeometry& g, Activation act) {
  return few_channels_filter_tf32_fits(g) && (act == Activation::None || act == Activation::Relu);
}

int64_t few_channels_workspace_floats(const Conv2dGeometry& g, int multiprocessors) {
  return blocks_for(g, multiprocessors) * (9 * g.in_c + 1) * g.out_c;
}

namespace {

// The kernels' arguments, and the blocks' split of the pixels.
Args args_for(const Conv2dGeometry& g, const float* x, const float* dy, float* workspace, int64_t blocks) {
  Args p{x, dy, workspace,
         static_cast<int>(g.batch), static_cast<int>(g.in_h), static_cast<int>(g.in_w),
         static_cast<int>(g.out_h), static_cast<int>(g.out_w), static_cast<int>(g.out_c),
         static_cast<int>(g.stride_h), static_cast<int>(g.stride_w),
         static_cast<int>(g.pad_top), static_cast<int>(g.pad_left),
         g.batch * g.out_h * g.out_w, 0};
  p.pixels_per_block = (p.pixels + blocks - 1) / blocks;
  return p;
}

// dw (9 in_c x out_c) = the blocks' partial dw added in order.
gemm::PartialSums block_partials(const Conv2dGeometry& g, const float* workspace, int64_t blocks, float* dw) {
  const auto rows = static_cast<int>(9 * g.in_c), cols = static_cast<int>(g.out_c);
  return {workspace, static_cast<int>(blocks), rows, cols, dw, cols};
}

}  // namespace

void few_channels_backward_filter(const Conv2dGeometry& g, const float* x, const float* dy,
                                  float* dw, float* workspace, int multiprocessors, bool tf32,
                                  cudaStream_t stream) {
  const int64_t blocks = blocks_for(g, multiprocessors);
  const Args p = args_for(g, x, dy, workspace, blocks);
  const auto grid = static_cast<unsigned>(blocks);
  if (tf32 && few_channels_filter_tf32_fits(g)) {
    launch_tf32<Activation::None, false>(g, p, grid, stream);
  } else if (g.in_c == 1) {
    few_channels_filter_kernel<1><<<grid, THREADS, 0, stream>>>(p);
  } else {
    few_channels_filter_kernel<3><<<grid, THREADS, 0, stream>>>(p);
  }
  CHECK_LAUNCH();
  gemm::add_partials(block_partials(g, workspace, blocks, dw), {}, stream);
}

void few_channels_fused_backward_filter(const Conv2dGeometry& g, Activation act, const float* y, const float* x,
                                        const float* dy, float* dw, float* db, float* workspace,
                                        int multiprocessors, cudaStream_t stream) {
  ENGINE_CHECK(few_channels_fused_fits(g, act), "few_channels_fused_backward_filter: not a shape or activation "
               "its TF32 kernel takes");
  const int64_t blocks = blocks_for(g, multiprocessors);
  Args p = args_for(g, x, dy, workspace, blocks);
  p.y = y;
  p.bias_partial = workspace + blocks * 9 * g.in_c * g.out_c;
  const auto grid = static_cast<unsigned>(blocks);
  if (act == Activation::Relu) launch_tf32<Activation::Relu, true>(g, p, grid, stream);
  else launch_tf32<Activation::None, true>(g, p, grid, stream);
  CHECK_LAUNCH();
  // db (out_c) = the blocks' partial column sums of dz, in order, in dw's launch.
  const auto out_c = static_cast<int>(g.out_c);
  gemm::add_partials(block_partials(g, workspace, blocks, dw),
                     {p.bias_partial, static_cast<int>(blocks), 1, out_c, db, out_c}, stream);
}

}  // namespace engine::cuda::conv
