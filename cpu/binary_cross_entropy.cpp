// Binary cross-entropy on probabilities, written as Keras 2 writes it:
//   p' = clip(p, eps, 1 - eps);  loss = -(t log(p' + eps) + (1 - t) log(1 - p' + eps))
// The clip passes no gradient outside [eps, 1 - eps], as tf.clip_by_value does.
// And fused with the sigmoid, from the logits z, in the stable form
// (core/ops/binary_cross_entropy.h):
//   loss = max(z, 0) - z t + log1p(exp(-|z|)),   dz = dloss (sigmoid(z) - t).
#include "core/ops/binary_cross_entropy.h"

#include <cmath>

#include "cpu/cpu_device.h"

namespace engine::cpu {
namespace {
constexpr float EPS = 1e-7f;  // Keras' backend.epsilon()

// 1 / (1 + exp(-z)) without overflow: exp is only taken of a non-positive number.
float stable_sigmoid(float z) {
  if (z >= 0.0f) return 1.0f / (1.0f + std::exp(-z));
  const float e = std::exp(z);
  return e / (1.0f + e);
}
}  // namespace

void binary_cross_entropy_forward(const Tensor& p, const Tensor& target, Tensor& loss) {
  const int64_t n = loss.numel();
  const float* prob = p.data<float>();
  const float* t = target.data<float>();
  float* out = loss.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float pc = std::fmin(std::fmax(prob[i], EPS), 1.0f - EPS);
    out[i] = -(t[i] * std::log(pc + EPS) + (1.0f - t[i]) * std::log(1.0f - pc + EPS));
  }
}

void binary_cross_entropy_backward(const Tensor& p, const Tensor& target, const Tensor& dloss,
                                   Tensor& dp) {
  const int64_t n = dp.numel();
  const float* prob = p.data<float>();
  const float* t = target.data<float>();
  const float* g = dloss.data<float>();
  float* out = dp.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const bool clipped = prob[i] < EPS || prob[i] > 1.0f - EPS;
    out[i] = clipped ? 0.0f
                     : -g[i] * (t[i] / (prob[i] + EPS) - (1.0f - t[i]) / (1.0f - prob[i] + EPS));
  }
}

void sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& target, Tensor& loss) {
  const int64_t n = loss.numel();
  const float* z = logits.data<float>();
  const float* t = target.data<float>();
  float* out = loss.data<float>();
  for (int64_t i = 0; i < n; ++i) {  // one value per sample: no thread team pays off
    out[i] = std::fmax(z[i], 0.0f) - z[i] * t[i] + std::log1p(std::exp(-std::fabs(z[i])));
  }
}

void sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& target, const Tensor& dloss,
                                    Tensor& dlogits) {
  const int64_t n = dlogits.numel();
  const float* z = logits.data<float>();
  const float* t = target.data<float>();
  const float* g = dloss.data<float>();
  float* out = dlogits.data<float>();
  for (int64_t i = 0; i < n; ++i) out[i] = g[i] * (stable_sigmoid(z[i]) - t[i]);
}

}  // namespace engine::cpu
