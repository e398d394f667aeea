// A small separable problem for the tests that train (test_nn, test_breakdown): class = which
// half of the six features holds the larger sum. x (n, 2, 3) float, y (n,) int32, on the CPU.
// And toy_model, a small MLP with dropout for it.
#pragma once
#include <cstdint>
#include <vector>

#include <memory>

#include "core/rng.h"
#include "nn/layers.h"
#include "nn/sequential.h"
#include "nn/training.h"

namespace engine::test {

inline nn::Dataset toy_data(int64_t n, uint64_t seed) {
  Generator rng(seed);
  std::vector<float> x(static_cast<size_t>(n * 6));
  std::vector<int32_t> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float left = 0, right = 0;
    for (int64_t j = 0; j < 6; ++j) {
      const float v = rng.uniform();
      x[static_cast<size_t>(i * 6 + j)] = v;
      (j < 3 ? left : right) += v;
    }
    y[static_cast<size_t>(i)] = left > right ? 1 : 0;
  }
  return {Tensor::from_vector(x, {n, 2, 3}), Tensor::from_ints(y, {n})};
}

// Flatten -> Dense(16, relu) -> Dropout(0.25) -> Dense(2, softmax), Adam, built on the CPU
// from seed 7: 146 parameters.
inline nn::Sequential toy_model(float learning_rate = 0.01f) {
  nn::Sequential model{nn::flatten(), nn::dense(16, Activation::Relu), nn::dropout(0.25f),
                       nn::dense(2, Activation::Softmax)};
  model.build({2, 3}, Device::cpu(), 7);
  model.compile(std::make_unique<nn::Adam>(learning_rate), nn::Loss::SparseCategoricalCrossentropy);
  return model;
}

}  // namespace engine::test
