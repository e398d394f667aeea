#include "nn/optimizers.h"

#include "core/device_services.h"
#include "core/ops.h"
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

void check_learning_rate(const char* optimizer, float learning_rate) {
  // Written so that a NaN learning rate fails too.
  ENGINE_CHECK(learning_rate > 0.0f, optimizer, ": learning rate must be positive, got ",
               learning_rate);
}

}  // namespace

SGD::SGD(float learning_rate, float momentum) : learning_rate_(learning_rate), momentum_(momentum) {
  check_learning_rate("SGD", learning_rate);
  ENGINE_CHECK(momentum >= 0.0f && momentum < 1.0f, "SGD: momentum must be in [0, 1), got ",
               momentum);
}

void SGD::step(ParameterStore& store, const Tensor&) {
  if (momentum_ != 0.0f) ensure_state(velocity_, store);
  raw::sgd_update(store.values, store.grads, velocity_, learning_rate_,
                                    momentum_);
}

void SGD::set_learning_rate(float learning_rate) {
  check_learning_rate("SGD", learning_rate);
  learning_rate_ = learning_rate;
}

std::vector<std::pair<std::string, Tensor>> SGD::state(const ParameterStore& store) {
  if (momentum_ == 0.0f) return {};  // plain SGD keeps nothing between steps
  ensure_state(velocity_, store);
  return {{"velocity", velocity_}};
}

Adam::Adam(float learning_rate, float beta1, float beta2, float epsilon)
    : config_{learning_rate, beta1, beta2, epsilon} {
  check_learning_rate("Adam", learning_rate);
  ENGINE_CHECK(beta1 >= 0.0f && beta1 < 1.0f && beta2 >= 0.0f && beta2 < 1.0f,
               "Adam: betas must be in [0, 1)");
  ENGINE_CHECK(epsilon > 0.0f, "Adam: epsilon must be positive");
}

void Adam::step(ParameterStore& store, const Tensor& step) {
  ensure_state(m_, store);
  ensure_state(v_, store);
  raw::adam_update(store.values, store.grads, m_, v_, config_, step);
}

void Adam::set_learning_rate(float learning_rate) {
  check_learning_rate("Adam", learning_rate);
  config_.learning_rate = learning_rate;
}

// The step count of the bias correction is the model's step counter, saved beside these.
std::vector<std::pair<std::string, Tensor>> Adam::state(const ParameterStore& store) {
  ensure_state(m_, store);
  ensure_state(v_, store);
  return {{"m", m_}, {"v", v_}};
}

namespace {
void check_decay(const char* optimizer, float learning_rate, float rho, float epsilon) {
  check_learning_rate(optimizer, learning_rate);
  ENGINE_CHECK(rho >= 0.0f && rho < 1.0f, optimizer, ": rho must be in [0, 1), got ", rho);
  ENGINE_CHECK(epsilon > 0.0f, optimizer, ": epsilon must be positive, got ", epsilon);
}
}  // namespace

RMSprop::RMSprop(float learning_rate, float rho, float epsilon)
    : learning_rate_(learning_rate), rho_(rho), epsilon_(epsilon) {
  check_decay("RMSprop", learning_rate, rho, epsilon);
}

void RMSprop::step(ParameterStore& store, const Tensor&) {
  ensure_state(mean_square_, store);
  raw::rmsprop_update(store.values, store.grads, mean_square_, learning_rate_,
                                        rho_, epsilon_);
}

void RMSprop::set_learning_rate(float learning_rate) {
  check_learning_rate("RMSprop", learning_rate);
  learning_rate_ = learning_rate;
}

std::vector<std::pair<std::string, Tensor>> RMSprop::state(const ParameterStore& store) {
  ensure_state(mean_square_, store);
  return {{"mean_square", mean_square_}};
}

Adadelta::Adadelta(float learning_rate, float rho, float epsilon)
    : learning_rate_(learning_rate), rho_(rho), epsilon_(epsilon) {
  check_decay("Adadelta", learning_rate, rho, epsilon);
}

void Adadelta::step(ParameterStore& store, const Tensor&) {
  ensure_state(mean_square_, store);
  ensure_state(mean_square_delta_, store);
  raw::adadelta_update(store.values, store.grads, mean_square_,
                                         mean_square_delta_, learning_rate_, rho_, epsilon_);
}

void Adadelta::set_learning_rate(float learning_rate) {
  check_learning_rate("Adadelta", learning_rate);
  learning_rate_ = learning_rate;
}

std::vector<std::pair<std::string, Tensor>> Adadelta::state(const ParameterStore& store) {
  ensure_state(mean_square_, store);
  ensure_state(mean_square_delta_, store);
  return {{"mean_square", mean_square_}, {"mean_square_delta", mean_square_delta_}};
}

}  // namespace engine::nn
