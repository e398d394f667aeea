// Elementwise arithmetic: a + b, a - b, a * b, scaling, filling.
// Implementations: cpu/elementwise.cpp, kernels/elementwise.cu.
#pragma once
#include "core/tensor.h"

namespace engine {

enum class BinaryOp { Add, Sub, Mul };

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor scale(const Tensor& x, float factor);

// The dispatch level (core/ops/README.md): outputs made by the caller, shapes checked by it.
namespace raw {
// y = value, for any dtype (for I32 the value is converted; for U8 saturated, saturate_u8).
void fill(Tensor& y, float value);
// y = a (op) b, elementwise, same shapes.
void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y);
// y = alpha * x + beta * y (scale when beta = 0, accumulate when beta = 1).
void axpby(float alpha, const Tensor& x, float beta, Tensor& y);
}  // namespace raw

namespace cpu {
void fill(Tensor& y, float value);
void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y);
void axpby(float alpha, const Tensor& x, float beta, Tensor& y);
}  // namespace cpu

namespace cuda {
void fill(Tensor& y, float value);
void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y);
void axpby(float alpha, const Tensor& x, float beta, Tensor& y);
}  // namespace cuda

}  // namespace engine
