// The layers of the seed models: Flatten, Dense, Dropout, and the window layers of the CNNs
// (Conv2D, MaxPool2D) on NHWC activations, (batch, height, width, channels) as Keras stores them.
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
  std::vector<LayerSetting> config() const override;  // units, activation
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
  std::vector<LayerSetting> config() const override;  // rate
  Tensor forward(const Tensor& x, ForwardContext& ctx) override;

 private:
  float rate_;
};

// y = activation(conv2d(x, kernel) + bias) with Keras' Conv2D parameters: kernel
// (kernel, kernel, in_c, filters) Glorot-uniform (fans: kernel^2 in_c and kernel^2 filters),
// bias (filters,) zeros; same stride on both axes; padding valid or same.
class Conv2D final : public Layer {
 public:
  Conv2D(int64_t filters, int64_t kernel, Padding padding = Padding::Valid,
         Activation activation = Activation::None, int64_t stride = 1);
  std::string type() const override { return "Conv2D"; }
  Shape build(const Shape& input_shape) override;
  std::vector<ParamSpec> param_specs() const override;
  void bind_parameters(const std::vector<Tensor>& params) override;
  Activation activation() const override { return activation_; }
  // filters, kernel_size, strides, padding, activation
  std::vector<LayerSetting> config() const override;
  Tensor forward(const Tensor& x, ForwardContext& ctx) override;
  Tensor conv_filters() const override { return kernel_; }

 private:
  int64_t filters_, kernel_size_, stride_;
  Padding padding_;
  Activation activation_;
  int64_t in_channels_ = 0;
  Tensor kernel_, bias_;
};

// Max over pool x pool windows, stride pool, padding valid: Keras' MaxPooling2D(pool), whose
// name the summary shows.
class MaxPool2D final : public Layer {
 public:
  explicit MaxPool2D(int64_t pool);
  std::string type() const override { return "MaxPooling2D"; }
  Shape build(const Shape& input_shape) override;
  std::vector<LayerSetting> config() const override;  // pool_size
  Tensor forward(const Tensor& x, ForwardContext& ctx) override;

 private:
  int64_t pool_;
};

// Shorthands for building a Sequential in one expression, Keras style.
std::shared_ptr<Layer> flatten();
std::shared_ptr<Layer> dense(int64_t units, Activation activation = Activation::None);
std::shared_ptr<Layer> dropout(float rate);
std::shared_ptr<Layer> conv2d(int64_t filters, int64_t kernel, Padding padding = Padding::Valid,
                              Activation activation = Activation::None, int64_t stride = 1);
std::shared_ptr<Layer> max_pool2d(int64_t pool);

// The way back from config() (Keras' from_config): the layer of kind `type` (a type() name:
// Flatten, Dense, Dropout, Conv2D, MaxPooling2D) with these settings. Throws engine::Error
// for an unknown kind, a setting missing, repeated or unknown, or a value out of range (a
// whole number where one is due, an activation or padding code that exists, a dropout rate in
// [0, 1), a kernel of at most 1,024); load_model (nn/model_file.h) says in which file.
std::shared_ptr<Layer> layer_from_config(const std::string& type,
                                         const std::vector<LayerSetting>& settings);

}  // namespace engine::nn
