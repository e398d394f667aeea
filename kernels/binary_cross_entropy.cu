// Binary cross-entropy on probabilities, as Keras 2 writes it (cpu/binary_cross_entropy.cpp
// is the reference): p' = clip(p, eps, 1 - eps), loss = -(t log(p' + eps) + (1 - t)
// log(1 - p' + eps)); the clip passes no gradient outside [eps, 1 - eps].
//
// sigmoid_cross_entropy_*: the same loss fused with the sigmoid, from the logits, in the stable
// form max(z, 0) - z t + log1p(exp(-|z|)) with gradient dloss (sigmoid(z) - t).
//
// Napkin math: n elements, 2 logs each; reads p and t, writes the loss: 12n bytes.
// For the Dogs-vs-Cats head (32, 1) it is one launch of 32 threads: launch-bound.
#include "core/ops/binary_cross_entropy.h"
#include "kernels/launch.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;
constexpr float EPS = 1e-7f;  // Keras' backend.epsilon()

__global__ void bce_forward_kernel(const float* __restrict__ p, const float* __restrict__ t,
                                   float* __restrict__ loss, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float pc = fminf(fmaxf(p[i], EPS), 1.0f - EPS);
    loss[i] = -(t[i] * logf(pc + EPS) + (1.0f - t[i]) * logf(1.0f - pc + EPS));
  }
}

__global__ void bce_backward_kernel(const float* __restrict__ p, const float* __restrict__ t,
                                    const float* __restrict__ dloss, float* __restrict__ dp,
                                    int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const bool clipped = p[i] < EPS || p[i] > 1.0f - EPS;
    dp[i] = clipped ? 0.0f : -dloss[i] * (t[i] / (p[i] + EPS) - (1.0f - t[i]) / (1.0f - p[i] + EPS));
  }
}

__global__ void sigmoid_ce_forward_kernel(const float* __restrict__ z, const float* __restrict__ t,
                                          float* __restrict__ loss, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    loss[i] = fmaxf(z[i], 0.0f) - z[i] * t[i] + log1pf(expf(-fabsf(z[i])));
  }
}

__global__ void sigmoid_ce_backward_kernel(const float* __restrict__ z,
                                           const float* __restrict__ t,
                                           const float* __restrict__ dloss,
                                           float* __restrict__ dz, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    // exp of a non-positive number only: no overflow at either end.
    const float e = expf(-fabsf(z[i]));
    const float sigmoid = z[i] >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
    dz[i] = dloss[i] * (sigmoid - t[i]);
  }
}

}  // namespace

void sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& target, Tensor& loss) {
  const int64_t n = loss.numel();
  if (n == 0) return;
  sigmoid_ce_forward_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
      logits.data<float>(), target.data<float>(), loss.data<float>(), n);
  CHECK_LAUNCH();
}

void sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& target, const Tensor& dloss,
                                    Tensor& dlogits) {
  const int64_t n = dlogits.numel();
  if (n == 0) return;
  sigmoid_ce_backward_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
      logits.data<float>(), target.data<float>(), dloss.data<float>(), dlogits.data<float>(), n);
  CHECK_LAUNCH();
}

void binary_cross_entropy_forward(const Tensor& p, const Tensor& target, Tensor& loss) {
  const int64_t n = loss.numel();
  if (n == 0) return;
  bce_forward_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
      p.data<float>(), target.data<float>(), loss.data<float>(), n);
  CHECK_LAUNCH();
}

void binary_cross_entropy_backward(const Tensor& p, const Tensor& target, const Tensor& dloss,
                                   Tensor& dp) {
  const int64_t n = dp.numel();
  if (n == 0) return;
  bce_backward_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
      p.data<float>(), target.data<float>(), dloss.data<float>(), dp.data<float>(), n);
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
