// nn/: summary, initialisation, optimizers against hand-computed Keras updates, fit details
// (partial batches, steps_per_epoch, determinism), predict, progress formatting.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "nn/layers.h"
#include "nn/progress.h"
#include "nn/sequential.h"
#include "toy_data.h"

using namespace engine;
using test::toy_data;

namespace {

// The tests' own MLP on 28x28 inputs. The apps' models, and Keras' parameter counts for them,
// are checked on the summaries the apps print (tests/test_seed_summaries.sh).
nn::Sequential small_mlp() {
  return nn::Sequential{nn::flatten(), nn::dense(64, Activation::Relu), nn::dropout(0.5f),
                        nn::dense(10, Activation::Softmax)};
}

}  // namespace

TEST_CASE("summary prints the Keras 2 table: layer names, output shapes, parameter counts") {
  nn::Sequential small = small_mlp();
  small.build({28, 28}, Device::cpu(), 0);
  std::ostringstream out;
  small.summary(out);
  const std::string text = out.str();
  INFO(text);
  // 784*64 + 64 = 50,240 and 64*10 + 10 = 650.
  CHECK(small.parameter_count() == 50890);
  CHECK(text.find("Total params: 50,890") != std::string::npos);
  CHECK(text.find(" dense (Dense)               (None, 64)                50240") != std::string::npos);
  CHECK(text.find(" dense_1 (Dense)             (None, 10)                650") != std::string::npos);
  CHECK(text.find("dropout (Dropout)") != std::string::npos);
  // Two hidden layers: 784*300 + 300 = 235,500, 300*100 + 100 = 30,100, 100*10 + 10 = 1,010.
  nn::Sequential deep{nn::flatten(), nn::dense(300, Activation::Relu), nn::dropout(0.2f),
                      nn::dense(100, Activation::Relu), nn::dropout(0.2f),
                      nn::dense(10, Activation::Softmax)};
  deep.build({28, 28}, Device::cpu(), 0);
  CHECK(deep.parameter_count() == 266610);
  std::ostringstream deep_out;
  deep.summary(deep_out);
  CHECK(deep_out.str().find(" dense_2 (Dense)             (None, 10)                1010") !=
        std::string::npos);
  CHECK(deep_out.str().find("dropout_1 (Dropout)") != std::string::npos);
}

TEST_CASE("Glorot-uniform kernels within their limit, zero biases, same seed same weights") {
  nn::Sequential a = small_mlp(), b = small_mlp(), c = small_mlp();
  a.build({28, 28}, Device::cpu(), 5);
  b.build({28, 28}, Device::cpu(), 5);
  c.build({28, 28}, Device::cpu(), 6);
  CHECK(a.parameters().values.to_vector() == b.parameters().values.to_vector());
  CHECK(a.parameters().values.to_vector() != c.parameters().values.to_vector());
  const auto& params = a.parameters().params;
  REQUIRE(params.size() == 4);
  CHECK(params[0].name == "dense/kernel");
  const std::vector<float> kernel = params[0].value.to_vector();
  const double limit = std::sqrt(6.0 / (784 + 64));
  double max_abs = 0, mean = 0;
  for (float v : kernel) {
    max_abs = std::max(max_abs, std::fabs(static_cast<double>(v)));
    mean += v;
  }
  mean /= static_cast<double>(kernel.size());
  CHECK(max_abs <= limit);
  CHECK(max_abs > 0.99 * limit);        // the draws fill the interval
  CHECK(std::fabs(mean) < 0.01 * limit);  // and are centred
  for (float v : params[1].value.to_vector()) CHECK(v == 0.0f);
}

TEST_CASE("Adam matches Keras' update rule step by step") {
  nn::ParameterStore store;
  store.values = Tensor::from_vector({1.0f, -2.0f}, {2});
  store.grads = Tensor::from_vector({0.5f, -0.25f}, {2});
  nn::Adam adam;  // lr 1e-3, beta1 0.9, beta2 0.999, eps 1e-7
  Tensor step = Tensor::zeros({}, DType::I32);
  double p[2] = {1.0, -2.0}, m[2] = {0, 0}, v[2] = {0, 0};
  const double g[2] = {0.5, -0.25};
  for (int t = 1; t <= 3; ++t) {
    adam.step(store, step);
    raw::increment(step);
    const double lr_t = 1e-3 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
    for (int i = 0; i < 2; ++i) {
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
      p[i] -= lr_t * m[i] / (std::sqrt(v[i]) + 1e-7);
    }
  }
  const std::vector<float> got = store.values.to_vector();
  CHECK(got[0] == doctest::Approx(p[0]).epsilon(1e-6));
  CHECK(got[1] == doctest::Approx(p[1]).epsilon(1e-6));
  CHECK(step.to_int_vector()[0] == 3);
}

