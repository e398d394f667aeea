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

namespace raw {
// y[n, oh, ow, c] = max of x over the window (padded positions never win).
void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y);
// dx = 0 except at each window's maximum, which gets that window's dy (on ties the first
// in row-major window order; overlapping windows add). Uses the forward output y.
void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx);
}  // namespace raw

namespace cpu {
void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y);
void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx);
}  // namespace cpu

namespace cuda {
void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y);
void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx);
}  // namespace cuda

namespace vendor {
void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y);
void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx);
}  // namespace vendor

}  // namespace engine
