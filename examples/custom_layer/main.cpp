// A layer of your own: a class derived from nn::Layer, with its own parameters, whose forward
// pass is written with the engine's differentiable ops (core/ops.h). Each op records how to
// go back through it, so the layer needs no backward code: autograd gives its gradients, and
// fit(), the optimizers and the GPU work with it as with the built-in layers.
//
// The layer is a residual block, y = x + gelu(x W + b), with W (F, F) and b (F,): it keeps
// the width F of its input and learns a correction to it. The model around it learns
// t = sin(3 x) from 256 points of x in [-1, 1].
//
//   custom_layer [--gpu]
//
// Prints the model, the loss every 50 epochs, then "final loss: X" and whether it fell.
//
// To keep such a model, save its weights (nn::save_weights, nn/weights_io.h) and build it in
// code again before load_weights: save_model refuses it, since load_model could not rebuild a
// class that only your program knows.
#include <engine/core/device_services.h>
#include <engine/core/error.h>
#include <engine/core/ops.h>
#include <engine/nn/layer.h>
#include <engine/nn/layers.h>
#include <engine/nn/sequential.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

using namespace engine;

// The Layer interface (nn/layer.h): a kind name, build() for the input shape, the parameters
// it asks for, the views of them it is handed, and forward().
class GeluBlock final : public nn::Layer {
 public:
  // Shown in the summary; the model names the layer "gelu_block", "gelu_block_1", ...
  std::string type() const override { return "GeluBlock"; }

  // Called once with the shape of one sample, (F,); the output has the same shape.
  Shape build(const Shape& input_shape) override {
    if (input_shape.size() != 1) throw Error("GeluBlock expects flat samples (F,)");
    width_ = input_shape[0];
    return {width_};
  }

  // The parameters to allocate, with their initialisation: Glorot-uniform W (its fans are F
  // and F), zero b. The model keeps them in its one buffer and trains them.
  std::vector<nn::ParamSpec> param_specs() const override {
    return {{"kernel", {width_, width_}, nn::Init::GlorotUniform, width_, width_},
            {"bias", {width_}, nn::Init::Zeros, 0, 0}};
  }

  // Views into that buffer, in the order of param_specs(): keep them for forward().
  void bind_parameters(const std::vector<Tensor>& params) override {
    kernel_ = params.at(0);
    bias_ = params.at(1);
  }

  // x: (batch, F). Only differentiable ops, so backward() reaches kernel_ and bias_ by itself:
  // matmul, add_bias (b added to every row), gelu and add each record their own backward.
  Tensor forward(const Tensor& x, nn::ForwardContext& ctx) override {
    (void)ctx;  // no dropout here, and training or not makes no difference
    const Tensor correction = gelu(add_bias(matmul(x, kernel_), bias_));
    return add(x, correction);
  }

 private:
  int64_t width_ = 0;
  Tensor kernel_, bias_;
};

int main(int argc, char** argv) {
  Device device = Device::cpu();
  if (argc > 1 && std::string(argv[1]) == "--gpu") device = Device::cuda();
  std::string why_not;
  if (!device_available(device, &why_not)) {
    std::fprintf(stderr, "no GPU to run on: %s\n", why_not.c_str());
    return 1;
  }

  // The data: 256 evenly spaced x in [-1, 1] and t = sin(3 x), each (256, 1).
  const int64_t n = 256;
  std::vector<float> x(n), t(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(n - 1);
    t[i] = std::sin(3.0f * x[i]);
  }
  const nn::Dataset train{Tensor::from_vector(x, {n, 1}, device), Tensor::from_vector(t, {n, 1}, device)};

  // The custom layer goes into a Sequential like any other: widen to 16, two residual blocks,
  // then one linear output.
  nn::Sequential model{nn::dense(16), std::make_shared<GeluBlock>(),
                       std::make_shared<GeluBlock>(), nn::dense(1)};
  model.build({1}, device, /*seed=*/3);
  model.compile(std::make_unique<nn::Adam>(0.01f), nn::Loss::MeanSquaredError);
  model.summary(std::cout);

  nn::FitOptions options;
  options.epochs = 150;
  options.batch_size = 32;
  options.seed = 3;
  options.verbose = false;
  const nn::History history = model.fit(train, options);
  for (const nn::EpochRecord& epoch : history.epochs)
    if (epoch.epoch == 1 || epoch.epoch % 50 == 0)
      std::printf("epoch %3d  loss %.5f\n", epoch.epoch, epoch.loss);

  // The check: training must have lowered the loss, by far.
  const double first = history.epochs.front().loss, last = history.epochs.back().loss;
  const bool fell = last < first / 10;
  std::printf("loss fell from %.4f to %.5f: %s\n", first, last, fell ? "yes" : "NO");
  std::printf("final loss: %.5f\n", last);
  return fell ? 0 : 1;
}
