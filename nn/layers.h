// The layers of the seed-000 models: Flatten, Dense, Dropout.
#pragma once
#include <memory>

#include "nn/layer.h"

namespace engine::nn {

class Flatten final : public Layer {
 public:
  std::string type() const override { return "Flatten"; }
  Shape build(const Shape& input_shape) override;
  Tensor forward(const Tensor& x, ForwardContext& ctx) override;
};

// y = activation(x @ kernel + bias); kernel (in, units) as in Keras, bias (units,).
class Dense final : public Layer {
 public:
  explicit Dense(int64_t units, Activation activation = Activation::None);
  std::string type() const override { return "Dense"; }
  Shape build(const Shape& input_shape) override;
  std::vector<ParamSpec> param_specs() const override;
  void bind_parameters(const std::vector<Tensor>& params) override;
  Activation activation() const override { return activation_; }
  Tensor forward(const Tensor& x, ForwardContext& ctx) override;

 private:
  int64_t units_;
  int64_t inputs_ = 0;
  Activation activation_;
  Tensor kernel_, bias_;
};

class Dropout final : public Layer {
 public:
  explicit Dropout(float rate);
  std::string type() const override { return "Dropout"; }
  Shape build(const Shape& input_shape) override { return input_shape; }
  Tensor forward(const Tensor& x, ForwardContext& ctx) override;

 private:
  float rate_;
};

// Shorthands for building a Sequential in one expression, Keras style.
std::shared_ptr<Layer> flatten();
std::shared_ptr<Layer> dense(int64_t units, Activation activation = Activation::None);
std::shared_ptr<Layer> dropout(float rate);

}  // namespace engine::nn
