// The public training step (nn/train_step.h): a loop of one's own around Sequential::train_step
// trains exactly as fit() does, bit for bit, dropout included; and the metrics it sums are the
// epoch's means that fit() reports.
#include <doctest/doctest.h>

#include <sstream>
#include <vector>

#include "nn/layers.h"
#include "nn/sequential.h"
#include "core/autograd.h"
#include "core/ops.h"
#include "core/rng.h"
#include "nn/train_step.h"
#include "toy_data.h"

using namespace engine;
using test::toy_data;
using test::toy_model;

TEST_CASE("a loop of one's own around train_step trains as fit() does, bit for bit") {
  const nn::Dataset train = toy_data(75, 4);  // batches of 32, 32 and a partial 11
  const uint64_t seed = 11;
  const int epochs = 2;

  nn::Sequential fitted = toy_model();
  std::ostringstream log;
  nn::FitOptions options;
  options.epochs = epochs;
  options.seed = seed;
  options.shuffle = false;  // the loop below takes the rows in order
  options.out = &log;
  const nn::History history = fitted.fit(train, options);

  nn::Sequential looped = toy_model();
  looped.set_training_seed(seed);
  nn::RunningMetrics metrics(looped.device());
  std::vector<double> losses;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    metrics.reset();
    for (int64_t first = 0; first < train.size(); first += options.batch_size) {
      const int64_t count = std::min(options.batch_size, train.size() - first);
      std::vector<int32_t> rows(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i) rows[static_cast<size_t>(i)] = static_cast<int32_t>(first + i);
      looped.train_step(train, Tensor::from_ints(rows, {count}, looped.device()), metrics);
      metrics.samples += count;
    }
    losses.push_back(metrics.loss());
  }

  CHECK(fitted.parameters().values.to_vector() == looped.parameters().values.to_vector());
  REQUIRE(history.epochs.size() == 2);
  CHECK(history.epochs[0].loss == losses[0]);
  CHECK(history.epochs[1].loss == losses[1]);
  CHECK(losses[1] < losses[0]);
}

TEST_CASE("train_step without set_training_seed draws other dropout masks than fit's") {
  // The seed matters: a loop that forgets it trains, but not as fit() with that seed does.
  const nn::Dataset train = toy_data(32, 4);
  nn::Sequential fitted = toy_model();
  std::ostringstream log;
  nn::FitOptions options;
  options.seed = 11;
  options.shuffle = false;
  options.out = &log;
  fitted.fit(train, options);
  nn::Sequential looped = toy_model();
  nn::RunningMetrics metrics(looped.device());
  std::vector<int32_t> rows(32);
  for (int32_t i = 0; i < 32; ++i) rows[static_cast<size_t>(i)] = i;
  looped.train_step(train, Tensor::from_ints(rows, {32}, looped.device()), metrics);
  CHECK(fitted.parameters().values.to_vector() != looped.parameters().values.to_vector());
}

TEST_CASE("mean_loss_seed starts backward at the losses as mean(losses).backward() does, bit for bit") {
  // The step seeds backward at the per-sample losses with 1/N instead of recording their mean:
  // the same gradients, to the bit, at every batch size (1/N rounds alike on both routes).
  Generator rng(5);
  for (const int64_t n : {1, 3, 7, 32, 75, 1000}) {
    std::vector<float> logits(static_cast<size_t>(n * 4));
    std::vector<int32_t> labels(static_cast<size_t>(n));
    for (float& v : logits) v = rng.uniform() * 4.0f - 2.0f;
    for (int32_t& c : labels) c = static_cast<int32_t>(rng.below(4));
    const Tensor y = Tensor::from_ints(labels, {n});
    Tensor by_mean = Tensor::from_vector(logits, {n, 4}).set_requires_grad(true);
    Tensor by_seed = Tensor::from_vector(logits, {n, 4}).set_requires_grad(true);
    mean(sparse_softmax_cross_entropy(by_mean, y)).backward();
    const Tensor losses = sparse_softmax_cross_entropy(by_seed, y);
    engine::backward(losses, nn::mean_loss_seed(losses));
    CAPTURE(n);
    CHECK(by_mean.grad().to_vector() == by_seed.grad().to_vector());
  }
}
