#include "nn/layers.h"

#include "core/error.h"
#include "core/ops.h"

namespace engine::nn {

Shape Flatten::build(const Shape& input_shape) { return {engine::numel(input_shape)}; }

Tensor Flatten::forward(const Tensor& x, ForwardContext&) { return engine::flatten(x); }

Dense::Dense(int64_t units, Activation activation) : units_(units), activation_(activation) {
  ENGINE_CHECK(units >= 1, "Dense: units must be at least 1, got ", units);
}

Shape Dense::build(const Shape& input_shape) {
  ENGINE_CHECK(input_shape.size() == 1, "Dense expects a flat input (add Flatten first), got ",
               to_string(input_shape));
  inputs_ = input_shape[0];
  return {units_};
}

std::vector<ParamSpec> Dense::param_specs() const {
  return {{"kernel", {inputs_, units_}, Init::GlorotUniform, inputs_, units_},
          {"bias", {units_}, Init::Zeros, 0, 0}};
}

void Dense::bind_parameters(const std::vector<Tensor>& params) {
  kernel_ = params.at(0);
  bias_ = params.at(1);
}

Tensor Dense::forward(const Tensor& x, ForwardContext& ctx) {
  ENGINE_CHECK(kernel_.defined(), "Dense '", name(), "' used before the model was built");
  const Tensor z = matmul(x, kernel_);
  if (ctx.skip_activation) return add_bias(z, bias_);
  // Softmax spans a row, so it cannot join the elementwise epilogue.
  if (activation_ == Activation::Softmax) return engine::softmax(add_bias(z, bias_));
  return bias_activation(z, bias_, activation_);
}

Dropout::Dropout(float rate) : rate_(rate) {
  ENGINE_CHECK(rate >= 0.0f && rate < 1.0f, "Dropout: rate must be in [0, 1), got ", rate);
}

Tensor Dropout::forward(const Tensor& x, ForwardContext& ctx) {
  if (!ctx.training) return x;
  ENGINE_CHECK(ctx.step.defined(), "Dropout: training without a step counter");
  const DropoutStream stream{derive_seed(ctx.dropout_seed, static_cast<uint64_t>(ctx.dropout_calls++)),
                             ctx.step};
  return engine::dropout(x, rate_, true, stream);
}

std::shared_ptr<Layer> flatten() { return std::make_shared<Flatten>(); }
std::shared_ptr<Layer> dense(int64_t units, Activation activation) {
  return std::make_shared<Dense>(units, activation);
}
std::shared_ptr<Layer> dropout(float rate) { return std::make_shared<Dropout>(rate); }

}  // namespace engine::nn
