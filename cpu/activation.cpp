// relu, tanh, sigmoid and their gradients, from the forward output y.
#include <cmath>

#include "core/error.h"
#include "cpu/cpu_backend.h"

namespace engine::cpu {

void CpuBackend::activation_forward(Activation act, const Tensor& x, Tensor& y) {
  const int64_t n = y.numel();
  const float* in = x.data<float>();
  float* out = y.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
  switch (act) {
    case Activation::Relu:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
      break;
    case Activation::Tanh:
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(in[i]);
      break;
    case Activation::Sigmoid:
      // 1 / (1 + e^-x) overflows e^-x for x < -88 to inf, which still gives the right 0.
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = 1.0f / (1.0f + std::exp(-in[i]));
      break;
    case Activation::None:
    case Activation::Softmax:
      throw Error("activation_forward: not an elementwise activation");
  }
}

void CpuBackend::activation_backward(Activation act, const Tensor& y, const Tensor& dy,
                                     Tensor& dx) {
  const int64_t n = dx.numel();
  const float* out = y.data<float>();
  const float* g = dy.data<float>();
  float* dg = dx.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
  switch (act) {
    case Activation::Relu:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) dg[i] = out[i] > 0.0f ? g[i] : 0.0f;
      break;
    case Activation::Tanh:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) dg[i] = g[i] * (1.0f - out[i] * out[i]);
      break;
    case Activation::Sigmoid:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) dg[i] = g[i] * out[i] * (1.0f - out[i]);
      break;
    case Activation::None:
    case Activation::Softmax:
      throw Error("activation_backward: not an elementwise activation");
  }
}

}  // namespace engine::cpu
