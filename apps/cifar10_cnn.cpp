// Seed 003: a Keras CIFAR-10 CNN, timed per epoch on one machine after another.
//   Conv2D(32, 3, same) x2 -> MaxPool(2) -> Conv2D(64, 3, same) x2 -> MaxPool(2)
//   -> Conv2D(128, 3, same) x2 -> Flatten -> Dropout(0.3) -> Dense(128, relu) -> Dense(10, softmax)
// The convolutions have no activation in the article's script (only the max pooling and the
// dense relu make the model nonlinear); --relu adds one to each. Adam (Keras defaults), sparse
// categorical cross-entropy, batch 100, 10 epochs, validation on the first 1,000 test images after
// every epoch, then evaluate on the whole test set; 1,337,002 parameters. The article measured
// seconds per epoch: i5-8250u 320, i7-9700k 36, MX150 36, GTX 1060 9, GTX 1080 Ti 4.
#include <algorithm>
#include <iostream>
#include <memory>
#include <utility>

#include "apps/common/app_flags.h"
#include "apps/common/app_options.h"
#include "apps/common/training_report.h"
#include "datasets/cifar10.h"
#include "nn/layers.h"
#include "nn/sequential.h"

using namespace engine;

namespace {

constexpr int64_t kValidationImages = 1000;  // the article's test_images[:1000]

}  // namespace

int main(int argc, char** argv) {
  apps::Flags flags{"Seed 003: CIFAR-10 CNN (Keras), seconds per epoch on CPU, GPU or cuDNN",
                    "cifar10_cnn"};
  apps::CommonOptions options;
  options.dataset = "auto";
  options.batch_size = 100;
  bool relu = false, no_graph = false;
  int64_t test_images = 0;
  apps::add_common_flags(flags, options, {"auto", "cifar10", "synthetic"});
  flags.flag("--relu", relu, "relu after every convolution (the article's script has none)");
  apps::add_no_graph_flag(flags, no_graph);
  flags.option("--test-images", test_images,
               "validate and evaluate on the first N test images only (0: all; validation "
               "takes at most the first 1,000 either way), for quick runs")
      .check(apps::finite_in(int64_t{0}, int64_t{1} << 40));
  flags.footer(
      "--dataset auto (the default) trains on CIFAR-10 where scripts/fetch_data.sh unpacked it "
      "into DATA_DIR/cifar10/cifar-10-batches-bin, and on synthetic data of the same shape "
      "otherwise, saying so.");

  return apps::run_app(flags, argc, argv, [&]() {
    const Device device = apps::start_training(options);

    // The host copies (0.7 GB of floats) are freed once the sets are on the device.
    const Shape image = {datasets::kCifarSide, datasets::kCifarSide, datasets::kCifarChannels};
    nn::Dataset train, validation, test;
    std::string description;
    {
      const datasets::CifarData data =
          datasets::load_cifar10(options.dataset, options.data_dir, options.seed);
      description = data.description;
      std::cout << "Data: " << description << "\n";
      const int64_t tests =
          test_images > 0 ? std::min(test_images, data.test.count) : data.test.count;
      train = apps::to_dataset(data.train, image, device);
      test = apps::to_dataset(data.test, image, device, tests);
      validation = apps::to_dataset(data.test, image, device, std::min(kValidationImages, tests));
    }

    // The article's Keras model, top to bottom; 1,337,002 parameters. Its convolutions have no
    // activation; --relu adds one to each.
    const Activation conv = relu ? Activation::Relu : Activation::None;
    nn::Sequential model{
        // 32x32: two 3x3 convolutions of 32 filters, then pooling to 16x16
        nn::conv2d(32, 3, Padding::Same, conv),
        nn::conv2d(32, 3, Padding::Same, conv),
        nn::max_pool2d(2),
        // 16x16: two of 64 filters, then pooling to 8x8
        nn::conv2d(64, 3, Padding::Same, conv),
        nn::conv2d(64, 3, Padding::Same, conv),
        nn::max_pool2d(2),
        // 8x8: two of 128 filters
        nn::conv2d(128, 3, Padding::Same, conv),
        nn::conv2d(128, 3, Padding::Same, conv),
        // the classifier on the 8*8*128 = 8,192 features
        nn::flatten(),
        nn::dropout(0.3f),
        nn::dense(128, Activation::Relu),
        nn::dense(10, Activation::Softmax)
    };
    apps::TrainingPlan plan;
    plan.optimizer = std::make_unique<nn::Adam>();
    plan.validation = &validation;
    plan.use_graph = !no_graph;
    plan.eval_batch_size = options.batch_size;
    plan.article = "the article: i5-8250u 320, i7-9700k 36, MX150 36, GTX 1060 9, GTX 1080 Ti 4";
    const apps::TrainingRun run =
        apps::train_and_report(model, image, device, options, train, test, std::move(plan));
    apps::write_run_json(options, device, model, run,
                         {{"app", "cifar10_cnn"},
                          {"model", relu ? "relu" : "article"},
                          {"data", description},
                          {"train_samples", train.size()},
                          {"validation_samples", validation.size()},
                          {"test_samples", test.size()}});
    return 0;
  });
}
