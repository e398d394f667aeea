// Matrix multiplication. Implementations: cpu/matmul.cpp (OpenBLAS sgemm), kernels/matmul.cu
// (the engine's kernels, chosen per shape from the ladder in kernels/matmul/), and
// kernels/vendor/cublas_gemm.cu (cuBLAS, under --device cudnn).
#pragma once
#include "core/tensor.h"

namespace engine {

// op(a) @ op(b) for 2-D tensors, op = transpose when the flag is set.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);

namespace raw {
// c = alpha * op(a) @ op(b) + beta * c, op(t) = t or t^T; a, b, c 2-D.
void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta);
}  // namespace raw

namespace cpu {
void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta);
}  // namespace cpu

namespace cuda {
void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta);
}  // namespace cuda

namespace vendor {
void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta);
}  // namespace vendor

}  // namespace engine
