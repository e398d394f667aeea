// elementwise_jvp: out[k, i] = d(y[i]) * t[k, i] for K stacked directions, d = act'(through
// the output y) or y itself (Activation::None, a product's rule). The forward-mode rule of
// tanh, relu, sigmoid and mul, and, their Jacobians being diagonal, the batched reverse rule.
//
// Napkin math, the seed-001 MLP's hidden layer at val=1000: y is (1000, 20) = 20k floats.
//   per-sample forward mode, K = 1: reads y and t, writes out: 240 KB, ~0.1 us at 3 TB/s:
//   launch-bound (~3 us), which is why d is computed inside the kernel rather than by a
//   separate activation_backward pass over a ones tensor.
//   dense reverse mode at the default --memory-limit, ~450 directions per chunk (400,000 in
//   896 chunks: docs/results/jacobian.md): 9M elements, 107 MB, ~36 us: memory-bound at 1 flop
//   per 12 bytes. d(y[i]) is computed once per element of y and reused for the directions a
//   thread walks through.
// Grid: x covers y's elements (coalesced along i), y covers the directions.
#include <algorithm>

#include "core/ops/elementwise_jvp.h"
#include "kernels/launch.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;
constexpr unsigned MAX_GRID_Y = 65535;

template <Activation ACT>
__device__ __forceinline__ float derivative(float y) {
  if constexpr (ACT == Activation::Relu) return y > 0.0f ? 1.0f : 0.0f;
  if constexpr (ACT == Activation::Tanh) return 1.0f - y * y;
  if constexpr (ACT == Activation::Sigmoid) return y * (1.0f - y);
  return y;  // None: multiply by y itself
}

// y: (n,); t, out: (K, n). out may be t, so neither is __restrict__: each element is read
// and then written by the same thread.
template <Activation ACT>
__global__ void elementwise_jvp_kernel(const float* __restrict__ y, const float* t, float* out,
                                       int64_t n, int64_t K) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float d = derivative<ACT>(y[i]);
    for (int64_t k = blockIdx.y; k < K; k += gridDim.y) out[k * n + i] = d * t[k * n + i];
  }
}

}  // namespace

void elementwise_jvp(Activation act, const Tensor& y, const Tensor& t, Tensor& out) {
  const int64_t n = y.numel();
  if (n == 0 || out.numel() == 0) return;
  const int64_t K = out.numel() / n;
  const unsigned grid_x = blocks_for(n, THREADS);
  // Enough blocks in y to give every SM a few, once x alone does not.
  const int64_t wanted_y = (4 * int64_t{multiprocessor_count()} + grid_x - 1) / grid_x;
  const dim3 grid(grid_x, static_cast<unsigned>(std::min<int64_t>({K, wanted_y, MAX_GRID_Y})));
  const float* yv = y.data<float>();
  const float* tv = t.data<float>();
  float* ov = out.data<float>();
  switch (act) {
    case Activation::Relu:
      elementwise_jvp_kernel<Activation::Relu><<<grid, THREADS, 0, stream()>>>(yv, tv, ov, n, K);
      break;
    case Activation::Tanh:
      elementwise_jvp_kernel<Activation::Tanh><<<grid, THREADS, 0, stream()>>>(yv, tv, ov, n, K);
      break;
    case Activation::Sigmoid:
      elementwise_jvp_kernel<Activation::Sigmoid><<<grid, THREADS, 0, stream()>>>(yv, tv, ov, n, K);
      break;
    case Activation::None:
      elementwise_jvp_kernel<Activation::None><<<grid, THREADS, 0, stream()>>>(yv, tv, ov, n, K);
      break;
    case Activation::Softmax:
      throw Error("elementwise_jvp: softmax is not elementwise");
  }
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
