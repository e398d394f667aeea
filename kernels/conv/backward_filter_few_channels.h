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

// Floats of workspace few_channels_backward_filter needs: one partial dw per block.
int64_t few_channels_workspace_floats(const Conv2dGeometry& g, int multiprocessors);

// dw = sum over every output pixel of its patch of x (outer product) its row of dy, in FP32;
// deterministic: each block sums a fixed run of pixels, then the blocks' partials are added in
// order.
void few_channels_backward_filter(const Conv2dGeometry& g, const float* x, const float* dy,
                                  float* dw, float* workspace, int multiprocessors,
                                  cudaStream_t stream);

}  // namespace engine::cuda::conv
