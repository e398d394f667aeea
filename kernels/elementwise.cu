// Elementwise kernels: fill, binary add/sub/mul, axpby, broadcast of a device scalar, and the
// step counter's increment.
//
// Napkin math: an elementwise op over n floats moves 8n-12n bytes and does n flops, so it is
// memory-bound above ~100k elements (a 1M-element add: 12 MB, ~4 us at 3 TB/s) and
// launch-bound below (the seed models' tensors are 4k-32k elements: ~2-4 us of launch for
// ~0.05 us of memory traffic). Grid-stride loops keep one kernel correct for any n.
#include "kernels/cuda_backend.h"
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

// y[i] = scale * s[0]: the scalar is read on the device, so no host round trip.
__global__ void broadcast_scalar_kernel(const float* __restrict__ s, float scale,
                                        float* __restrict__ y, int64_t n) {
  const float value = s[0] * scale;
  GRID_STRIDE_LOOP(i, n) y[i] = value;
}

__global__ void increment_kernel(int32_t* counter) { counter[0] += 1; }

}  // namespace

void CudaBackend::fill(Tensor& y, float value) {
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

void CudaBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) {
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

void CudaBackend::axpby(float alpha, const Tensor& x, float beta, Tensor& y) {
  const int64_t n = y.numel();
  if (n == 0) return;
  axpby_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(alpha, x.data<float>(), beta,
                                                                 y.data<float>(), n);
  CHECK_LAUNCH();
}

void CudaBackend::broadcast_scalar(const Tensor& s, float scale, Tensor& y) {
  const int64_t n = y.numel();
  if (n == 0) return;
  broadcast_scalar_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
      s.data<float>(), scale, y.data<float>(), n);
  CHECK_LAUNCH();
}

void CudaBackend::increment(Tensor& counter) {
  increment_kernel<<<1, 1, 0, stream()>>>(counter.data<int32_t>());
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
