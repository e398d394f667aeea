// Max pooling, NHWC (core/ops/pool.h; core/conv_geometry.h: pool2d_geometry), forward and
// backward. (cuDNN's, for --device cudnn, is kernels/vendor/cudnn_conv.cu.)
//
// Napkin math, seed 003's first pool, (100, 32, 32, 32) -> (100, 16, 16, 32) on an H100:
//   forward: reads x (13.1 MB), writes y (3.3 MB), one compare per element: 16.4 MB,
//            ~5.5 us at 3 TB/s; memory-bound (0.06 compares per byte).
//   backward: reads x and y (each element's own window's max), dy where it wins, writes dx:
//            ~33 MB, ~11 us.
// Seed 004's pool, (128, 24, 24, 64) -> (128, 12, 12, 64): 19 + 4.7 MB forward, ~8 us.
// One thread per output (forward) or per dx element (backward), consecutive threads along the
// channels: every warp's loads are consecutive addresses.
//
// Backward is a gather, not a scatter to each window's argmax: dx[n, ih, iw, c] adds dy of
// every window that covers (ih, iw) and whose first maximum (row-major within the window,
// the forward's strict '>' keeps the first) is (ih, iw). Each dx element is written once by
// one thread, in a fixed order: no atomics, deterministic, and correct for overlapping
// windows too. The first-maximum scan runs only where x equals the window's max.
//
// Windows that tile x exactly (stride = window, no padding, no leftover row or column: every
// seed model's 2x2 pool) take shorter paths, a thread per window and, with C % 4 == 0, four
// channels per thread in 16-byte loads and stores. Forward: the window's max, as above.
// Backward: each x element lies in one window, so the thread recomputes the window's first
// maximum from x and writes its whole window of dx, dy there and zeros elsewhere: no y read,
// no search over covering windows, no divisions per dx element (the general kernels' times on
// seed 003's first pool, before these paths: docs/HISTORY.md, 2026-11-24).
// In training, max_pool2d (core/ops/pool.cpp) has the forward write each window's tap too, a
// byte an output (0.8 MB for seed 003's first pool), and the backward reads those and dy
// instead of x: ~17 MB instead of ~30.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

#include "core/ops/pool.h"
#include "kernels/launch.h"
#include "kernels/vector_io.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;

struct PoolArgs {
  int in_h, in_w, channels, kernel_h, kernel_w, stride_h, stride_w, pad_top, pad_left, out_h, out_w;
};

PoolArgs pool_args(const Conv2dGeometry& g) {
  auto i = [](int64_t v) {
    ENGINE_CHECK(v <= std::numeric_limits<int>::max(), "max_pool2d on the GPU: extent ", v,
                 " beyond 2^31 - 1");
    return static_cast<int>(v);
  };
  return {i(g.in_h),     i(g.in_w),     i(g.in_c),    i(g.kernel_h), i(g.kernel_w), i(g.stride_h),
          i(g.stride_w), i(g.pad_top), i(g.pad_left), i(g.out_h),    i(g.out_w)};
}

// Index: the type of the element indices and their decoding. A 64-bit division is a software
// routine of dozens of instructions, and decoding (n, h, w, c) takes three per element: int
// wherever the tensors allow it (int_indices below), which is every seed model's layer.
//
// x: (batch, in_h, in_w, C), y: (batch, out_h, out_w, C); `count` = y's elements.
template <typename Index>
__global__ void max_pool_forward_kernel(const float* __restrict__ x, float* __restrict__ y,
                                        PoolArgs a, Index count) {
  for (Index i = grid_first<Index>(); i < count; i += grid_step<Index>()) {
    const int c = static_cast<int>(i % a.channels);
    const Index pixel = i / a.channels;
    const int ow = static_cast<int>(pixel % a.out_w);
    const int oh = static_cast<int>(pixel / a.out_w % a.out_h);
    const Index n = pixel / a.out_w / a.out_h;
    const float* image = x + n * a.in_h * a.in_w * a.channels + c;
    const int ih0 = oh * a.stride_h - a.pad_top, iw0 = ow * a.stride_w - a.pad_left;
    // Every window holds at least one element of x (valid: all inside; same: the padding is
    // smaller than the window), so -inf never survives unless x holds it.
    float best = -INFINITY;
    for (int kh = 0; kh < a.kernel_h; ++kh) {
      const int ih = ih0 + kh;
      if (ih < 0 || ih >= a.in_h) continue;
      for (int kw = 0; kw < a.kernel_w; ++kw) {
        const int iw = iw0 + kw;
        if (iw < 0 || iw >= a.in_w) continue;
        const float v = image[(int64_t{ih} * a.in_w + iw) * a.channels];
        if (v > best) best = v;  // strict: on ties the first in row-major order stays
      }
    }
    y[i] = best;
  }
}

