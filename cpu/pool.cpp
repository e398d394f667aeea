// max_pool2d on the CPU, NHWC: a window's channels are contiguous, so the inner loop runs over
// channels in SIMD lanes and each window position is one vector max (or compare) per channel
// group.
//
// Napkin math, seed 003's first pool (2x2, stride 2): x 100x32x32x32 (13 MB) -> y 100x16x16x32
// (3.3 MB), 3.3 M outputs x 4 compares. Memory-bound: ~16 MB per pass, ~1.5 ms on one core at
// ~10 GB/s, a fraction of that on a full socket. The backward reads x, y, dy and writes dx:
// ~33 MB, about twice the forward.
#include "core/ops/pool.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/ops/elementwise.h"
#include "cpu/cpu_device.h"

namespace engine::cpu {
namespace {

// The window of output (oh, ow), clipped to x: rows [h0, h1), columns [w0, w1).
struct Window {
  int64_t h0, h1, w0, w1;
};

Window window(const Conv2dGeometry& g, int64_t oh, int64_t ow) {
  const int64_t top = oh * g.stride_h - g.pad_top, left = ow * g.stride_w - g.pad_left;
  return {std::max<int64_t>(top, 0), std::min(top + g.kernel_h, g.in_h),
          std::max<int64_t>(left, 0), std::min(left + g.kernel_w, g.in_w)};
}

}  // namespace

void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y) {
  const int64_t c = g.in_c, rows = g.batch * g.out_h;
  const float* in = x.data<float>();
  float* out = y.data<float>();
  const int team = team_size(y.numel() * g.kernel_h * g.kernel_w, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {  // r = (n, oh)
    const int64_t n = r / g.out_h, oh = r % g.out_h;
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      float* dst = out + (r * g.out_w + ow) * c;
      std::fill(dst, dst + c, -std::numeric_limits<float>::infinity());  // padding never wins
      const Window win = window(g, oh, ow);
      for (int64_t ih = win.h0; ih < win.h1; ++ih) {
        for (int64_t iw = win.w0; iw < win.w1; ++iw) {
          const float* src = in + ((n * g.in_h + ih) * g.in_w + iw) * c;
#pragma omp simd
          for (int64_t ch = 0; ch < c; ++ch) dst[ch] = src[ch] > dst[ch] ? src[ch] : dst[ch];
        }
      }
    }
  }
}

// Each window's dy goes to the first position (row-major within the window) where x equals
// the window's maximum y: the forward's max is one of x's values, so the test is exact.
// Windows may overlap (stride < pool) and then add into the same dx, so a thread owns whole
// images.
void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx) {
  cpu::fill(dx, 0.0f);  // 0 except at the windows' maxima, which add into it
  const int64_t c = g.in_c;
  const float* in = x.data<float>();
  const float* out = y.data<float>();
  const float* grad_out = dy.data<float>();
  float* grad_in = dx.data<float>();
  const int team = team_size(y.numel() * g.kernel_h * g.kernel_w, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const int64_t o = ((n * g.out_h + oh) * g.out_w + ow) * c;
        const Window win = window(g, oh, ow);
        for (int64_t ch = 0; ch < c; ++ch) {
          const float best = out[o + ch];
          for (int64_t ih = win.h0; ih < win.h1; ++ih) {
            int64_t iw = win.w0;
            const int64_t row = (n * g.in_h + ih) * g.in_w;
            while (iw < win.w1 && in[(row + iw) * c + ch] != best) ++iw;
            if (iw < win.w1) {
              grad_in[(row + iw) * c + ch] += grad_out[o + ch];
              break;
            }
          }
        }
      }
    }
  }
}

// Windows that tile x: each output's first maximum in row-major window order by the forward's
// rule (strict '>' from -inf; a window of -inf's gives its first position, one of NaNs none),
// and its tap.
void max_pool2d_forward_taps(const Conv2dGeometry& g, const Tensor& x, Tensor& y, Tensor& taps) {
  const int64_t c = g.in_c, rows = g.batch * g.out_h;
  const float* in = x.data<float>();
  float* out = y.data<float>();
  uint8_t* tap_out = taps.data<uint8_t>();
  const int team = team_size(y.numel() * g.kernel_h * g.kernel_w, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {  // r = (n, oh); x's first row of the window: r * kernel_h
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      float* dst = out + (r * g.out_w + ow) * c;
      uint8_t* tap_dst = tap_out + (r * g.out_w + ow) * c;
      std::fill(dst, dst + c, -std::numeric_limits<float>::infinity());
      std::fill(tap_dst, tap_dst + c, POOL_NO_TAP);
      for (int64_t kh = 0, tap = 0; kh < g.kernel_h; ++kh) {
        for (int64_t kw = 0; kw < g.kernel_w; ++kw, ++tap) {
          const float* src = in + ((r * g.kernel_h + kh) * g.in_w + ow * g.kernel_w + kw) * c;
          for (int64_t ch = 0; ch < c; ++ch) {
            if (src[ch] > dst[ch] || (tap_dst[ch] == POOL_NO_TAP && src[ch] == dst[ch])) {
              dst[ch] = src[ch];
              tap_dst[ch] = static_cast<uint8_t>(tap);
            }
          }
        }
      }
    }
  }
}

// Every dx element lies in one window: dy where it is that window's tap, else 0.
void max_pool2d_backward_taps(const Conv2dGeometry& g, const Tensor& taps, const Tensor& dy, Tensor& dx) {
  const int64_t c = g.in_c, rows = g.batch * g.out_h;
  const uint8_t* tap_in = taps.data<uint8_t>();
  const float* grad_out = dy.data<float>();
  float* grad_in = dx.data<float>();
  const int team = team_size(dx.numel(), PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      const int64_t o = (r * g.out_w + ow) * c;
      for (int64_t kh = 0, tap = 0; kh < g.kernel_h; ++kh) {
        for (int64_t kw = 0; kw < g.kernel_w; ++kw, ++tap) {
          float* dst = grad_in + ((r * g.kernel_h + kh) * g.in_w + ow * g.kernel_w + kw) * c;
          for (int64_t ch = 0; ch < c; ++ch) dst[ch] = tap_in[o + ch] == tap ? grad_out[o + ch] : 0.0f;
        }
      }
    }
  }
}

}  // namespace engine::cpu
