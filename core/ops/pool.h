// Max pooling, NHWC (core/conv_geometry.h). Implementations: cpu/pool.cpp, kernels/pool.cu,
// kernels/vendor/cudnn_pool.cu (cuDNN, under --device cudnn).
#pragma once
#include <cstdint>

#include "core/conv_geometry.h"
#include "core/tensor.h"

namespace engine {

// Max over pool x pool windows of x (N, H, W, C) -> (N, out_h, out_w, C), like Keras'
// MaxPooling2D(pool): stride = pool, padding valid. The general form takes any stride
// (windows may overlap) and padding (padded positions never win).
Tensor max_pool2d(const Tensor& x, int64_t pool);
Tensor max_pool2d(const Tensor& x, int64_t pool, int64_t stride, Padding padding);

// Whether g's windows tile x exactly (stride = window, no padding, no row or column left
// over: Keras' MaxPooling2D(2) on even sizes). Then every x element lies in one window: the
// backends' tiled paths, and the backward pass needs only where each window's maximum was.
bool pool_windows_tile_input(const Conv2dGeometry& g);
// A window's tap is kh * kernel_w + kw, a byte; this one marks a window without a maximum
// (all NaN).
constexpr uint8_t POOL_NO_TAP = 255;
// Whether max_pool2d, where a gradient will flow, records the taps of g's maxima (a byte an
// output) for the backward instead of keeping x and y: windows that tile x, of fewer than
// POOL_NO_TAP positions.
bool pool_records_taps(const Conv2dGeometry& g);

namespace raw {
// y[n, oh, ow, c] = max of x over the window (padded positions never win).
void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y);
// dx = 0 except at each window's maximum, which gets that window's dy (on ties the first
// in row-major window order; overlapping windows add). Uses the forward output y.
void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx);
// Where pool_records_taps(g): y as max_pool2d_forward, and taps (U8, y's
// shape) the tap of each output's first maximum, the one max_pool2d_backward would pick.
void max_pool2d_forward_taps(const Conv2dGeometry& g, const Tensor& x, Tensor& y, Tensor& taps);
// dx = dy at each window's tap, 0 elsewhere: max_pool2d_backward's dx, without reading x or y.
void max_pool2d_backward_taps(const Conv2dGeometry& g, const Tensor& taps, const Tensor& dy, Tensor& dx);
}  // namespace raw

namespace cpu {
void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y);
void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx);
void max_pool2d_forward_taps(const Conv2dGeometry& g, const Tensor& x, Tensor& y, Tensor& taps);
void max_pool2d_backward_taps(const Conv2dGeometry& g, const Tensor& taps, const Tensor& dy, Tensor& dx);
}  // namespace cpu

namespace cuda {
void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y);
void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx);
void max_pool2d_forward_taps(const Conv2dGeometry& g, const Tensor& x, Tensor& y, Tensor& taps);
void max_pool2d_backward_taps(const Conv2dGeometry& g, const Tensor& taps, const Tensor& dy, Tensor& dx);
}  // namespace cuda

namespace vendor {
void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y);
void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx);
}  // namespace vendor

}  // namespace engine
