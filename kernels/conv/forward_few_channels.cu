// The forward pass of a first layer, filters over 1 to 4 input channels (RGB or gray images):
//   y[p, co] = act(bias[co] + sum over taps (kh, kw) and channels c of x[patch(p, kh, kw), c] w[kh, kw, c, co])
//
// As an implicit GEMM (forward.cu) this is M = batch * out_h * out_w pixels, N = out_c and a
// reduction of only K = kh * kw * C (27 for 3x3 over RGB): one 32-deep K tile, its last five
// columns padding, and every element of x a scalar load with its own bounds check, staged
// through shared memory for a single use. At CIFAR's first layer it took 25.6 us against
// cuDNN's 21.7 (docs/results/cnn.md, the layer table).
//
// Here a thread owns CH = 16 output channels of one pixel at a time (4 for out_c 4, 8 for 8):
// the out_c / CH threads of a pixel load the same elements of x (a broadcast), and per tap
// and channel each reads its CH filters from shared memory as float4s that the warp's other
// pixels read too (broadcasts). Fewer channels a thread would repeat the pixel's address
// arithmetic and loads on more threads: with 4, eight threads did the same work for one pixel,
// and the layer took 24.4 us. The filters are staged once per block; the bias is added and
// the activation applied before the 16-byte stores, so no pass over y follows.
//
// Napkin math, CIFAR's first layer (batch 100, 32x32x3 -> 32, same padding), FP32 on an H100:
// 102,400 pixels x 32 channels x 27 = 88 M FMA, ~2.6 us at 132 SMs x 128 FMA a clock x 1.98
// GHz; y is 13.1 MB written once (~4.5 us at ~2.9 TB/s), x 1.2 MB read (mostly from L1/L2).
// A thread and pixel: 9 taps of ~10 instructions of addressing, then 3 x (1 load of x, 4
// shared loads, 16 FFMA): ~760 instructions for 2 threads a pixel, ~4.6 us of issue over the
// layer. So ~5-8 us, bound by issue and by writing y. Measured in the CIFAR step (kernel_trace,
// H200, 2026-11-29): 15.0 us, twice that (16.5 before a pixel's threads took interleaved float4s,
// which made each store of a warp whole sectors). Nsight Compute, the same layer: 78 registers a
// thread, so 3 blocks an SM (37.5% occupancy) and 800 blocks in 2.02 waves; memory at 51% of
// its peak, the SM at 46%, 9 cycles between a warp's instructions. Capping it at 64 registers
// (4 blocks an SM, 1.5 waves) gave only 15.0 -> 14.6 us: what is left is each thread's short
// chain of dependent loads and FMAs, with too few warps to cover it.
#include "kernels/conv/forward_few_channels.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/activation_math.cuh"
#include "kernels/cuda_check.h"

namespace engine::cuda::conv {
namespace {

constexpr int THREADS = 256;
constexpr int MAX_CH = 16;                    // output channels per thread (CH below)
constexpr int MAX_OUT_C = 256;                // 16 threads a pixel, 16 pixels a block
constexpr int MAX_FILTER_FLOATS = 12 * 1024;  // 48 KB: shared memory without an opt-in
constexpr int BLOCKS_PER_SM = 8;              // 2,048 threads an SM when the filters are small

struct Args {
  const float* x;
  const float* w;     // (kernel_h, kernel_w, C, out_c)
  const float* bias;  // (out_c,) or null
  float* y;
  Activation act;
  int in_h, in_w, out_h, out_w, out_c;
  int kernel_h, kernel_w, stride_h, stride_w, pad_top, pad_left;
  int pixels;  // batch * out_h * out_w
};

template <int C, int CH>
__global__ void __launch_bounds__(THREADS) few_channels_forward_kernel(Args p) {
  static_assert(CH % 4 == 0, "whole float4s of filters and of y");
  extern __shared__ float4 filters4[];
  float* filters = reinterpret_cast<float*>(filters4);
  const int filter_floats = p.kernel_h * p.kernel_w * C * p.out_c;
  for (int i = static_cast<int>(threadIdx.x); i < filter_floats; i += THREADS) filters[i] = __ldg(p.w + i);
  __syncthreads();

  const int groups = p.out_c / CH;  // threads per pixel (a power of two dividing THREADS)
  const int group = static_cast<int>(threadIdx.x) % groups;
  const int slots = THREADS / groups;  // pixels a block works on at once
  // The thread's channels: float4 number group, group + groups, ... of the pixel's out_c, so
  // that at each store a pixel's threads write adjacent float4s (whole 32-byte sectors).
  const auto channel = [&](int j) { return (j / 4 * groups + group) * 4 + j % 4; };
  float b[CH];
#pragma unroll
  for (int j = 0; j < CH; ++j) b[j] = p.bias ? p.bias[channel(j)] : 0.0f;
  for (int k = static_cast<int>(blockIdx.x) * slots + static_cast<int>(threadIdx.x) / groups; k < p.pixels;
       k += static_cast<int>(gridDim.x) * slots) {
    const int ow = k % p.out_w, oh = k / p.out_w % p.out_h, n = k / (p.out_w * p.out_h);
    float acc[CH] = {};
    for (int kh = 0; kh < p.kernel_h; ++kh) {
      const int ih = oh * p.stride_h + kh - p.pad_top;
      if (ih < 0 || ih >= p.in_h) continue;  // zero padding
      for (int kw = 0; kw < p.kernel_w; ++kw) {
        const int iw = ow * p.stride_w + kw - p.pad_left;
        if (iw < 0 || iw >= p.in_w) continue;
        const float* px = p.x + ((int64_t{n} * p.in_h + ih) * p.in_w + iw) * C;
        const float* tap = filters + (kh * p.kernel_w + kw) * C * p.out_c;
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const float v = __ldg(px + c);
#pragma unroll
          for (int j = 0; j < CH; j += 4) {
            const float4 f = *reinterpret_cast<const float4*>(tap + c * p.out_c + channel(j));
            acc[j] = fmaf(v, f.x, acc[j]);
            acc[j + 1] = fmaf(v, f.y, acc[j + 1]);
            acc[j + 2] = fmaf(v, f.z, acc[j + 2]);
            acc[j + 3] = fmaf(v, f.w, acc[j + 3]);
          }
        }
      }
    }
    // The bias after the sum, as the separate bias pass adds it: the same bits as that path.
    float* out = p.y + int64_t{k} * p.out_c;
#pragma unroll
    for (int j = 0; j < CH; j += 4)
      *reinterpret_cast<float4*>(out + channel(j)) =
          make_float4(activate(p.act, acc[j] + b[j]), activate(p.act, acc[j + 1] + b[j + 1]),
                      activate(p.act, acc[j + 2] + b[j + 2]), activate(p.act, acc[j + 3] + b[j + 3]));
  }
}

}  // namespace

