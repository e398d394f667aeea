// Elementwise CPU ops: fill, binary ops, axpby.
// All are memory-bound loops; OpenMP splits them only above PARALLEL_GRAIN elements.
#include "core/ops/elementwise.h"

#include <cstring>

#include "cpu/cpu_device.h"

namespace engine::cpu {

void fill(Tensor& y, float value) {
  const int64_t n = y.numel();
  if (y.dtype() == DType::I32) {
    int32_t* out = y.data<int32_t>();
    const auto v = static_cast<int32_t>(value);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
    return;
  }
  if (y.dtype() == DType::U8) {
    if (n > 0) std::memset(y.data<uint8_t>(), saturate_u8(value), static_cast<size_t>(n));
    return;
  }
  float* out = y.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = value;
}

void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) {
  const int64_t n = y.numel();
  const float* x0 = a.data<float>();
  const float* x1 = b.data<float>();
  float* out = y.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
  switch (op) {
    case BinaryOp::Add:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = x0[i] + x1[i];
      break;
    case BinaryOp::Sub:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = x0[i] - x1[i];
      break;
    case BinaryOp::Mul:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = x0[i] * x1[i];
      break;
  }
}

void axpby(float alpha, const Tensor& x, float beta, Tensor& y) {
  const int64_t n = y.numel();
  const float* in = x.data<float>();
  float* out = y.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
  if (beta == 0.0f) {  // do not read y: it may hold uninitialised memory (even NaN)
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
    for (int64_t i = 0; i < n; ++i) out[i] = alpha * in[i];
  } else {
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
    for (int64_t i = 0; i < n; ++i) out[i] = alpha * in[i] + beta * out[i];
  }
}

}  // namespace engine::cpu
