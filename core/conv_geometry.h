// The geometry of a 2-D window op (convolution or pooling) in the engine's layout.
//
// Layout: activations are NHWC, (batch, height, width, channels), as Keras stores them
// (channels_last). Why NHWC and not cuDNN's classic NCHW: a convolution is then an implicit
// GEMM whose reduction axis (kernel_h, kernel_w, in_c) is read from memory with in_c
// contiguous, Flatten after the last conv gives Keras' order (so weights and summaries match
// the articles), and tensor-core convolutions on NVIDIA GPUs want channels last anyway.
// Filters are Keras' (kernel_h, kernel_w, in_c, out_c): read as a (kernel_h*kernel_w*in_c,
// out_c) row-major matrix they are already the GEMM's right operand.
//
// The convolution as a GEMM: y (M x N) = patches (M x K) @ w (K x N) with
//   M = batch * out_h * out_w,  N = out_c,  K = kernel_h * kernel_w * in_c,
// row m = (n, oh, ow) of patches holding x[n, oh*stride_h + kh - pad_top,
// ow*stride_w + kw - pad_left, ci] for column k = (kh, kw, ci), zero outside x.
//
// Padding as Keras/TensorFlow define it: `valid` uses no padding and out = floor((in - k) /
// stride) + 1; `same` gives out = ceil(in / stride) and pads max((out - 1) * stride + k - in,
// 0) zeros in all, the smaller half on top/left (the odd one goes bottom/right).
// Pooling uses the same struct with out_c == in_c and the window in kernel_h/kernel_w.
#pragma once
#include <cstdint>

#include "core/shape.h"

namespace engine {

enum class Padding { Valid, Same };
const char* to_string(Padding padding);  // "valid" or "same"

struct Conv2dGeometry {
  int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;  // x: (batch, in_h, in_w, in_c)
  int64_t kernel_h = 0, kernel_w = 0, out_c = 0;    // w: (kernel_h, kernel_w, in_c, out_c)
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0;  // zeros before row 0 / column 0 of x
  int64_t out_h = 0, out_w = 0;       // y: (batch, out_h, out_w, out_c)

  int64_t gemm_m() const { return batch * out_h * out_w; }
  int64_t gemm_n() const { return out_c; }
  int64_t gemm_k() const { return kernel_h * kernel_w * in_c; }
  Shape x_shape() const { return {batch, in_h, in_w, in_c}; }
  Shape w_shape() const { return {kernel_h, kernel_w, in_c, out_c}; }
  Shape y_shape() const { return {batch, out_h, out_w, out_c}; }
};

// The geometry of a convolution of x (batch, h, w, c) with filters (kh, kw, c, out_c).
// Throws engine::Error naming the shapes when they do not fit (rank, channels, a `valid`
// window larger than the image, strides below 1).
Conv2dGeometry conv2d_geometry(const Shape& x, const Shape& w, int64_t stride_h, int64_t stride_w,
                               Padding padding);

// The geometry of pooling x (batch, h, w, c) with a pool_h x pool_w window.
Conv2dGeometry pool2d_geometry(const Shape& x, int64_t pool_h, int64_t pool_w, int64_t stride_h,
                               int64_t stride_w, Padding padding);

}  // namespace engine
