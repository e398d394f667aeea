// A user's first program against the installed engine: a small classifier on made-up data,
// trained on the CPU for a few epochs; prints the first and last epoch's loss.
#include <engine/nn/layers.h>
#include <engine/nn/sequential.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <vector>

using namespace engine;

int main() {
  // 256 points in 4 dimensions; the class is whether their sum is positive.
  const int64_t n = 256;
  std::vector<float> x(static_cast<size_t>(n * 4));
  std::vector<int32_t> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float sum = 0.0f;
    for (int64_t j = 0; j < 4; ++j) {
      const float v = static_cast<float>((i * 7 + j * 13) % 17) / 8.0f - 1.0f;
      x[static_cast<size_t>(i * 4 + j)] = v;
      sum += v;
    }
    y[static_cast<size_t>(i)] = sum > 0.0f ? 1 : 0;
  }
  const nn::Dataset train{Tensor::from_vector(x, {n, 4}), Tensor::from_ints(y, {n})};
  nn::Sequential model{nn::dense(16, Activation::Relu), nn::dense(2, Activation::Softmax)};
  model.build({4}, Device::cpu(), 1);
  model.compile(std::make_unique<nn::Adam>(0.01f), nn::Loss::SparseCategoricalCrossentropy);
  std::ostringstream quiet;
  nn::FitOptions options;
  options.epochs = 20;
  options.out = &quiet;
  const nn::History history = model.fit(train, options);
  std::printf("first loss %.4f last loss %.4f\n", history.epochs.front().loss, history.epochs.back().loss);
  return history.epochs.back().loss < history.epochs.front().loss ? 0 : 1;
}