TEST_CASE("SGD: plain and with momentum") {
  nn::ParameterStore store;
  store.values = Tensor::from_vector({1.0f}, {1});
  store.grads = Tensor::from_vector({2.0f}, {1});
  const Tensor step = Tensor::zeros({}, DType::I32);  // SGD does not read it
  nn::SGD plain(0.1f);
  plain.step(store, step);
  CHECK(store.values.item() == doctest::Approx(0.8));
  nn::SGD momentum(0.1f, 0.9f);
  momentum.step(store, step);  // v = -0.2, p = 0.6
  momentum.step(store, step);  // v = 0.9 * -0.2 - 0.2 = -0.38, p = 0.22
  CHECK(store.values.item() == doctest::Approx(0.22));
  CHECK_THROWS_AS(nn::SGD(-1.0f), Error);
}

TEST_CASE("RMSprop and Adadelta match Keras' update rules step by step") {
  const double g[2] = {0.5, -0.25};
  const Tensor step = Tensor::zeros({}, DType::I32);  // neither reads it
  {
    nn::ParameterStore store;
    store.values = Tensor::from_vector({1.0f, -2.0f}, {2});
    store.grads = Tensor::from_vector({0.5f, -0.25f}, {2});
    nn::RMSprop rmsprop;  // lr 1e-3, rho 0.9, eps 1e-7
    double p[2] = {1.0, -2.0}, s[2] = {0, 0};
    for (int t = 1; t <= 3; ++t) {
      rmsprop.step(store, step);
      for (int i = 0; i < 2; ++i) {
        s[i] = 0.9 * s[i] + 0.1 * g[i] * g[i];
        p[i] -= 1e-3 * g[i] / (std::sqrt(s[i]) + 1e-7);
      }
    }
    // The first step alone moves p by lr / sqrt(0.1) = 3.16e-3: far above float resolution.
    const std::vector<float> got = store.values.to_vector();
    CHECK(got[0] == doctest::Approx(p[0]).epsilon(1e-6));
    CHECK(got[1] == doctest::Approx(p[1]).epsilon(1e-6));
    CHECK(got[0] < 1.0f - 0.005f);
  }
  {
    nn::ParameterStore store;
    store.values = Tensor::from_vector({1.0f, -2.0f}, {2});
    store.grads = Tensor::from_vector({0.5f, -0.25f}, {2});
    nn::Adadelta adadelta;  // lr 1.0, rho 0.95, eps 1e-7
    double p[2] = {1.0, -2.0}, s[2] = {0, 0}, u[2] = {0, 0};
    for (int t = 1; t <= 3; ++t) {
      adadelta.step(store, step);
      for (int i = 0; i < 2; ++i) {
        s[i] = 0.95 * s[i] + 0.05 * g[i] * g[i];
        const double d = std::sqrt(u[i] + 1e-7) / std::sqrt(s[i] + 1e-7) * g[i];
        u[i] = 0.95 * u[i] + 0.05 * d * d;
        p[i] -= d;
      }
    }
    // Adadelta's first steps are ~sqrt(eps / (1 - rho)) ~ 1.4e-3 each, whatever g's size.
    const std::vector<float> got = store.values.to_vector();
    CHECK(got[0] == doctest::Approx(p[0]).epsilon(1e-6));
    CHECK(got[1] == doctest::Approx(p[1]).epsilon(1e-6));
    CHECK(got[0] < 1.0f - 0.003f);
  }
  CHECK_THROWS_AS(nn::RMSprop(1e-3f, 1.0f), Error);
  CHECK_THROWS_AS(nn::Adadelta(0.0f), Error);
  CHECK_THROWS_AS(nn::Adadelta(1.0f, 0.95f, 0.0f), Error);
}

