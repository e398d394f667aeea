#include "nn/layers.h"

#include <cmath>
#include <cstdint>
#include <map>

#include "core/error.h"
#include "core/ops.h"

namespace engine::nn {
namespace {

// The codes config() gives an activation or a padding: the index in these lists. They are
// part of the model file format (docs/model_format.md), so they never change when an enum's
// order does: add new values at the end.
constexpr Activation ACTIVATIONS[] = {Activation::None, Activation::Relu, Activation::Tanh,
                                      Activation::Sigmoid, Activation::Softmax};
constexpr Padding PADDINGS[] = {Padding::Valid, Padding::Same};

template <typename E, size_t N>
double code_of(E value, const E (&codes)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (codes[i] == value) return static_cast<double>(i);
  }
  throw Error("a value without a model file code (add it to the list in nn/layers.cpp)");
}

}  // namespace

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

std::vector<LayerSetting> Dense::config() const {
  return {{"units", static_cast<double>(units_)},
          {"activation", code_of(activation_, ACTIVATIONS)}};
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

std::vector<LayerSetting> Dropout::config() const { return {{"rate", rate_}}; }

Tensor Dropout::forward(const Tensor& x, ForwardContext& ctx) {
  if (!ctx.training) return x;
  ENGINE_CHECK(ctx.step.defined(), "Dropout: training without a step counter");
  const int64_t row_elements = x.dim(0) > 0 ? x.numel() / x.dim(0) : 0;
  const DropoutStream stream{derive_seed(ctx.dropout_seed, static_cast<uint64_t>(ctx.dropout_calls++)),
                             ctx.step, static_cast<uint64_t>(ctx.first_row * row_elements)};
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

std::vector<LayerSetting> Conv2D::config() const {
  return {{"filters", static_cast<double>(filters_)},
          {"kernel_size", static_cast<double>(kernel_size_)},
          {"strides", static_cast<double>(stride_)},
          {"padding", code_of(padding_, PADDINGS)},
          {"activation", code_of(activation_, ACTIVATIONS)}};
}

Tensor Conv2D::forward(const Tensor& x, ForwardContext& ctx) {
  ENGINE_CHECK(kernel_.defined(), "Conv2D '", name(), "' used before the model was built");
  const Activation act = ctx.skip_activation ? Activation::None : activation_;
  // The bias and an elementwise activation in the convolution's own op (a backend may apply
  // them as it writes the output); softmax acts on the last axis: the output as rows.
  if (act != Activation::Softmax) return conv2d_bias_activation(x, kernel_, bias_, act, stride_, padding_);
  const Tensor z = conv2d_bias_activation(x, kernel_, bias_, Activation::None, stride_, padding_);
  const Shape shape = z.shape();
  return reshape(engine::softmax(reshape(z, {shape[0] * shape[1] * shape[2], filters_})), shape);
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

std::vector<LayerSetting> MaxPool2D::config() const {
  return {{"pool_size", static_cast<double>(pool_)}};
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

namespace {

// One layer's settings, each taken once by name and checked; any left over is an error.
class Settings {
 public:
  explicit Settings(const std::vector<LayerSetting>& settings) {
    for (const LayerSetting& s : settings) {
      ENGINE_CHECK(values_.emplace(s.name, s.value).second, "setting '", s.name, "' given twice");
    }
  }
  // A whole number in [low, high].
  int64_t whole(const char* name, int64_t low, int64_t high) {
    const double v = take(name);
    ENGINE_CHECK(std::isfinite(v) && v == std::floor(v) && v >= static_cast<double>(low) &&
                     v <= static_cast<double>(high),
                 "'", name, "' must be a whole number in [", low, ", ", high, "], got ", v);
    return static_cast<int64_t>(v);
  }
  template <typename E, size_t N>
  E code(const char* name, const E (&codes)[N]) {
    return codes[whole(name, 0, static_cast<int64_t>(N) - 1)];
  }
  float rate(const char* name) {
    const double v = take(name);
    ENGINE_CHECK(v >= 0.0 && v < 1.0, "'", name, "' must be in [0, 1), got ", v);  // NaN fails too
    return static_cast<float>(v);
  }
  void expect_no_more() const {
    ENGINE_CHECK(values_.empty(), "unknown setting '", values_.begin()->first, "'");
  }

 private:
  double take(const char* name) {
    const auto it = values_.find(name);
    ENGINE_CHECK(it != values_.end(), "setting '", name, "' is missing");
    const double v = it->second;
    values_.erase(it);
    return v;
  }
  std::map<std::string, double> values_;
};

}  // namespace

std::shared_ptr<Layer> layer_from_config(const std::string& type,
                                         const std::vector<LayerSetting>& settings) {
  constexpr int64_t MAX = INT32_MAX;
  // Wider kernels exist nowhere, and the bound keeps a damaged file's fan-in arithmetic
  // (kernel^2 * channels) far from overflowing.
  constexpr int64_t MAX_KERNEL = 1024;
  Settings s(settings);
  std::shared_ptr<Layer> layer;
  if (type == "Flatten") {
    layer = flatten();
  } else if (type == "Dense") {
    const int64_t units = s.whole("units", 1, MAX);
    layer = dense(units, s.code("activation", ACTIVATIONS));
  } else if (type == "Dropout") {
    layer = dropout(s.rate("rate"));
  } else if (type == "Conv2D") {
    const int64_t filters = s.whole("filters", 1, MAX);
    const int64_t kernel = s.whole("kernel_size", 1, MAX_KERNEL);
    const int64_t stride = s.whole("strides", 1, MAX);
    const Padding padding = s.code("padding", PADDINGS);
    layer = conv2d(filters, kernel, padding, s.code("activation", ACTIVATIONS), stride);
  } else if (type == "MaxPooling2D") {
    layer = max_pool2d(s.whole("pool_size", 1, MAX));
  } else {
    throw Error("unknown layer kind (this build knows Flatten, Dense, Dropout, Conv2D, "
                "MaxPooling2D)");
  }
  s.expect_no_more();
  return layer;
}

}  // namespace engine::nn