// Whether (ih, iw) is the first element of window (oh, ow) in row-major order that equals the
// window's maximum m (the forward's choice). `image` points at x[n, 0, 0, c].
__device__ bool first_maximum(const float* image, const PoolArgs& a, int oh, int ow, float m, int ih,
                              int iw) {
  const int ih0 = oh * a.stride_h - a.pad_top, iw0 = ow * a.stride_w - a.pad_left;
  for (int kh = 0; kh < a.kernel_h; ++kh) {
    const int h = ih0 + kh;
    if (h < 0 || h >= a.in_h) continue;
    for (int kw = 0; kw < a.kernel_w; ++kw) {
      const int w = iw0 + kw;
      if (w < 0 || w >= a.in_w) continue;
      if (h == ih && w == iw) return true;  // reached (ih, iw), which equals m, first
      if (image[(int64_t{h} * a.in_w + w) * a.channels] == m) return false;  // an earlier tie
    }
  }
  return false;  // (ih, iw) is not in the window: not reached from a covering window
}

// dx: like x; `count` = x's elements.
template <typename Index>
__global__ void max_pool_backward_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                         const float* __restrict__ dy, float* __restrict__ dx,
                                         PoolArgs a, Index count) {
  for (Index i = grid_first<Index>(); i < count; i += grid_step<Index>()) {
    const int c = static_cast<int>(i % a.channels);
    const Index pixel = i / a.channels;
    const int iw = static_cast<int>(pixel % a.in_w);
    const int ih = static_cast<int>(pixel / a.in_w % a.in_h);
    const Index n = pixel / a.in_w / a.in_h;
    const float v = x[i];
    const float* image = x + n * a.in_h * a.in_w * a.channels + c;
    const Index out_image = n * a.out_h * a.out_w;
    // The windows covering ih: oh * stride_h - pad_top <= ih < oh * stride_h - pad_top + kernel_h.
    const int h_num = ih + a.pad_top, w_num = iw + a.pad_left;  // >= 0
    const int oh_lo = h_num - a.kernel_h + 1 <= 0 ? 0 : (h_num - a.kernel_h + a.stride_h) / a.stride_h;
    const int ow_lo = w_num - a.kernel_w + 1 <= 0 ? 0 : (w_num - a.kernel_w + a.stride_w) / a.stride_w;
    const int oh_hi = min(a.out_h - 1, h_num / a.stride_h);
    const int ow_hi = min(a.out_w - 1, w_num / a.stride_w);
    float sum = 0.0f;
    for (int oh = oh_lo; oh <= oh_hi; ++oh) {
      for (int ow = ow_lo; ow <= ow_hi; ++ow) {
        const Index o = (out_image + oh * a.out_w + ow) * a.channels + c;
        const float m = y[o];
        if (v == m && first_maximum(image, a, oh, ow, m, ih, iw)) sum += dy[o];
      }
    }
    dx[i] = sum;
  }
}

// Windows that tile x (pool_windows_tile_input, core/ops/pool.h): thread i takes y's elements
// i W .. i W + W - 1 (W channels of one window; C % W == 0). Where the window starts in x, and
// its first maximum: the general kernels' choice, strict '>' from -inf, so on ties the first
// in row-major order; a window of -inf's gives its first element, one of NaNs none (the
// general backward's y = -inf equals no NaN either).
template <typename Index>
__device__ __forceinline__ Index tiled_window_corner(const PoolArgs& a, Index e) {
  const int c = static_cast<int>(e % a.channels);
  const Index pixel = e / a.channels;
  const int ow = static_cast<int>(pixel % a.out_w);
  const Index row = pixel / a.out_w;  // n * out_h + oh
  // x's row n * in_h + oh * kernel_h is row * kernel_h, since in_h = out_h * kernel_h.
  return (row * a.kernel_h * a.in_w + ow * a.kernel_w) * a.channels + c;
}
template <typename Index, int W>
__device__ __forceinline__ void tiled_window_max(const float* x, const PoolArgs& a, Index corner,
                                                 float (&best)[W], int (&at)[W]) {
#pragma unroll
  for (int l = 0; l < W; ++l) best[l] = -INFINITY, at[l] = -1;  // at: the tap kh * kernel_w + kw
  float v[W];
  for (int kh = 0, tap = 0; kh < a.kernel_h; ++kh) {
    for (int kw = 0; kw < a.kernel_w; ++kw, ++tap) {
      load_floats<W>(x + corner + (kh * a.in_w + kw) * a.channels, v);
#pragma unroll
      for (int l = 0; l < W; ++l)
        if (v[l] > best[l] || (at[l] < 0 && v[l] == best[l])) best[l] = v[l], at[l] = tap;
    }
  }
}

