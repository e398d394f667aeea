// elementwise_jvp on the CPU: out[k, i] = d(y[i]) * t[k, i] for K stacked directions, the
// forward-mode (and batched reverse-mode) rule of relu, tanh, sigmoid and of a product.
// A memory-bound loop like the other elementwise ops (core/ops/elementwise_jvp.h has the contract).
#include "core/ops/elementwise_jvp.h"

#include "core/error.h"
#include "cpu/cpu_device.h"

namespace engine::cpu {
namespace {

// d(y) as a function object, so each loop below is one inlined, vectorisable expression.
struct ReluDerivative {
  float operator()(float y) const { return y > 0.0f ? 1.0f : 0.0f; }
};
struct TanhDerivative {
  float operator()(float y) const { return 1.0f - y * y; }
};
struct SigmoidDerivative {
  float operator()(float y) const { return y * (1.0f - y); }
};
struct Identity {
  float operator()(float y) const { return y; }
};

// K directions of n elements each. Many directions: each thread takes whole directions;
// few: the team splits each direction's elements. out may alias t: every element is read
// before it is written, by the same iteration.
template <typename D>
void scale_directions(const float* y, const float* t, float* out, int64_t n, int64_t K, D d) {
  const int team = team_size(n * K, PARALLEL_GRAIN);
  if (K >= team) {
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
    for (int64_t k = 0; k < K; ++k) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) out[k * n + i] = d(y[i]) * t[k * n + i];
    }
  } else {
    for (int64_t k = 0; k < K; ++k) {
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[k * n + i] = d(y[i]) * t[k * n + i];
    }
  }
}

}  // namespace

void elementwise_jvp(Activation act, const Tensor& y, const Tensor& t, Tensor& out) {
  const int64_t n = y.numel();
  if (n == 0 || out.numel() == 0) return;
  const int64_t K = out.numel() / n;
  const float* yv = y.data<float>();
  const float* tv = t.data<float>();
  float* ov = out.data<float>();
  switch (act) {
    case Activation::Relu: return scale_directions(yv, tv, ov, n, K, ReluDerivative{});
    case Activation::Tanh: return scale_directions(yv, tv, ov, n, K, TanhDerivative{});
    case Activation::Sigmoid: return scale_directions(yv, tv, ov, n, K, SigmoidDerivative{});
    case Activation::None: return scale_directions(yv, tv, ov, n, K, Identity{});
    case Activation::Softmax: break;
  }
  throw Error("elementwise_jvp: softmax is not elementwise");
}

}  // namespace engine::cpu