TEST_CASE("fit learns a toy problem, handles a partial last batch and steps_per_epoch") {
  const nn::Dataset train = toy_data(203, 1);  // 203 = 6 batches of 32 + 11
  nn::Sequential model{nn::flatten(), nn::dense(16, Activation::Tanh), nn::dense(2, Activation::Softmax)};
  model.build({2, 3}, Device::cpu(), 1);
  model.compile(std::make_unique<nn::Adam>(0.01f), nn::Loss::SparseCategoricalCrossentropy);
  std::ostringstream log;
  nn::FitOptions options;
  options.epochs = 15;
  options.out = &log;
  options.validation = &train;
  const nn::History history = model.fit(train, options);
  REQUIRE(history.epochs.size() == 15);
  CHECK(history.epochs[0].steps == 7);
  CHECK(history.epochs.back().loss < history.epochs.front().loss);
  CHECK(history.epochs.back().val_accuracy > 0.9);
  CHECK(log.str().find("Epoch 15/15") != std::string::npos);
  CHECK(log.str().find("7/7 [==============================]") != std::string::npos);
  CHECK(log.str().find("val_accuracy") != std::string::npos);

  // The warm-up (the first two steps, with no graph on the CPU) is timed apart, in the first
  // epoch only, and the seconds split into it and the steady steps after it.
  const nn::EpochRecord& first = history.epochs[0];
  CHECK(first.warmup_steps == 2);
  CHECK(first.warmup_seconds > 0.0);
  CHECK(first.warmup_seconds <= first.seconds);
  CHECK(first.steady_steps == 5);
  CHECK(first.warmup_seconds + first.steady_seconds == doctest::Approx(first.seconds));
  for (size_t e = 1; e < history.epochs.size(); ++e) {
    CHECK(history.epochs[e].warmup_steps == 0);
    CHECK(history.epochs[e].warmup_seconds == 0.0);
    CHECK(history.epochs[e].steady_steps == 7);
    CHECK(history.epochs[e].steady_seconds == history.epochs[e].seconds);
  }
  CHECK(history.capture_seconds == 0.0);  // the CPU records no graph

  options.epochs = 1;
  options.steps_per_epoch = 3;
  options.validation = nullptr;
  const nn::History cut = model.fit(train, options);
  CHECK(cut.epochs[0].steps == 3);
  CHECK(cut.epochs[0].warmup_steps == 2);  // every fit warms up again (a new graph on a GPU)
  options.batch_size = 0;
  CHECK_THROWS_AS(model.fit(train, options), Error);
}

TEST_CASE("the warm-up ends after the second full batch, in whichever epoch that falls") {
  nn::Sequential model{nn::flatten(), nn::dense(2, Activation::Softmax)};
  model.build({2, 3}, Device::cpu(), 1);
  model.compile(std::make_unique<nn::SGD>(0.01f), nn::Loss::SparseCategoricalCrossentropy);
  nn::FitOptions options;
  options.verbose = false;
  options.epochs = 3;

  SUBCASE("one step an epoch: two epochs of warm-up, all of them") {
    options.steps_per_epoch = 1;
    const nn::History history = model.fit(toy_data(64, 1), options);
    for (int e : {0, 1}) {
      CHECK(history.epochs[e].warmup_steps == 1);
      CHECK(history.epochs[e].steady_steps == 0);
      CHECK(history.epochs[e].warmup_seconds == history.epochs[e].seconds);
      CHECK(history.epochs[e].steady_seconds == 0.0);
    }
    CHECK(history.epochs[2].warmup_steps == 0);
    CHECK(history.epochs[2].steady_steps == 1);
  }
  SUBCASE("a partial batch before the second full one is warm-up too") {
    const nn::History history = model.fit(toy_data(40, 1), options);  // steps of 32 and 8
    CHECK(history.epochs[0].warmup_steps == 2);
    CHECK(history.epochs[0].steady_steps == 0);
    CHECK(history.epochs[1].warmup_steps == 1);  // its first step: the second full batch
    CHECK(history.epochs[1].steady_steps == 1);
    CHECK(history.epochs[1].warmup_seconds > 0.0);
    CHECK(history.epochs[1].warmup_seconds + history.epochs[1].steady_seconds ==
          doctest::Approx(history.epochs[1].seconds));
    CHECK(history.epochs[2].warmup_steps == 0);
  }
}

