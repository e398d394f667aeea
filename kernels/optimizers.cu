// Optimizers (core/ops/optimizers.h) as one kernel over a model's whole flat parameter buffer:
// one launch updates every parameter of every layer (nn/parameters.h keeps them in one buffer
// for this). Also the step counter's increment, which Adam and dropout read on the device.
//
// Napkin math, Adam on the seed-000 small model: 101,770 parameters; reads p, g, m, v and
// writes p, m, v: 28 bytes each, 2.8 MB per step, ~1 us at 3 TB/s; ~12 flops per parameter
// (a sqrt and a divide among them): memory-bound. Wide model: 1.8 M parameters, 50 MB, ~17 us.
// The step number is read on the device (a CUDA graph replays the same launch every step),
// and the bias correction is computed once per block in double, like cpu/optimizers.cpp.
//
// Each thread updates 4 consecutive parameters at a time (16-byte loads and stores) where the
// buffers are 16-byte aligned, over a grid of at most 8 blocks an SM (grid-stride). One
// parameter a thread and a block per 256 of them kept too few bytes in flight, and each of
// five waves of blocks first waited for its thread 0's double-precision step size (Adam):
// CIFAR's Adam (1.34 M parameters, 37 MB, ~9 us at 4 TB/s) took 27 us, now 14 (ncu, H200).
#include <cmath>
#include <initializer_list>
#include <type_traits>

#include "core/ops/optimizers.h"
#include "kernels/launch.h"
#include "kernels/vector_io.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;
constexpr int BLOCKS_PER_SM = 8;  // 2,048 threads an SM

// Calls update(width, i) for parameters i .. i + width - 1, grid-stride in groups of W (the
// kernel's width), then for the n % W left over at the end one at a time.
template <int W, class Update>
__device__ __forceinline__ void for_each_group(int64_t n, const Update& update) {
  const int64_t groups = n / W;
  for (int64_t i = grid_first<int64_t>(); i < groups; i += grid_step<int64_t>())
    update(std::integral_constant<int, W>{}, i * W);
  if constexpr (W > 1) {
    const int64_t rest = groups * W + grid_first<int64_t>();
    if (rest < n) update(std::integral_constant<int, 1>{}, rest);
  }
}

template <int W>
__global__ void adam_kernel(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m1,
                            float* __restrict__ m2, int64_t n, AdamConfig c, const int32_t* __restrict__ step) {
  __shared__ float lr_t;
  if (threadIdx.x == 0) lr_t = static_cast<float>(adam_step_size(c, int64_t{*step} + 1));
  __syncthreads();  // lr_t is set before any thread uses it
  for_each_group<W>(n, [&](auto width, int64_t i) {
    constexpr int V = decltype(width)::value;
    float pi[V], gi[V], m[V], v[V];
    load_floats<V>(p + i, pi);
    load_floats<V>(g + i, gi);
    load_floats<V>(m1 + i, m);
    load_floats<V>(m2 + i, v);
#pragma unroll
    for (int l = 0; l < V; ++l) adam_apply(pi[l], m[l], v[l], gi[l], c, lr_t);
    store_floats<V>(m1 + i, m);
    store_floats<V>(m2 + i, v);
    store_floats<V>(p + i, pi);
  });
}

template <int W>
__global__ void sgd_kernel(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ velocity,
                           int64_t n, float lr, float momentum) {
  for_each_group<W>(n, [&](auto width, int64_t i) {
    constexpr int V = decltype(width)::value;
    float pi[V], gi[V], v[V];
    load_floats<V>(p + i, pi);
    load_floats<V>(g + i, gi);
    if (velocity) {
      load_floats<V>(velocity + i, v);
#pragma unroll
      for (int l = 0; l < V; ++l) {
        v[l] = momentum * v[l] - lr * gi[l];
        pi[l] += v[l];
      }
      store_floats<V>(velocity + i, v);
    } else {
#pragma unroll
      for (int l = 0; l < V; ++l) pi[l] -= lr * gi[l];
    }
    store_floats<V>(p + i, pi);
  });
}

// RMSprop (Keras): s = rho s + (1 - rho) g^2; p -= lr g / (sqrt(s) + eps). Reads p, g, s and
// writes p, s: 20 bytes a parameter (seed 004's dogs-vs-cats CNN, 1.2 M parameters: 24 MB, ~6
// us at 4 TB/s).
template <int W>
__global__ void rmsprop_kernel(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ mean_square,
                               int64_t n, float lr, float rho, float epsilon) {
  for_each_group<W>(n, [&](auto width, int64_t i) {
    constexpr int V = decltype(width)::value;
    float pi[V], gi[V], s[V];
    load_floats<V>(p + i, pi);
    load_floats<V>(g + i, gi);
    load_floats<V>(mean_square + i, s);
#pragma unroll
    for (int l = 0; l < V; ++l) {
      s[l] = rho * s[l] + (1.0f - rho) * gi[l] * gi[l];
      pi[l] -= lr * gi[l] / (sqrtf(s[l]) + epsilon);
    }
    store_floats<V>(mean_square + i, s);
    store_floats<V>(p + i, pi);
  });
}

