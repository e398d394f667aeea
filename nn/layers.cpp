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

Conv2D::Conv2D(int64_t filters, int64_t kernel, Padding padding, Activation activation,
               int64_t stride)
    : filters_(filters), kernel_size_(kernel), stride_(stride), padding_(padding),
      activation_(activation) {
  ENGINE_CHECK(filters >= 1, "Conv2D: filters must be at least 1, got ", filters);
  ENGINE_CHECK(kernel >= 1, "Conv2D: kernel size must be at least 1, got ", kernel);
  ENGINE_CHECK(stride >= 1, "Conv2D: stride must be at least 1, got ", stride);
}

Shape Conv2D::build(const Shape& input_shape) {
  ENGINE_CHECK(input_shape.size() == 3, "Conv2D expects (height, width, channels) inputs, got ",
               to_string(input_shape));
  in_channels_ = input_shape[2];
  const Conv2dGeometry g =
      conv2d_geometry({1, input_shape[0], input_shape[1], in_channels_},
                      {kernel_size_, kernel_size_, in_channels_, filters_}, stride_, stride_, padding_);
  return {g.out_h, g.out_w, filters_};
}

std::vector<ParamSpec> Conv2D::param_specs() const {
  const int64_t window = kernel_size_ * kernel_size_;
  return {{"kernel", {kernel_size_, kernel_size_, in_channels_, filters_}, Init::GlorotUniform,
           window * in_channels_, window * filters_},
          {"bias", {filters_}, Init::Zeros, 0, 0}};
}

void Conv2D::bind_parameters(const std::vector<Tensor>& params) {
  kernel_ = params.at(0);
  bias_ = params.at(1);
}

Tensor Conv2D::forward(const Tensor& x, ForwardContext& ctx) {
  ENGINE_CHECK(kernel_.defined(), "Conv2D '", name(), "' used before the model was built");
  const Tensor z = engine::conv2d(x, kernel_, stride_, padding_);
  const Shape shape = z.shape();
  // Bias and activation act on the last axis: the output as (N * out_h * out_w, filters) rows.
  const Tensor rows = reshape(z, {shape[0] * shape[1] * shape[2], filters_});
  const Activation act = ctx.skip_activation ? Activation::None : activation_;
  const Tensor y = act == Activation::Softmax ? engine::softmax(add_bias(rows, bias_))
                                              : bias_activation(rows, bias_, act);
  return reshape(y, shape);
}

MaxPool2D::MaxPool2D(int64_t pool) : pool_(pool) {
  ENGINE_CHECK(pool >= 1, "MaxPool2D: pool size must be at least 1, got ", pool);
}

Shape MaxPool2D::build(const Shape& input_shape) {
  ENGINE_CHECK(input_shape.size() == 3,
               "MaxPool2D expects (height, width, channels) inputs, got ", to_string(input_shape));
  const Conv2dGeometry g = pool2d_geometry({1, input_shape[0], input_shape[1], input_shape[2]},
                                           pool_, pool_, pool_, pool_, Padding::Valid);
  return {g.out_h, g.out_w, input_shape[2]};
}

Tensor MaxPool2D::forward(const Tensor& x, ForwardContext&) { return engine::max_pool2d(x, pool_); }

std::shared_ptr<Layer> flatten() { return std::make_shared<Flatten>(); }
std::shared_ptr<Layer> dense(int64_t units, Activation activation) {
  return std::make_shared<Dense>(units, activation);
}
std::shared_ptr<Layer> dropout(float rate) { return std::make_shared<Dropout>(rate); }
std::shared_ptr<Layer> conv2d(int64_t filters, int64_t kernel, Padding padding,
                              Activation activation, int64_t stride) {
  return std::make_shared<Conv2D>(filters, kernel, padding, activation, stride);
}
std::shared_ptr<Layer> max_pool2d(int64_t pool) { return std::make_shared<MaxPool2D>(pool); }

}  // namespace engine::nn
