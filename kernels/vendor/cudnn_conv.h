// cuDNN behind the engine's ops (core/ops/conv2d.h, core/ops/pool.h): the convolutions and
// max pooling of `--device cudnn`, and the yardstick rows of apps/kernel_bench. Same layouts
// and semantics as the engine's own ops: NHWC activations, Keras filters (kernel_h, kernel_w,
// in_c, out_c), Keras' valid/same padding (core/conv_geometry.h); every output is overwritten.
// The ops' variants that the dispatch point calls, engine::vendor::conv2d_* and
// engine::vendor::max_pool2d_* (kernels/vendor/cudnn_conv.cu), call the functions below, which
// live in engine::cuda::vendor with the rest of the vendor code and take TF32 as an argument.
//
// Everything runs on the device's stream (kernels/launch.h), and nothing here calls cudaMalloc
// once an algorithm is chosen (workspaces come from the caching allocator), so a training step
// that calls these can be recorded into a CUDA graph. The algorithm for each geometry is chosen
// on the first call: measured (cudnnFind*Ex on the call's own operands, two rounds) when the
// stream is not being recorded, else cuDNN's heuristic ranking; nn's fit() runs its first step
// op by op, so the measured choice is the one recorded.
//
// `tf32`: FP32 convolutions may run on TF32 tensor cores, as PyTorch allows cuDNN by default;
// without it they are strict FP32 (FMA only).
//
// Without cuDNN in the build (kernels/vendor/cudnn_absent.cu) cudnn_available() says why and
// the other functions, the ops' vendor:: variants among them, throw DeviceError.
#pragma once
#include <string>

#include "core/conv_geometry.h"
#include "core/ops/strided_copy.h"
#include "core/tensor.h"

namespace engine::cuda::vendor {

// Whether this build has cuDNN and the library that loaded can be used; `why_not` gets a
// one-line reason when not.
bool cudnn_available(std::string* why_not);
// "cuDNN 9.14.0" (the library that loaded), with "(built with 9.19.0)" when its header differs.
std::string cudnn_version();

// The ops of core/ops/conv2d.h and core/ops/pool.h, named after them, through cuDNN
// (engine::vendor::conv2d_* pass the device's TF32 setting as `tf32`). Each convolution
// transposes the filters between Keras' layout and cuDNN's (below) around the cuDNN call.
void cudnn_conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y,
                          bool tf32);
void cudnn_conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                                Tensor& dx, bool tf32);
void cudnn_conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                                  Tensor& dw, bool tf32);

// The same with filters in cuDNN's NHWC filter layout, KRSC: (out_c, kernel_h, kernel_w, in_c),
// krsc_shape(g). No transposes: what apps/kernel_bench times as cuDNN's own work (the
// transposes are a cost of the engine's layout, ~1-3 us a layer, not of cuDNN).
inline Shape krsc_shape(const Conv2dGeometry& g) {
  return {g.out_c, g.kernel_h, g.kernel_w, g.in_c};
}
// Keras filters (K x out_c) as cuDNN's KRSC (out_c x K), K = kernel_h * kernel_w * in_c: one
// transpose, on our kernel (kernels/strided_copy.cu). Needs no cuDNN.
inline Tensor krsc_filters(const Conv2dGeometry& g, const Tensor& w) {
  const int64_t K = g.gemm_k(), N = g.out_c;
  Tensor wk = Tensor::empty(krsc_shape(g), DType::F32, w.device());
  cuda::strided_copy(w, wk, {K, N, 1}, Walk3d{0, {N, 1, 0}}, Walk3d{0, {1, K, 0}});
  return wk;
}
void cudnn_conv2d_forward_krsc(const Conv2dGeometry& g, const Tensor& x, const Tensor& w_krsc,
                               Tensor& y, bool tf32);
void cudnn_conv2d_backward_data_krsc(const Conv2dGeometry& g, const Tensor& dy,
                                     const Tensor& w_krsc, Tensor& dx, bool tf32);
void cudnn_conv2d_backward_filter_krsc(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                                       Tensor& dw_krsc, bool tf32);
void cudnn_max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y);
void cudnn_max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                               const Tensor& dy, Tensor& dx);

}  // namespace engine::cuda::vendor