TEST_CASE("evaluate and predict agree; predict gives probabilities") {
  const nn::Dataset data = toy_data(50, 2);
  nn::Sequential model{nn::flatten(), nn::dense(4, Activation::Relu), nn::dense(2, Activation::Softmax)};
  model.build({2, 3}, Device::cpu(), 3);
  model.compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy);
  const Tensor probs = model.predict(data.x, 7);  // 7 does not divide 50
  REQUIRE(probs.shape() == Shape{50, 2});
  const std::vector<float> p = probs.to_vector();
  const std::vector<int32_t> y = data.y.to_int_vector();
  int correct = 0;
  for (int i = 0; i < 50; ++i) {
    CHECK(p[2 * i] + p[2 * i + 1] == doctest::Approx(1.0).epsilon(1e-6));
    correct += (p[2 * i + 1] > p[2 * i] ? 1 : 0) == y[i] ? 1 : 0;
  }
  const nn::EvalResult result = model.evaluate(data, {16, false, nullptr});
  CHECK(result.samples == 50);
  CHECK(result.accuracy == doctest::Approx(correct / 50.0));
}

namespace {

// y = 3x - 1 (and, with two outputs, also -2x + 0.5) plus noise uniform in [-0.05, 0.05], for
// x uniform in [-1, 1]: x (n, 1), y (n,) or (n, 2).
nn::Dataset linear_data(int64_t n, int64_t outputs, uint64_t seed) {
  Generator rng(seed);
  std::vector<float> x(static_cast<size_t>(n)), y;
  for (float& v : x) v = 2.0f * rng.uniform() - 1.0f;
  for (const float v : x) {
    y.push_back(3.0f * v - 1.0f + 0.1f * (rng.uniform() - 0.5f));
    if (outputs == 2) y.push_back(-2.0f * v + 0.5f + 0.1f * (rng.uniform() - 0.5f));
  }
  return {Tensor::from_vector(x, {n, 1}),
          outputs == 2 ? Tensor::from_vector(y, {n, 2}) : Tensor::from_vector(y, {n})};
}

// Mean over the samples of the row means of (pred - y)^2 (squared) or |pred - y|, in double.
double host_error(const std::vector<float>& pred, const std::vector<float>& y, size_t outputs,
                  bool squared) {
  double total = 0.0;
  for (size_t i = 0; i < pred.size(); ++i) {
    const double d = static_cast<double>(pred[i]) - static_cast<double>(y[i]);
    total += squared ? d * d : std::fabs(d);
  }
  return total / static_cast<double>(outputs) / static_cast<double>(pred.size() / outputs);
}

}  // namespace

