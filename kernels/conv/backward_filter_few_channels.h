// The filter gradient of a first layer: 3x3 filters over images of 1 or 3 channels
// (backward_filter_few_channels.cu says why the implicit GEMM suits it badly).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/conv_geometry.h"

namespace engine::cuda::conv {

// Whether the few-channels kernel takes this shape: 3x3 filters, in_c 1 or 3, out_c a power of
// two from 4 to 128, a non-empty batch, dy 8-byte aligned.
bool few_channels_filter_fits(const Conv2dGeometry& g, const float* dy);

// Whether its TF32 form takes it: a GPU with TF32 tensor cores (8.0 on) and out_c 8, 16 or 32.
bool few_channels_filter_tf32_fits(const Conv2dGeometry& g);

// Floats of workspace few_channels_backward_filter needs: one partial dw per block.
int64_t few_channels_workspace_floats(const Conv2dGeometry& g, int multiprocessors);

// dw = sum over every output pixel of its patch of x (outer product) its row of dy, in FP32,
// or with `tf32` on the tensor cores where the TF32 form takes the shape; deterministic: each
// block sums a fixed run of pixels, then the blocks' partials are added in order.
void few_channels_backward_filter(const Conv2dGeometry& g, const float* x, const float* dy,
                                  float* dw, float* workspace, int multiprocessors, bool tf32,
                                  cudaStream_t stream);

}  // namespace engine::cuda::conv
