// Optimizer updates over a model's whole flat parameter buffer in one pass (one loop here,
// one kernel launch on the GPU). Memory-bound: Adam reads p, g, m, v and writes p, m, v,
// 28 bytes per parameter; 101,770 parameters are 2.8 MB per step. RMSprop moves 20 bytes per
// parameter, Adadelta 28 (seed 004's MNIST CNN, 1,199,882 parameters: 34 MB, ~3 ms on one
// core, well under a millisecond on a socket).
#include "core/ops/optimizers.h"

#include <cmath>

#include "cpu/cpu_device.h"
#include "cpu/simd.h"

namespace engine::cpu {

void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr, float momentum) {
  const int64_t n = param.numel();
  float* p = param.data<float>();
  const float* g = grad.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
  if (momentum == 0.0f) {
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
    for (int64_t i = 0; i < n; ++i) p[i] -= lr * g[i];
    return;
  }
  float* v = velocity.data<float>();
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    v[i] = momentum * v[i] - lr * g[i];
    p[i] += v[i];
  }
}

namespace {

ENGINE_VECTOR_CLONES
void adam_loop(float* p, const float* g, float* m1, float* m2, int64_t n, AdamConfig s,
               float lr_t) {
  const int team = team_size(n, PARALLEL_GRAIN);
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) adam_apply(p[i], m1[i], m2[i], g[i], s, lr_t);
}

}  // namespace

void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamConfig& config,
                 const Tensor& step) {
  const int64_t t = static_cast<int64_t>(step.data<int32_t>()[0]) + 1;
  adam_loop(param.data<float>(), grad.data<float>(), m.data<float>(), v.data<float>(),
            param.numel(), config, static_cast<float>(adam_step_size(config, t)));
}

namespace {

ENGINE_VECTOR_CLONES
void rmsprop_loop(float* p, const float* g, float* s, int64_t n, float lr, float rho, float eps) {
  const int team = team_size(n, PARALLEL_GRAIN);
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    s[i] = rho * s[i] + (1.0f - rho) * g[i] * g[i];
    p[i] -= lr * g[i] / (std::sqrt(s[i]) + eps);
  }
}

ENGINE_VECTOR_CLONES
void adadelta_loop(float* p, const float* g, float* s, float* u, int64_t n, float lr, float rho,
                   float eps) {
  const int team = team_size(n, PARALLEL_GRAIN);
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    s[i] = rho * s[i] + (1.0f - rho) * g[i] * g[i];
    const float d = std::sqrt(u[i] + eps) / std::sqrt(s[i] + eps) * g[i];
    u[i] = rho * u[i] + (1.0f - rho) * d * d;
    p[i] -= lr * d;
  }
}

}  // namespace

void rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square, float lr, float rho,
                    float epsilon) {
  rmsprop_loop(param.data<float>(), grad.data<float>(), mean_square.data<float>(), param.numel(),
               lr, rho, epsilon);
}

void adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                     Tensor& mean_square_delta, float lr, float rho, float epsilon) {
  adadelta_loop(param.data<float>(), grad.data<float>(), mean_square.data<float>(),
                mean_square_delta.data<float>(), param.numel(), lr, rho, epsilon);
}

void increment(Tensor& counter) { ++counter.data<int32_t>()[0]; }

}  // namespace engine::cpu
