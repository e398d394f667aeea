// The CNN layers of nn/ on the CPU: summaries of CNNs of the tests' own (Keras' layer names,
// output shapes and parameter counts; the apps' seed models are checked on the summaries they
// print, tests/test_seed_summaries.sh), Conv2D's initialisation and forward against the ops it
// is made of, Flatten's NHWC order, and small CNNs that learn a synthetic task with Adam,
// RMSprop and Adadelta.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/ops.h"
#include "nn/layers.h"
#include "nn/sequential.h"

using namespace engine;

namespace {

// 8x8 grey images with one bright 3-pixel bar on a noisy background: class 1 when the bar is
// vertical, 0 when horizontal. A position-independent pattern: what convolutions are for.
nn::Dataset bars(int64_t n, uint64_t seed) {
  Generator rng(seed);
  std::vector<float> x(static_cast<size_t>(n * 64));
  std::vector<int32_t> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float* image = &x[static_cast<size_t>(i * 64)];
    for (int p = 0; p < 64; ++p) image[p] = 0.3f * rng.uniform();
    const bool vertical = rng.uniform() < 0.5f;
    const auto r = static_cast<int>(rng.below(6)), c = static_cast<int>(rng.below(6));
    for (int k = 0; k < 3; ++k) image[vertical ? (r + k) * 8 + c : r * 8 + c + k] = 1.0f;
    y[static_cast<size_t>(i)] = vertical ? 1 : 0;
  }
  return {Tensor::from_vector(x, {n, 8, 8, 1}), Tensor::from_ints(y, {n})};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("summary of CNNs: Keras' layer names, output shapes and parameter counts") {
  // Same padding: 3x3 kernels over 3, 8 and 8 channels, (27 + 1) * 8 = 224, (72 + 1) * 8 = 584,
  // (72 + 1) * 16 = 1,168; then 4*4*16 = 256 features into Dense(10): 2,570.
  nn::Sequential same{nn::conv2d(8, 3, Padding::Same), nn::conv2d(8, 3, Padding::Same),
                      nn::max_pool2d(2), nn::conv2d(16, 3, Padding::Same), nn::max_pool2d(2),
                      nn::flatten(), nn::dense(10, Activation::Softmax)};
  same.build({16, 16, 3}, Device::cpu(), 0);
  std::ostringstream out;
  same.summary(out);
  const std::string text = out.str();
  INFO(text);
  CHECK(same.parameter_count() == 4546);
  CHECK(contains(text, "Total params: 4,546"));
  CHECK(contains(text, " conv2d (Conv2D)             (None, 16, 16, 8)         224"));
  CHECK(contains(text, " conv2d_1 (Conv2D)           (None, 16, 16, 8)         584"));
  CHECK(contains(text, "max_pooling2d (MaxPooling2D) (None, 8, 8, 8)           0"));
  CHECK(contains(text, " conv2d_2 (Conv2D)           (None, 8, 8, 16)          1168"));
  CHECK(contains(text, "max_pooling2d_1 (MaxPooling2D) (None, 4, 4, 16)          0"));
  CHECK(contains(text, " flatten (Flatten)           (None, 256)               0"));
  CHECK(contains(text, " dense (Dense)               (None, 10)                2570"));

  // Valid padding: 12x12 -> 10x10x4 (40) -> 8x8x8 (296) -> pooled 4x4x8 -> 128 -> Dense(2): 258.
  nn::Sequential valid{nn::conv2d(4, 3, Padding::Valid, Activation::Relu),
                       nn::conv2d(8, 3, Padding::Valid, Activation::Relu), nn::max_pool2d(2),
                       nn::flatten(), nn::dense(2, Activation::Softmax)};
  valid.build({12, 12, 1}, Device::cpu(), 0);
  CHECK(valid.parameter_count() == 594);
  std::ostringstream valid_out;
  valid.summary(valid_out);
  CHECK(contains(valid_out.str(), " conv2d_1 (Conv2D)           (None, 8, 8, 8)           296"));
  CHECK(contains(valid_out.str(), " flatten (Flatten)           (None, 128)               0"));
}

TEST_CASE("summary of a CNN on an odd image size: pooling rounds down, a one-unit sigmoid head") {
  // 15x15x3 -> 13x13x4 (112) -> pooled 6x6 -> 4x4x8 (296) -> pooled 2x2x8 -> 32 features ->
  // Dense(4): 132 -> Dense(1): 5.
  nn::Sequential odd{nn::conv2d(4, 3, Padding::Valid, Activation::Relu), nn::max_pool2d(2),
                     nn::conv2d(8, 3, Padding::Valid, Activation::Relu), nn::max_pool2d(2),
                     nn::flatten(), nn::dense(4, Activation::Relu),
                     nn::dense(1, Activation::Sigmoid)};
  odd.build({15, 15, 3}, Device::cpu(), 0);
  CHECK(odd.parameter_count() == 545);
  std::ostringstream out;
  odd.summary(out);
  INFO(out.str());
  CHECK(contains(out.str(), " conv2d (Conv2D)             (None, 13, 13, 4)         112"));
  CHECK(contains(out.str(), "max_pooling2d (MaxPooling2D) (None, 6, 6, 4)           0"));
  CHECK(contains(out.str(), " flatten (Flatten)           (None, 32)                0"));
  CHECK(contains(out.str(), " dense_1 (Dense)             (None, 1)                 5"));
}

TEST_CASE("Conv2D and MaxPool2D refuse bad settings and inputs that are not images") {
  CHECK_THROWS_AS(nn::conv2d(0, 3), Error);
  CHECK_THROWS_AS(nn::conv2d(8, 0), Error);
  CHECK_THROWS_AS(nn::conv2d(8, 3, Padding::Same, Activation::None, 0), Error);
  CHECK_THROWS_AS(nn::max_pool2d(0), Error);
  nn::Sequential flat{nn::conv2d(4, 3), nn::flatten(), nn::dense(2, Activation::Softmax)};
  CHECK_THROWS_WITH_AS(flat.build({28, 28}, Device::cpu(), 0),
                       doctest::Contains("Conv2D expects (height, width, channels) inputs"), Error);
  nn::Sequential too_small{nn::conv2d(4, 5), nn::flatten(), nn::dense(2, Activation::Softmax)};
  CHECK_THROWS_WITH_AS(too_small.build({4, 4, 1}, Device::cpu(), 0),
                       doctest::Contains("does not fit"), Error);
}

TEST_CASE("Conv2D: Glorot-uniform kernel over Keras' fans, zero bias, forward = conv2d + bias + activation") {
  nn::Sequential model{nn::conv2d(16, 3, Padding::Same, Activation::Relu, 2), nn::flatten(),
                       nn::dense(2, Activation::Softmax)};
  model.build({7, 9, 3}, Device::cpu(), 4);
  const auto& params = model.parameters().params;
  REQUIRE(params.size() == 4);
  CHECK(params[0].name == "conv2d/kernel");
  CHECK(params[0].value.shape() == Shape{3, 3, 3, 16});
  const double limit = std::sqrt(6.0 / (9 * 3 + 9 * 16));  // fans: kernel^2 * in_c, kernel^2 * filters
  double max_abs = 0;
  for (const float v : params[0].value.to_vector()) max_abs = std::max(max_abs, std::fabs(static_cast<double>(v)));
  CHECK(max_abs <= limit);
  CHECK(max_abs > 0.95 * limit);
  for (const float v : params[1].value.to_vector()) CHECK(v == 0.0f);

  // A non-zero bias, to see it added per channel before the relu.
  std::vector<float> bias(16);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.1f * static_cast<float>(i) - 0.8f;
  Tensor bias_view = params[1].value;
  bias_view.copy_from(Tensor::from_vector(bias, {16}));
  Generator rng(5);
  std::vector<float> xv(2 * 7 * 9 * 3);
  for (float& v : xv) v = 2.0f * rng.uniform() - 1.0f;
  const Tensor x = Tensor::from_vector(xv, {2, 7, 9, 3});
  nn::ForwardContext ctx;
  const Tensor y = model.layers()[0]->forward(x, ctx);
  REQUIRE(y.shape() == Shape{2, 4, 5, 16});
  const std::vector<float> z = engine::conv2d(x, params[0].value, 2, Padding::Same).to_vector();
  const std::vector<float> got = y.to_vector();
  for (size_t i = 0; i < z.size(); ++i) CHECK(got[i] == std::max(z[i] + bias[i % 16], 0.0f));
}

TEST_CASE("Flatten after a convolution keeps NHWC order, as Keras' channels_last Flatten does") {
  nn::Sequential model{nn::flatten(), nn::dense(1)};
  model.build({2, 3, 4}, Device::cpu(), 0);
  std::vector<float> xv(2 * 24);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
  nn::ForwardContext ctx;
  const Tensor flat = model.layers()[0]->forward(Tensor::from_vector(xv, {2, 2, 3, 4}), ctx);
  CHECK(flat.shape() == Shape{2, 24});
  CHECK(flat.to_vector() == xv);  // element (h, w, c) of image n at n * 24 + (h * 3 + w) * 4 + c
}

TEST_CASE("a small CNN learns vertical vs horizontal bars on the CPU with Adam, RMSprop and Adadelta") {
  const nn::Dataset train = bars(384, 1), test = bars(128, 2);
  struct Run {
    const char* name;
    std::unique_ptr<nn::Optimizer> (*make)();
  };
  const std::vector<Run> runs = {
      {"Adam", [] { return std::unique_ptr<nn::Optimizer>(new nn::Adam(3e-3f)); }},
      {"RMSprop", [] { return std::unique_ptr<nn::Optimizer>(new nn::RMSprop(3e-3f)); }},
      {"Adadelta", [] { return std::unique_ptr<nn::Optimizer>(new nn::Adadelta()); }},
  };
  for (const Run& run : runs) {
    INFO("optimizer: ", run.name);
    nn::Sequential model{nn::conv2d(8, 3, Padding::Same, Activation::Relu), nn::max_pool2d(2),
                         nn::conv2d(8, 3, Padding::Valid, Activation::Relu), nn::flatten(),
                         nn::dropout(0.1f), nn::dense(2, Activation::Softmax)};
    model.build({8, 8, 1}, Device::cpu(), 7);
    model.compile(run.make(), nn::Loss::SparseCategoricalCrossentropy);
    std::ostringstream log;
    nn::FitOptions options;
    options.epochs = 8;
    options.batch_size = 32;
    options.out = &log;
    const nn::History history = model.fit(train, options);
    CHECK(history.epochs.back().loss < 0.7 * history.epochs.front().loss);
    CHECK(model.evaluate(test).accuracy > 0.9);
  }
}
