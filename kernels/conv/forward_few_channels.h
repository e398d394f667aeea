// The forward pass of a first layer: filters over images of 1 to 4 channels, with the layer's
// bias and activation applied as y is written (forward_few_channels.cu says why the implicit
// GEMM suits it badly).
#pragma once
#include <cuda_runtime.h>

#include "core/conv_geometry.h"
#include "core/ops/activation.h"

namespace engine::cuda::conv {

// Whether the few-channels forward takes this shape: in_c 1 to 4, out_c a power of two from 4
// to 256, filters of at most 48 KB (kernel_h * kernel_w * in_c * out_c floats), between 1 and
// 2^31 - 1 output pixels, y 16-byte aligned.
bool few_channels_forward_fits(const Conv2dGeometry& g, const float* y);

// y = act(x (*) w + bias) in FP32, every output written; bias (out_c,) or null (then act must
// be None); act elementwise. On `stream`; no allocation, no sync.
void few_channels_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* bias,
                          Activation act, float* y, int multiprocessors, cudaStream_t stream);

}  // namespace engine::cuda::conv
