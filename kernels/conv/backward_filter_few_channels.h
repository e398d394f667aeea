// The filter gradient of a first layer: 3x3 filters over images of 1 or 3 channels
// (backward_filter_few_channels.cu says why the implicit GEMM suits it badly).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/conv_geometry.h"
#include "core/ops/activation.h"

namespace engine::cuda::conv {

// Whether the few-channels kernel takes this shape: 3x3 filters, in_c 1 or 3, out_c a power of
// two from 4 to 128, a non-empty batch, dy 8-byte aligned.
bool few_channels_filter_fits(const Conv2dGeometry& g, const float* dy);

// Whether its TF32 form takes it: a GPU with TF32 tensor cores (8.0 on) and out_c 8, 16 or 32.
bool few_channels_filter_tf32_fits(const Conv2dGeometry& g);

// Whether the fused form below takes it: the TF32 form's shapes, act None or Relu.
bool few_channels_fused_fits(const Conv2dGeometry& g, Activation act);

// Floats of workspace either function below needs: a partial dw and a partial db per block.
int64_t few_channels_workspace_floats(const Conv2dGeometry& g, int multiprocessors);

// dw = sum over every output pixel of its patch of x (outer product) its row of dy, in FP32,
// or with `tf32` on the tensor cores where the TF32 form takes the shape; deterministic: each
// block sums a fixed run of pixels, then the blocks' partials are added in order.
void few_channels_backward_filter(const Conv2dGeometry& g, const float* x, const float* dy,
                                  float* dw, float* workspace, int multiprocessors, bool tf32,
                                  cudaStream_t stream);

// The TF32 form for a network's first layer (x needs no gradient), from the layer's output y:
// dw as above over dz = act'(y) dy, computed as dy is read and never written (act None: dz =
// dy, y unused), and db = dz's column sums, added in FP32 before the TF32 rounding.
void few_channels_fused_backward_filter(const Conv2dGeometry& g, Activation act, const float* y, const float* x,
                                        const float* dy, float* dw, float* db, float* workspace,
                                        int multiprocessors, cudaStream_t stream);

}  // namespace engine::cuda::conv