bool few_channels_forward_fits(const Conv2dGeometry& g, const float* y) {
  const bool power_of_two = g.out_c >= 4 && g.out_c <= MAX_OUT_C && (g.out_c & (g.out_c - 1)) == 0;
  const int64_t pixels = g.batch * g.out_h * g.out_w;
  return g.in_c >= 1 && g.in_c <= 4 && power_of_two &&
         g.kernel_h * g.kernel_w * g.in_c * g.out_c <= MAX_FILTER_FLOATS && pixels > 0 && pixels <= 0x7fffffff &&
         reinterpret_cast<uintptr_t>(y) % sizeof(float4) == 0;
}

void few_channels_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* bias,
                          Activation act, float* y, int multiprocessors, cudaStream_t stream) {
  ENGINE_CHECK(few_channels_forward_fits(g, y), "few_channels_forward: a shape it does not take");
  ENGINE_CHECK(act == Activation::None || (bias && act != Activation::Softmax),
               "few_channels_forward: only an elementwise activation after a bias is fused");
  const auto i32 = [](int64_t v) { return static_cast<int>(v); };
  const Args p{x, w, bias, y, act, i32(g.in_h), i32(g.in_w), i32(g.out_h), i32(g.out_w), i32(g.out_c),
               i32(g.kernel_h), i32(g.kernel_w), i32(g.stride_h), i32(g.stride_w), i32(g.pad_top),
               i32(g.pad_left), i32(g.batch * g.out_h * g.out_w)};
  const int ch = std::min(p.out_c, MAX_CH);  // out_c is a power of two: ch divides it
  const int slots = THREADS / (p.out_c / ch);
  const int blocks = std::max(1, std::min((p.pixels + slots - 1) / slots, BLOCKS_PER_SM * multiprocessors));
  const size_t smem = sizeof(float) * static_cast<size_t>(g.kernel_h * g.kernel_w * g.in_c * g.out_c);
  const auto go = [&](auto c, auto channels) {
    few_channels_forward_kernel<decltype(c)::value, decltype(channels)::value><<<blocks, THREADS, smem, stream>>>(p);
  };
  const auto with_ch = [&](auto c) {
    if (ch == 4) go(c, std::integral_constant<int, 4>{});
    else if (ch == 8) go(c, std::integral_constant<int, 8>{});
    else go(c, std::integral_constant<int, 16>{});
  };
  switch (g.in_c) {
    case 1: with_ch(std::integral_constant<int, 1>{}); break;
    case 2: with_ch(std::integral_constant<int, 2>{}); break;
    case 3: with_ch(std::integral_constant<int, 3>{}); break;
    default: with_ch(std::integral_constant<int, 4>{}); break;
  }
  CHECK_LAUNCH_NAMED("few_channels_forward_kernel");
}

}  // namespace engine::cuda::conv