TEST_CASE("regression losses: fit a noisy line, report mae in place of accuracy") {
  struct Case {
    nn::Loss loss;
    int64_t outputs;
  };
  for (const Case c : {Case{nn::Loss::MeanSquaredError, 1}, Case{nn::Loss::MeanAbsoluteError, 2}}) {
    const bool squared = c.loss == nn::Loss::MeanSquaredError;
    const char* loss_name = squared ? "mean squared error" : "mean absolute error";
    INFO(loss_name, ", outputs ", c.outputs);
    const nn::Dataset train = linear_data(256, c.outputs, 4);
    const std::vector<float> y = train.y.to_vector();
    const size_t outputs = static_cast<size_t>(c.outputs);
    nn::Sequential model{nn::dense(c.outputs)};
    model.build({1}, Device::cpu(), 2);
    model.compile(std::make_unique<nn::Adam>(0.05f), c.loss);

    // The epoch's metric is summed over its steps: with one step of the whole set, it is the
    // mae of the weights before that step, which predict() shows.
    const std::vector<float> before = model.predict(train.x, 256).to_vector();
    std::ostringstream log;
    nn::FitOptions options;
    options.out = &log;
    options.batch_size = 256;
    options.shuffle = false;
    const nn::History first = model.fit(train, options);
    const nn::EpochRecord& one = first.epochs.at(0);
    CHECK(std::isnan(one.accuracy));
    CHECK(one.mae == doctest::Approx(host_error(before, y, outputs, false)).epsilon(1e-5));
    CHECK(one.loss == doctest::Approx(host_error(before, y, outputs, squared)).epsilon(1e-5));
    if (!squared) CHECK(one.mae == one.loss);  // the MAE loss is its own metric

    // Then train: the loss falls to the noise's (variance 0.1^2 / 12 ~ 8e-4, mean |noise|
    // 0.025), and the progress line and validation say mae.
    options.epochs = 60;
    options.batch_size = 32;
    options.shuffle = true;
    options.validation = &train;
    const nn::History history = model.fit(train, options);
    const nn::EpochRecord& last = history.epochs.back();
    CHECK(last.loss < (squared ? 2e-3 : 0.04));
    CHECK(last.mae < 0.04);
    CHECK(std::isnan(last.accuracy));
    CHECK(std::isnan(last.val_accuracy));
    // The line itself: at x = 0 and x = 1, -1 and 2 (and 0.5 and -1.5).
    const Tensor ends_x = Tensor::from_vector({0.0f, 1.0f}, {2, 1});
    const std::vector<float> ends = model.predict(ends_x).to_vector();
    const std::vector<float> line = c.outputs == 2 ? std::vector<float>{-1.0f, 0.5f, 2.0f, -1.5f}
                                                   : std::vector<float>{-1.0f, 2.0f};
    REQUIRE(ends.size() == line.size());
    for (size_t i = 0; i < ends.size(); ++i) CHECK(std::fabs(ends[i] - line[i]) < 0.05f);
    const std::string text = log.str();
    INFO(text);
    CHECK(text.find(" - mae: ") != std::string::npos);
    CHECK(text.find(" - val_mae: ") != std::string::npos);
    CHECK(text.find("accuracy") == std::string::npos);

    // evaluate() reports the same mae as the host's from predict(), and validation (after the
    // last epoch, on the same set in the same batches) that very number.
    const nn::EvalResult result = model.evaluate(train, {32, false, nullptr});
    const std::vector<float> after = model.predict(train.x, 32).to_vector();
    CHECK(std::isnan(result.accuracy));
    CHECK(result.mae == doctest::Approx(host_error(after, y, outputs, false)).epsilon(1e-5));
    CHECK(result.loss == doctest::Approx(host_error(after, y, outputs, squared)).epsilon(1e-5));
    CHECK(last.val_mae == result.mae);
    CHECK(last.val_loss == result.loss);
  }

  // Targets that do not match the outputs, or are not float, are refused.
  nn::Sequential model{nn::dense(2)};
  model.build({1}, Device::cpu(), 0);
  model.compile(std::make_unique<nn::SGD>(), nn::Loss::MeanSquaredError);
  CHECK_THROWS_AS(model.fit(linear_data(8, 1, 0), {}), Error);  // (8,) for 2 outputs
  nn::Dataset ints = linear_data(8, 2, 0);
  ints.y = Tensor::from_ints(std::vector<int32_t>(16, 0), {8, 2});
  CHECK_THROWS_AS(model.evaluate(ints), Error);
}

TEST_CASE("compile and fit refuse what cannot work") {
  nn::Sequential model{nn::flatten(), nn::dense(2, Activation::Relu)};
  CHECK_THROWS_AS(model.compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy), Error);
  model.build({2, 3}, Device::cpu(), 0);
  CHECK_THROWS_AS(model.compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy), Error);
  nn::Sequential ok{nn::flatten(), nn::dense(2, Activation::Softmax)};
  ok.build({2, 3}, Device::cpu(), 0);
  ok.compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy);
  nn::Dataset bad = toy_data(10, 0);
  bad.y = Tensor::from_ints(std::vector<int32_t>(9, 0), {9});
  CHECK_THROWS_AS(ok.fit(bad, {}), Error);
  nn::ForwardContext ctx;
  CHECK_THROWS_AS(ok.forward(Tensor::zeros({4, 3, 2}), ctx), Error);  // (3, 2) is not (2, 3)
}

TEST_CASE("progress formatting follows Keras") {
  CHECK(nn::ProgressBar::format_duration(3.2) == "3s");
  CHECK(nn::ProgressBar::format_duration(65) == "1:05");
  CHECK(nn::ProgressBar::format_duration(3661) == "1:01:01");
  CHECK(nn::ProgressBar::format_per_step(0.00125) == "1ms/step");
  CHECK(nn::ProgressBar::format_per_step(0.000201) == "201us/step");
  CHECK(nn::ProgressBar::format_per_step(2.0) == "2s/step");
  std::ostringstream out;
  nn::ProgressBar bar(out, 1875, false);
  bar.finish({{"loss", 0.29621}, {"accuracy", 0.914}});
  CHECK(out.str().rfind("1875/1875 [==============================] - 0s ", 0) == 0);
  CHECK(out.str().find("- loss: 0.2962 - accuracy: 0.9140\n") != std::string::npos);
}
