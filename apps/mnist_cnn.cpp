// Seed 004's MNIST run: the classic Keras MNIST CNN, timed per epoch on CPU, GPU and cuDNN.
//   Conv2D(32, 3, valid, relu) -> Conv2D(64, 3, valid, relu) -> MaxPool(2) -> Dropout(0.25)
//   -> Flatten -> Dense(128, relu) -> Dropout(0.5) -> Dense(10, softmax)
// Adadelta (learning rate 1.0, rho 0.95, epsilon 1e-7: Keras 2's defaults then), sparse
// categorical cross-entropy, batch 128, 12 epochs, validation on the test set after every
// epoch as the Keras example does; images reshaped to (N, 28, 28, 1); 1,199,882 parameters.
// The article measured seconds per epoch: CPU 58, GPU 18, GPU + cuDNN 9 (i5-3210m, GT 640M).
#include <algorithm>
#include <iostream>
#include <memory>
#include <utility>

#include "apps/common/app_flags.h"
#include "apps/common/app_options.h"
#include "apps/common/training_report.h"
#include "datasets/mnist.h"
#include "nn/layers.h"
#include "nn/sequential.h"

using namespace engine;

int main(int argc, char** argv) {
  apps::Flags flags{"Seed 004: the Keras MNIST CNN, seconds per epoch on CPU, GPU or cuDNN",
                    "mnist_cnn"};
  apps::CommonOptions options;
  options.dataset = "mnist";
  options.batch_size = 128;
  options.epochs = 12;
  bool no_graph = false;
  int64_t test_images = 0;
  apps::add_common_flags(flags, options, {"mnist", "fashion", "synthetic"});
  flags.option("--test-images", test_images,
               "validate and evaluate on the first N test images only (0: all), for quick runs")
      .check(apps::finite_in(int64_t{0}, int64_t{1} << 40));
  apps::add_no_graph_flag(flags, no_graph);

  return apps::run_app(flags, argc, argv, [&]() {
    const Device device = apps::start_training(options);

    nn::Dataset train, test;
    std::string description;
    Shape image;
    {
      const datasets::DigitsData data =
          datasets::load_digits(options.dataset, options.data_dir, options.seed);
      description = data.description;
      std::cout << "Data: " << description << "\n";
      image = {data.train.rows, data.train.cols, 1};  // one channel, NHWC
      train = apps::to_dataset(data.train, image, device);
      test = apps::to_dataset(data.test, image, device,
                              test_images > 0 ? std::min(test_images, data.test.count) : -1);
    }

    // The Keras example's model, top to bottom; 1,199,882 parameters.
    nn::Sequential model{
        // two 3x3 convolutions without padding: 28x28 -> 26x26x32 -> 24x24x64
        nn::conv2d(32, 3, Padding::Valid, Activation::Relu),
        nn::conv2d(64, 3, Padding::Valid, Activation::Relu),
        // pooling to 12x12, then dropout
        nn::max_pool2d(2),
        nn::dropout(0.25f),
        // the classifier on the 12*12*64 = 9,216 features
        nn::flatten(),
        nn::dense(128, Activation::Relu),
        nn::dropout(0.5f),
        nn::dense(10, Activation::Softmax)
    };
    apps::TrainingPlan plan;
    plan.optimizer = std::make_unique<nn::Adadelta>();
    plan.validation = &test;  // as the Keras example validates
    plan.use_graph = !no_graph;
    plan.eval_batch_size = options.batch_size;
    plan.eval_progress = false;
    plan.loss_first = true;
    plan.article = "the article, 60,000 images: CPU 58, GPU 18, GPU + cuDNN 9";
    const apps::TrainingRun run =
        apps::train_and_report(model, image, device, options, train, test, std::move(plan));
    apps::write_run_json(options, device, model, run,
                         {{"app", "mnist_cnn"},
                          {"data", description},
                          {"train_samples", train.size()},
                          {"test_samples", test.size()}});
    return 0;
  });
}
