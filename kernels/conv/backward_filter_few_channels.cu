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
#include "kernels/cuda_check.h"
#include "kernels/matmul/gemm.h"

#include <algorithm>

namespace engine::cuda::conv {
namespace {

constexpr int THREADS = 256;
// Output channels per thread. With 4 (a float4 of dy, 108 accumulators for RGB) a thread took
// 152 registers and one block of 256 fit an SM; forcing two blocks spilled, and both were slower
// than 2 (measured: docs/results/cnn.md, "Earlier: ..., 2026-11-23"). With 2, 54 accumulators
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

int64_t few_channels_workspace_floats(const Conv2dGeometry& g, int multiprocessors) {
  return blocks_for(g, multiprocessors) * 9 * g.in_c * g.out_c;
}

void few_channels_backward_filter(const Conv2dGeometry& g, const float* x, const float* dy,
                                  float* dw, float* workspace, int multiprocessors,
                                  cudaStream_t stream) {
  const int64_t blocks = blocks_for(g, multiprocessors);
  Args p{x, dy, workspace,
         static_cast<int>(g.batch), static_cast<int>(g.in_h), static_cast<int>(g.in_w),
         static_cast<int>(g.out_h), static_cast<int>(g.out_w), static_cast<int>(g.out_c),
         static_cast<int>(g.stride_h), static_cast<int>(g.stride_w),
         static_cast<int>(g.pad_top), static_cast<int>(g.pad_left),
         g.batch * g.out_h * g.out_w, 0};
  p.pixels_per_block = (p.pixels + blocks - 1) / blocks;
  if (g.in_c == 1) {
    few_channels_filter_kernel<1><<<static_cast<unsigned>(blocks), THREADS, 0, stream>>>(p);
  } else {
    few_channels_filter_kernel<3><<<static_cast<unsigned>(blocks), THREADS, 0, stream>>>(p);
  }
  CHECK_LAUNCH();
  gemm::Gemm sum;  // dw = the blocks' partials added in order: a (9 in_c x out_c) split-K
  sum.M = static_cast<int>(9 * g.in_c);
  sum.N = static_cast<int>(g.out_c);
  sum.C = dw;
  sum.ldc = sum.N;
  sum.partial = workspace;
  gemm::split_k_reduce(sum, static_cast<int>(blocks), stream);
}

}  // namespace engine::cuda::conv
