// 2-D convolution: NHWC activations, Keras filters (kh, kw, in_c, out_c) and padding
// (core/conv_geometry.h). Implementations: cpu/conv2d.cpp, kernels/conv2d.cu (implicit GEMMs
// in kernels/conv/), kernels/vendor/cudnn_conv.cu (cuDNN, under --device cudnn).
#pragma once
#include <cstdint>
#include <vector>

#include "core/conv_geometry.h"
#include "core/ops/activation.h"
#include "core/tensor.h"

namespace engine {

// x (N, H, W, C) convolved with filters w (kh, kw, C, out_c) at `stride` on both axes ->
// (N, out_h, out_w, out_c). No bias: conv2d_bias_activation below has one.
Tensor conv2d(const Tensor& x, const Tensor& w, int64_t stride, Padding padding);

// act(conv2d(x, w) + bias), bias (out_c,) added to every pixel, act elementwise (None, Relu,
// Tanh, Sigmoid): a Conv2D layer as one op, so that a backend may add the bias and apply the
// activation as it writes y (the Hopper kernel's epilogue) rather than in a pass over y.
Tensor conv2d_bias_activation(const Tensor& x, const Tensor& w, const Tensor& bias, Activation act,
                              int64_t stride, Padding padding);

// What a model's convolutions' forward passes need made from their filters, made for all the
// model's layers at once by its forward pass (nn::Sequential::forward) and kept while this
// lives: on Hopper in TF32, each layer's filters transposed tap by tap, the Hopper forward's
// operand, written for every layer by one kernel (kernels/conv/transpose_filters.cu) rather
// than by a copy of its own in each layer's forward. Elsewhere (the CPU, cuDNN, FP32, GPUs
// before Hopper) it makes nothing. A convolution outside such a scope makes its own copy. The
// filters must not change while it lives; scopes do not nest.
class PreparedConvFilters {
 public:
  explicit PreparedConvFilters(const std::vector<Tensor>& filters);
  ~PreparedConvFilters();
  PreparedConvFilters(const PreparedConvFilters&) = delete;
  PreparedConvFilters& operator=(const PreparedConvFilters&) = delete;

 private:
  Tensor transposed_;  // every prepared layer's copy, one after another; undefined: none made
};

namespace raw {
// Every output is overwritten.
// y[n, oh, ow, co] = sum over (kh, kw, ci) of x[n, oh*stride_h + kh - pad_top,
//   ow*stride_w + kw - pad_left, ci] * w[kh, kw, ci, co], zero outside x.
void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y);
// The same, then y = act(y + bias) over y's (N * out_h * out_w, out_c) rows.
void conv2d_bias_activation_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                    const Tensor& bias, Activation act, Tensor& y);
// dx = d loss / d x for dy = d loss / d y: the transposed convolution of dy with w.
void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w, Tensor& dx);
// dw = d loss / d w: patches^T @ dy, (K x M) @ (M x out_c) in GEMM terms.
void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw);
// The same, and db = the column sums of dy over its (N * out_h * out_w, out_c) rows: the bias
// gradient of a conv2d_bias_activation without activation, summed where the backend reads dy
// for dw anyway (the Hopper filter gradient's copy of dy).
void conv2d_bias_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw,
                                 Tensor& db);
// dw and db of a conv2d_bias_activation (act not None), from dz = act'(y) dy. Without `dz` (a
// network's first layer, whose input needs no gradient) dz is their operand only, so where the
// backend can, the filter gradient applies act' as it reads dy and dz is never written (the
// few-channels kernel's TF32 form). With `dz`, dz is written there too, for the data pass:
// the Hopper filter gradient's copy of dy applies act', writes dz and sums db in one pass
// over dy and y. Elsewhere bias_activation_backward writes dz (and db) first.
void conv2d_activation_backward_filter(const Conv2dGeometry& g, Activation act, const Tensor& y, const Tensor& x,
                                       const Tensor& dy, Tensor& dw, Tensor& db, Tensor* dz = nullptr);
}  // namespace raw

namespace cpu {
void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y);
void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w, Tensor& dx);
void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw);
}  // namespace cpu

namespace cuda {
void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y);
void conv2d_bias_activation_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                    const Tensor& bias, Activation act, Tensor& y);
void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w, Tensor& dx);
void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw);
void conv2d_bias_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw,
                                 Tensor& db);
void conv2d_activation_backward_filter(const Conv2dGeometry& g, Activation act, const Tensor& y, const Tensor& x,
                                       const Tensor& dy, Tensor& dw, Tensor& db, Tensor* dz);
// PreparedConvFilters' work: the transposes into `transposed` (allocated here), remembered on
// this thread for the Hopper forward passes; false, and nothing made, where those would not run.
bool prepare_forward_filters(const std::vector<Tensor>& filters, Tensor& transposed);
void forget_forward_filters();
}  // namespace cuda

namespace vendor {
void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y);
void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w, Tensor& dx);
void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw);
}  // namespace vendor

}  // namespace engine
