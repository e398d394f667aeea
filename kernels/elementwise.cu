// Elementwise kernels (core/ops/elementwise.h): fill, binary add/sub/mul and axpby.
//
// Napkin math: an elementwise op over n floats moves 8n-12n bytes and does n flops, so it is
// memory-bound above ~100k elements (a 1M-element add: 12 MB, ~4 us at 3 TB/s) and
// launch-bound below (the seed models' tensors are 4k-32k elements: ~2-4 us of launch for
// ~0.05 us of memory traffic). Grid-stride loops keep one kernel correct for any n.
#include "core/ops/elementwise.h"
#include "kernels/launch.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;

#define GRID_STRIDE_LOOP(i, n)                                              \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); \
       i += int64_t{gridDim.x} * blockDim.x)

template <typename T>
__global__ void fill_kernel(T* __restrict__ y, T value, int64_t n) {
  GRID_STRIDE_LOOP(i, n) y[i] = value;
}

template <BinaryOp OP>
__global__ void binary_kernel(const float* __restrict__ a, const float* __restrict__ b,
                              float* __restrict__ y, int64_t n) {
  GRID_STRIDE_LOOP(i, n) {
    if constexpr (OP == BinaryOp::Add) y[i] = a[i] + b[i];
    if constexpr (OP == BinaryOp::Sub) y[i] = a[i] - b[i];
    if constexpr (OP == BinaryOp::Mul) y[i] = a[i] * b[i];
  }
}

// y may alias x (in-place scaling); beta == 0 never reads y, which may hold garbage or NaN.
__global__ void axpby_kernel(float alpha, const float* x, float beta, float* y, int64_t n) {
  GRID_STRIDE_LOOP(i, n) y[i] = beta == 0.0f ? alpha * x[i] : alpha * x[i] + beta * y[i];
}

}  // namespace

void fill(Tensor& y, float value) {
  const int64_t n = y.numel();
  if (n == 0) return;
  if (y.dtype() == DType::I32) {
    fill_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
        y.data<int32_t>(), static_cast<int32_t>(value), n);
  } else if (y.dtype() == DType::U8) {
    fill_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(y.data<uint8_t>(),
                                                                  saturate_u8(value), n);
  } else {
    fill_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(y.data<float>(), value, n);
  }
  CHECK_LAUNCH();
}

void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) {
  const int64_t n = y.numel();
  if (n == 0) return;
  const unsigned grid = blocks_for(n, THREADS);
  const float *pa = a.data<float>(), *pb = b.data<float>();
  float* py = y.data<float>();
  switch (op) {
    case BinaryOp::Add: binary_kernel<BinaryOp::Add><<<grid, THREADS, 0, stream()>>>(pa, pb, py, n); break;
    case BinaryOp::Sub: binary_kernel<BinaryOp::Sub><<<grid, THREADS, 0, stream()>>>(pa, pb, py, n); break;
    case BinaryOp::Mul: binary_kernel<BinaryOp::Mul><<<grid, THREADS, 0, stream()>>>(pa, pb, py, n); break;
  }
  CHECK_LAUNCH();
}

void axpby(float alpha, const Tensor& x, float beta, Tensor& y) {
  const int64_t n = y.numel();
  if (n == 0) return;
  axpby_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(alpha, x.data<float>(), beta,
                                                                 y.data<float>(), n);
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