// Adadelta (Keras): s = rho s + (1 - rho) g^2; d = sqrt(u + eps) / sqrt(s + eps) g;
// u = rho u + (1 - rho) d^2; p -= lr d. 28 bytes a parameter (the Keras MNIST CNN, 1.2 M
// parameters: 34 MB, ~9 us at 4 TB/s).
template <int W>
__global__ void adadelta_kernel(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ mean_square,
                                float* __restrict__ mean_square_delta, int64_t n, float lr, float rho, float epsilon) {
  for_each_group<W>(n, [&](auto width, int64_t i) {
    constexpr int V = decltype(width)::value;
    float pi[V], gi[V], s[V], u[V];
    load_floats<V>(p + i, pi);
    load_floats<V>(g + i, gi);
    load_floats<V>(mean_square + i, s);
    load_floats<V>(mean_square_delta + i, u);
#pragma unroll
    for (int l = 0; l < V; ++l) {
      s[l] = rho * s[l] + (1.0f - rho) * gi[l] * gi[l];
      const float d = sqrtf(u[l] + epsilon) / sqrtf(s[l] + epsilon) * gi[l];
      u[l] = rho * u[l] + (1.0f - rho) * d * d;
      pi[l] -= lr * d;
    }
    store_floats<V>(mean_square + i, s);
    store_floats<V>(mean_square_delta + i, u);
    store_floats<V>(p + i, pi);
  });
}

// Launches an optimizer over n parameters: launch(width, blocks) with width 4 when every
// buffer is 16-byte aligned (null ones, as SGD's absent velocity, do not count), else 1.
template <class Launch>
void launch_update(int64_t n, std::initializer_list<const float*> buffers, const Launch& launch) {
  bool vec = true;
  for (const float* b : buffers) vec = vec && aligned16(b);
  const int64_t cap = int64_t{BLOCKS_PER_SM} * multiprocessor_count();
  if (vec) {
    launch(std::integral_constant<int, 4>{}, blocks_for((n + 3) / 4, THREADS, cap));
  } else {
    launch(std::integral_constant<int, 1>{}, blocks_for(n, THREADS, cap));
  }
}

// counter[0] += 1, on the device: a replayed CUDA graph counts its steps without the host.
__global__ void increment_kernel(int32_t* counter) { counter[0] += 1; }

}  // namespace

void rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square, float lr, float rho,
                    float epsilon) {
  const int64_t n = param.numel();
  if (n == 0) return;
  float* const p = param.data<float>();
  const float* const g = grad.data<float>();
  float* const s = mean_square.data<float>();
  launch_update(n, {p, g, s}, [&](auto width, unsigned blocks) {
    rmsprop_kernel<decltype(width)::value><<<blocks, THREADS, 0, stream()>>>(p, g, s, n, lr, rho, epsilon);
  });
  CHECK_LAUNCH();
}

void adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                     Tensor& mean_square_delta, float lr, float rho, float epsilon) {
  const int64_t n = param.numel();
  if (n == 0) return;
  float* const p = param.data<float>();
  const float* const g = grad.data<float>();
  float* const s = mean_square.data<float>();
  float* const u = mean_square_delta.data<float>();
  launch_update(n, {p, g, s, u}, [&](auto width, unsigned blocks) {
    adadelta_kernel<decltype(width)::value><<<blocks, THREADS, 0, stream()>>>(p, g, s, u, n, lr, rho, epsilon);
  });
  CHECK_LAUNCH();
}

void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& config,
                 const Tensor& step) {
  const int64_t n = param.numel();
  if (n == 0) return;
  float* const p = param.data<float>();
  const float* const g = grad.data<float>();
  float* const m1 = m.data<float>();
  float* const m2 = v.data<float>();
  launch_update(n, {p, g, m1, m2}, [&](auto width, unsigned blocks) {
    adam_kernel<decltype(width)::value><<<blocks, THREADS, 0, stream()>>>(p, g, m1, m2, n, config,
                                                                         step.data<int32_t>());
  });
  CHECK_LAUNCH();
}

void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr, float momentum) {
  const int64_t n = param.numel();
  if (n == 0) return;
  float* const p = param.data<float>();
  const float* const g = grad.data<float>();
  float* const vel = momentum != 0.0f ? velocity.data<float>() : nullptr;
  launch_update(n, {p, g, vel}, [&](auto width, unsigned blocks) {
    sgd_kernel<decltype(width)::value><<<blocks, THREADS, 0, stream()>>>(p, g, vel, n, lr, momentum);
  });
  CHECK_LAUNCH();
}

void increment(Tensor& counter) {
  increment_kernel<<<1, 1, 0, stream()>>>(counter.data<int32_t>());
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
