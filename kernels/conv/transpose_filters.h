// The Hopper forward's operand: each tap's filters transposed, for any number of layers in one
// launch (transpose_filters.cu says why one).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace engine::cuda::conv {

// One layer's filters, w (taps, in_c, out_c) as stored, and where their transpose goes:
// filters_t (taps, out_c, in_c), k = in_c contiguous as wgmma reads it.
struct FilterTranspose {
  const float* w;
  float* filters_t;
  int taps, in_c, out_c;
};

// Writes every entry's filters_t, all of them from one kernel launch where they are few
// enough (up to 16 layers a launch). On `stream`; no allocation, no sync.
void transpose_filters(const std::vector<FilterTranspose>& layers, cudaStream_t stream);

}  // namespace engine::cuda::conv
