// Optimizers (core/ops/optimizers.h) as one kernel over a model's whole flat parameter buffer:
// one launch updates every parameter of every layer (nn/parameters.h keeps them in one buffer
// for this). Also the step counter's increment, which Adam and dropout read on the device.
//
// Napkin math, Adam on the seed-000 small model: 101,770 parameters; reads p, g, m, v and
// writes p, m, v: 28 bytes each, 2.8 MB per step, ~1 us at 3 TB/s; ~12 flops per parameter
// (a sqrt and a divide among them): memory-bound. Wide model: 1.8 M parameters, 50 MB, ~17 us.
// The step number is read on the device (a CUDA graph replays the same launch every step),
// and the bias correction is computed once per block in double, like cpu/optimizers.cpp.
#include <cmath>

#include "core/ops/optimizers.h"
#include "kernels/launch.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;

__global__ void adam_kernel(float* __restrict__ p, const float* __restrict__ g,
                            float* __restrict__ m1, float* __restrict__ m2, int64_t n,
                            AdamConfig c, const int32_t* __restrict__ step) {
  __shared__ float lr_t;
  if (threadIdx.x == 0) lr_t = static_cast<float>(adam_step_size(c, int64_t{*step} + 1));
  __syncthreads();  // lr_t is set before any thread uses it
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    float pi = p[i], m = m1[i], v = m2[i];
    adam_apply(pi, m, v, g[i], c, lr_t);
    m1[i] = m;
    m2[i] = v;
    p[i] = pi;
  }
}

__global__ void sgd_kernel(float* __restrict__ p, const float* __restrict__ g,
                           float* __restrict__ velocity, int64_t n, float lr, float momentum) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    if (velocity) {
      const float v = momentum * velocity[i] - lr * g[i];
      velocity[i] = v;
      p[i] += v;
    } else {
      p[i] -= lr * g[i];
    }
  }
}

// RMSprop (Keras): s = rho s + (1 - rho) g^2; p -= lr g / (sqrt(s) + eps). Reads p, g, s and
// writes p, s: 20 bytes a parameter (seed 004's dogs-vs-cats CNN, 1.2 M parameters: 24 MB, ~8
// us at 3 TB/s).
__global__ void rmsprop_kernel(float* __restrict__ p, const float* __restrict__ g,
                               float* __restrict__ mean_square, int64_t n, float lr, float rho,
                               float epsilon) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float gi = g[i];
    const float s = rho * mean_square[i] + (1.0f - rho) * gi * gi;
    mean_square[i] = s;
    p[i] -= lr * gi / (sqrtf(s) + epsilon);
  }
}

// Adadelta (Keras): s = rho s + (1 - rho) g^2; d = sqrt(u + eps) / sqrt(s + eps) g;
// u = rho u + (1 - rho) d^2; p -= lr d. 28 bytes a parameter (the Keras MNIST CNN, 1.2 M
// parameters: 34 MB, ~11 us at 3 TB/s).
__global__ void adadelta_kernel(float* __restrict__ p, const float* __restrict__ g,
                                float* __restrict__ mean_square, float* __restrict__ mean_square_delta,
                                int64_t n, float lr, float rho, float epsilon) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float gi = g[i];
    const float s = rho * mean_square[i] + (1.0f - rho) * gi * gi;
    const float u = mean_square_delta[i];
    const float d = sqrtf(u + epsilon) / sqrtf(s + epsilon) * gi;
    mean_square[i] = s;
    mean_square_delta[i] = rho * u + (1.0f - rho) * d * d;
    p[i] -= lr * d;
  }
}

// counter[0] += 1, on the device: a replayed CUDA graph counts its steps without the host.
__global__ void increment_kernel(int32_t* counter) { counter[0] += 1; }

}  // namespace

void rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square, float lr, float rho,
                    float epsilon) {
  const int64_t n = param.numel();
  if (n == 0) return;
  rmsprop_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
      param.data<float>(), grad.data<float>(), mean_square.data<float>(), n, lr, rho, epsilon);
  CHECK_LAUNCH();
}

void adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                     Tensor& mean_square_delta, float lr, float rho, float epsilon) {
  const int64_t n = param.numel();
  if (n == 0) return;
  adadelta_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
      param.data<float>(), grad.data<float>(), mean_square.data<float>(),
      mean_square_delta.data<float>(), n, lr, rho, epsilon);
  CHECK_LAUNCH();
}

void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& config,
                 const Tensor& step) {
  const int64_t n = param.numel();
  if (n == 0) return;
  adam_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
      param.data<float>(), grad.data<float>(), m.data<float>(), v.data<float>(), n, config,
      step.data<int32_t>());
  CHECK_LAUNCH();
}

void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr, float momentum) {
  const int64_t n = param.numel();
  if (n == 0) return;
  sgd_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
      param.data<float>(), grad.data<float>(),
      momentum != 0.0f ? velocity.data<float>() : nullptr, n, lr, momentum);
  CHECK_LAUNCH();
}

void increment(Tensor& counter) {
  increment_kernel<<<1, 1, 0, stream()>>>(counter.data<int32_t>());
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