// Writes the whole window of dx at `corner`: g (W channels' dy) at each channel's tap `at`,
// zeros elsewhere (an `at` that is no tap of the window, -1 or POOL_NO_TAP: zeros everywhere).
template <typename Index, int W>
__device__ __forceinline__ void write_window_gradient(float* dx, const PoolArgs& a, Index corner,
                                                      const float (&g)[W], const int (&at)[W]) {
  float out[W];
  for (int kh = 0, tap = 0; kh < a.kernel_h; ++kh) {
    for (int kw = 0; kw < a.kernel_w; ++kw, ++tap) {
#pragma unroll
      for (int l = 0; l < W; ++l) out[l] = at[l] == tap ? g[l] : 0.0f;
      store_floats<W>(dx + corner + (kh * a.in_w + kw) * a.channels, out);
    }
  }
}

// `count` = y's elements / W, here and below. TAPS: also each output's tap (POOL_NO_TAP where
// the window has no maximum), W bytes in one store.
template <typename Index, int W, bool TAPS>
__global__ void max_pool_forward_tiled_kernel(const float* __restrict__ x, float* __restrict__ y,
                                              uint8_t* __restrict__ taps, PoolArgs a, Index count) {
  for (Index i = grid_first<Index>(); i < count; i += grid_step<Index>()) {
    float best[W];
    int at[W];
    tiled_window_max<Index, W>(x, a, tiled_window_corner<Index>(a, i * W), best, at);
    store_floats<W>(y + i * W, best);
    if constexpr (TAPS) {
      uint8_t t[W];
#pragma unroll
      for (int l = 0; l < W; ++l) t[l] = at[l] < 0 ? POOL_NO_TAP : static_cast<uint8_t>(at[l]);
      if constexpr (W == 4)
        *reinterpret_cast<uchar4*>(taps + i * W) = make_uchar4(t[0], t[1], t[2], t[3]);
      else
        taps[i] = t[0];
    }
  }
}

// Writes the whole window of dx from the forward's taps: dy at the tap, zeros elsewhere. Reads
// dy and a byte an output, where max_pool_backward_tiled_kernel reads x's whole window too.
template <typename Index, int W>
__global__ void max_pool_backward_taps_kernel(const uint8_t* __restrict__ taps, const float* __restrict__ dy,
                                              float* __restrict__ dx, PoolArgs a, Index count) {
  for (Index i = grid_first<Index>(); i < count; i += grid_step<Index>()) {
    const Index corner = tiled_window_corner<Index>(a, i * W);
    float g[W];
    int at[W];
    load_floats<W>(dy + i * W, g);
    if constexpr (W == 4) {
      const uchar4 t = *reinterpret_cast<const uchar4*>(taps + i * W);
      at[0] = t.x, at[1] = t.y, at[2] = t.z, at[3] = t.w;
    } else {
      at[0] = taps[i];
    }
    write_window_gradient<Index, W>(dx, a, corner, g, at);
  }
}

// Writes the whole window of dx: dy at the first maximum, zeros elsewhere.
template <typename Index, int W>
__global__ void max_pool_backward_tiled_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                               float* __restrict__ dx, PoolArgs a, Index count) {
  for (Index i = grid_first<Index>(); i < count; i += grid_step<Index>()) {
    const Index corner = tiled_window_corner<Index>(a, i * W);
    float best[W], g[W];
    int at[W];
    tiled_window_max<Index, W>(x, a, corner, best, at);
    load_floats<W>(dy + i * W, g);
    write_window_gradient<Index, W>(dx, a, corner, g, at);
  }
}

// Whether the kernels may index in int: every index and every index plus one grid-stride step
// (at most 65,535 x 256) must stay below 2^31; 2^30 elements leaves room for both.
bool int_indices(const Tensor& x, const Tensor& y) {
  return std::max(x.numel(), y.numel()) < (int64_t{1} << 30);
}

// W = 4 with taps: their four bytes are one 4-byte store or load.
bool aligned4(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 4 == 0; }

