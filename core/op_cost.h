// What one op call costs, worked out from its shapes: the FLOPs and bytes that --profile divides
// by the measured time (core/profiler.h). core/forwarding_backend.cpp gives every op its cost.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/conv_geometry.h"

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

// A number with an SI prefix and a unit: "1.23 MB", "51.60 TFLOP/s", "12 B".
std::string si(double value, const char* unit);

}  // namespace engine
