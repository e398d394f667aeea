#include "nn/optimizers.h"

#include "core/backend.h"
#include "core/error.h"

namespace engine::nn {
namespace {

// Lazily creates a zeroed state buffer shaped like the parameters.
void ensure_state(Tensor& state, const ParameterStore& store) {
  if (!state.defined() || state.numel() != store.count() ||
      state.device() != store.values.device()) {
    state = Tensor::zeros(store.values.shape(), DType::F32, store.values.device());
  }
}

}  // namespace

SGD::SGD(float learning_rate, float momentum) : learning_rate_(learning_rate), momentum_(momentum) {
  ENGINE_CHECK(learning_rate > 0.0f, "SGD: learning rate must be positive, got ", learning_rate);
  ENGINE_CHECK(momentum >= 0.0f && momentum < 1.0f, "SGD: momentum must be in [0, 1), got ",
               momentum);
}

void SGD::step(ParameterStore& store, const Tensor&) {
  if (momentum_ != 0.0f) ensure_state(velocity_, store);
  store.values.backend().sgd_update(store.values, store.grads, velocity_, learning_rate_,
                                    momentum_);
}

Adam::Adam(float learning_rate, float beta1, float beta2, float epsilon)
    : config_{learning_rate, beta1, beta2, epsilon} {
  ENGINE_CHECK(learning_rate > 0.0f, "Adam: learning rate must be positive, got ", learning_rate);
  ENGINE_CHECK(beta1 >= 0.0f && beta1 < 1.0f && beta2 >= 0.0f && beta2 < 1.0f,
               "Adam: betas must be in [0, 1)");
  ENGINE_CHECK(epsilon > 0.0f, "Adam: epsilon must be positive");
}

void Adam::step(ParameterStore& store, const Tensor& step) {
  ensure_state(m_, store);
  ensure_state(v_, store);
  store.values.backend().adam_update(store.values, store.grads, m_, v_, config_, step);
}

}  // namespace engine::nn
