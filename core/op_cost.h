// What one op call costs, worked out from its shapes: the FLOPs and bytes that --profile divides
// by the measured time (core/profiler.h). Each op's dispatch function (core/ops/<family>.cpp)
// describes its calls with these.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "core/conv_geometry.h"
#include "core/tensor.h"

namespace engine {

// FLOPs and bytes of one op call: bytes are the tensors it reads and writes, each once (the
// least traffic the op can have); FLOPs count a multiply-add as 2.
struct OpCost {
  double flops = 0.0;
  double bytes = 0.0;
};

// (m x k) @ (k x n): 2mnk FLOPs; A, B and C once each.
OpCost matmul_cost(int64_t m, int64_t n, int64_t k, size_t element_bytes = 4);
// Any one of the three passes of a convolution (forward, backward data, backward filter):
// the same implicit GEMM of 2 * (batch*out_h*out_w) * out_c * (kh*kw*in_c) FLOPs; bytes are
// x, w and y once each.
OpCost conv2d_cost(const Conv2dGeometry& g);
// An elementwise op over `elements` values: flops_per_element each, `tensors` arrays of that
// size touched (read or written) once.
OpCost elementwise_cost(int64_t elements, double flops_per_element, int tensors);

// Ops whose tensors differ in size (a bias, a row of labels): FLOPs per element of `shape_of`,
// bytes of the listed tensors. Ops over equal-sized arrays use elementwise_cost.
OpCost mixed_cost(const Tensor& shape_of, double flops_per_element,
                  std::initializer_list<const Tensor*> tensors);
// The bytes of the listed tensors (undefined ones count 0).
double tensor_bytes(std::initializer_list<const Tensor*> tensors);

// A tensor's sizes as a profile row shows them: "32x784"; "scalar" for shape ().
std::string dims(const Tensor& t);
// A convolution's sizes: "32x32x32x3 * 3x3x32".
std::string conv_shape(const Conv2dGeometry& g);

// A number with an SI prefix and a unit: "1.23 MB", "51.60 TFLOP/s", "12 B".
std::string si(double value, const char* unit);

}  // namespace engine