// The tiled kernels take 4 channels a thread where C % 4 == 0 and the tensors are 16-byte
// aligned (kernels/vector_io.h).
bool tiled_vec(const PoolArgs& a, std::initializer_list<const float*> tensors) {
  bool vec = a.channels % 4 == 0;
  for (const float* t : tensors) vec = vec && aligned16(t);
  return vec;
}

}  // namespace

void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y) {
  const int64_t count = y.numel();
  if (count == 0) return;
  const PoolArgs a = pool_args(g);
  if (pool_windows_tile_input(g)) {
    launch_float_groups(count, tiled_vec(a, {x.data<float>(), y.data<float>()}), int_indices(x, y), THREADS,
                        [&](auto types, unsigned blocks, int64_t groups) {
                          using Index = typename decltype(types)::first_type;
                          constexpr int W = decltype(types)::second_type::value;
                          max_pool_forward_tiled_kernel<Index, W, false><<<blocks, THREADS, 0, stream()>>>(
                              x.data<float>(), y.data<float>(), nullptr, a, static_cast<Index>(groups));
                        });
    CHECK_LAUNCH();
    return;
  }
  const unsigned blocks = blocks_for(count, THREADS);
  if (int_indices(x, y)) {
    max_pool_forward_kernel<int><<<blocks, THREADS, 0, stream()>>>(
        x.data<float>(), y.data<float>(), a, static_cast<int>(count));
  } else {
    max_pool_forward_kernel<int64_t><<<blocks, THREADS, 0, stream()>>>(x.data<float>(), y.data<float>(), a, count);
  }
  CHECK_LAUNCH();
}

void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx) {
  const int64_t count = dx.numel();
  if (count == 0) return;
  const PoolArgs a = pool_args(g);
  if (pool_windows_tile_input(g)) {
    launch_float_groups(y.numel(), tiled_vec(a, {x.data<float>(), dy.data<float>(), dx.data<float>()}),
                        int_indices(x, y), THREADS, [&](auto types, unsigned blocks, int64_t groups) {
                          using Index = typename decltype(types)::first_type;
                          constexpr int W = decltype(types)::second_type::value;
                          max_pool_backward_tiled_kernel<Index, W><<<blocks, THREADS, 0, stream()>>>(
                              x.data<float>(), dy.data<float>(), dx.data<float>(), a, static_cast<Index>(groups));
                        });
    CHECK_LAUNCH();
    return;
  }
  const unsigned blocks = blocks_for(count, THREADS);
  if (int_indices(x, y)) {
    max_pool_backward_kernel<int><<<blocks, THREADS, 0, stream()>>>(
        x.data<float>(), y.data<float>(), dy.data<float>(), dx.data<float>(), a, static_cast<int>(count));
  } else {
    max_pool_backward_kernel<int64_t><<<blocks, THREADS, 0, stream()>>>(
        x.data<float>(), y.data<float>(), dy.data<float>(), dx.data<float>(), a, count);
  }
  CHECK_LAUNCH();
}

void max_pool2d_forward_taps(const Conv2dGeometry& g, const Tensor& x, Tensor& y, Tensor& taps) {
  const int64_t count = y.numel();
  if (count == 0) return;
  const PoolArgs a = pool_args(g);
  const bool vec = tiled_vec(a, {x.data<float>(), y.data<float>()}) && aligned4(taps.data<uint8_t>());
  launch_float_groups(count, vec, int_indices(x, y), THREADS, [&](auto types, unsigned blocks, int64_t groups) {
    using Index = typename decltype(types)::first_type;
    constexpr int W = decltype(types)::second_type::value;
    max_pool_forward_tiled_kernel<Index, W, true><<<blocks, THREADS, 0, stream()>>>(
        x.data<float>(), y.data<float>(), taps.data<uint8_t>(), a, static_cast<Index>(groups));
  });
  CHECK_LAUNCH();
}

void max_pool2d_backward_taps(const Conv2dGeometry& g, const Tensor& taps, const Tensor& dy, Tensor& dx) {
  const int64_t count = dy.numel();
  if (count == 0) return;
  const PoolArgs a = pool_args(g);
  const bool vec = tiled_vec(a, {dy.data<float>(), dx.data<float>()}) && aligned4(taps.data<uint8_t>());
  launch_float_groups(count, vec, int_indices(dx, dy), THREADS, [&](auto types, unsigned blocks, int64_t groups) {
    using Index = typename decltype(types)::first_type;
    constexpr int W = decltype(types)::second_type::value;
    max_pool_backward_taps_kernel<Index, W><<<blocks, THREADS, 0, stream()>>>(
        taps.data<uint8_t>(), dy.data<float>(), dx.data<float>(), a, static_cast<Index>(groups));
  });
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
