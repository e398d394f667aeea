// The dot product behind the degenerate matmul (1 x K) @ (K x 1) (kernels/dot.cu).
#pragma once
#include "core/tensor.h"

namespace engine::cuda {

// c[0] = alpha * sum_i a[i] * b[i] + beta * c[0], over the a.numel() == b.numel() elements of
// two contiguous F32 tensors on the GPU (any shapes: a (1, K) row and a (K, 1) column alike);
// c has one element and is not read when beta == 0. Deterministic: the same inputs on the
// same GPU model give the same bits (the summation order depends only on n and the SM count).
void dot(const Tensor& a, const Tensor& b, Tensor& c, float alpha, float beta);

}  // namespace engine::cuda
