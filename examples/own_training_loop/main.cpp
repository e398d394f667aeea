// A training loop of your own: what fit() does, written out, so that you can change any part
// of it (the order of the batches, when to stop, what to print). Each step is one call to
// Sequential::train_step (nn/train_step.h): it cuts the batch's rows out of the data, runs
// forward, the loss and backward, updates the weights and adds the batch's loss and accuracy
// to a RunningMetrics on the device.
//
// The task: is a point of the square [-1, 1]^2 inside the circle of radius 0.7? 1,024 points.
//
//   own_training_loop [--gpu]
//
// Prints each epoch's loss and accuracy, then "final loss: X" (the last epoch's mean loss).
#include <engine/core/device_services.h>
#include <engine/core/rng.h>
#include <engine/nn/layers.h>
#include <engine/nn/sequential.h>
#include <engine/nn/train_step.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace engine;

int main(int argc, char** argv) {
  Device device = Device::cpu();
  if (argc > 1 && std::string(argv[1]) == "--gpu") device = Device::cuda();
  std::string why_not;
  if (!device_available(device, &why_not)) {
    std::fprintf(stderr, "no GPU to run on: %s\n", why_not.c_str());
    return 1;
  }

  // The data, on the device: x (1024, 2) uniform in the square, label 1 inside the circle.
  const int64_t n = 1024;
  Generator points(/*seed=*/7);
  std::vector<float> x;
  std::vector<int32_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    const float a = 2.0f * points.uniform() - 1.0f, b = 2.0f * points.uniform() - 1.0f;
    x.push_back(a);
    x.push_back(b);
    labels.push_back(a * a + b * b < 0.7f * 0.7f ? 1 : 0);
  }
  const nn::Dataset train{Tensor::from_vector(x, {n, 2}, device), Tensor::from_ints(labels, {n}, device)};

  // The model, built and compiled as for fit(): compile() chooses the optimizer and the loss
  // that train_step will use.
  nn::Sequential model{nn::dense(32, Activation::Relu), nn::dense(32, Activation::Relu),
                       nn::dense(2, Activation::Softmax)};
  model.build({2}, device, /*seed=*/7);
  model.compile(std::make_unique<nn::Adam>(0.01f), nn::Loss::SparseCategoricalCrossentropy);
  model.set_training_seed(7);  // dropout's masks, had the model any dropout

  const int epochs = 30;
  const int64_t batch_size = 32;
  std::vector<int32_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);  // 0, 1, ..., n - 1: row numbers
  std::mt19937 shuffle_rng(7);
  nn::RunningMetrics metrics(device);  // the epoch's sums, kept on the device
  double loss = 0.0;

  for (int epoch = 1; epoch <= epochs; ++epoch) {
    // A new order of the rows every epoch, and sums that start again from zero.
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    metrics.reset();
    for (int64_t first = 0; first < n; first += batch_size) {
      const int64_t count = std::min(batch_size, n - first);
      // The batch is a list of row numbers, an int32 tensor on the model's device.
      const std::vector<int32_t> rows(order.begin() + first, order.begin() + first + count);
      model.train_step(train, Tensor::from_ints(rows, {count}, device), metrics);
      metrics.samples += count;  // train_step adds the sums; counting the samples is ours
    }
    // The means over the epoch: each reads one number back from the device, so once an epoch
    // rather than once a step.
    loss = metrics.loss();
    if (epoch == 1 || epoch % 5 == 0)
      std::printf("epoch %2d  loss %.4f  accuracy %.4f\n", epoch, loss, metrics.accuracy(true));
  }
  std::printf("final loss: %.4f\n", loss);
  return 0;
}
