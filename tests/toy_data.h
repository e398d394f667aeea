// A small separable problem for the tests that train (test_nn, test_breakdown): class = which
// half of the six features holds the larger sum. x (n, 2, 3) float, y (n,) int32, on the CPU.
#pragma once
#include <cstdint>
#include <vector>

#include "core/rng.h"
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

}  // namespace engine::test
