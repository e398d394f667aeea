// Seed 004's MNIST run: the classic Keras MNIST CNN, timed per epoch on CPU, GPU and cuDNN.
//   Conv2D(32, 3, valid, relu) -> Conv2D(64, 3, valid, relu) -> MaxPool(2) -> Dropout(0.25)
//   -> Flatten -> Dense(128, relu) -> Dropout(0.5) -> Dense(10, softmax)
// Adadelta (learning rate 1.0, rho 0.95, epsilon 1e-7: Keras 2's defaults then), sparse
// categorical cross-entropy, batch 128, 12 epochs, validation on the test set after every
// epoch as the Keras example does; images reshaped to (N, 28, 28, 1); 1,199,882 parameters.
// The article measured seconds per epoch: CPU 58, GPU 18, GPU + cuDNN 9 (i5-3210m, GT 640M).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "apps/common/app_options.h"
#include "apps/common/training_report.h"
#include "core/backend.h"
#include "datasets/mnist.h"
#include "nn/layers.h"
#include "nn/sequential.h"
#include "nn/weights_io.h"

using namespace engine;

namespace {

nn::Sequential make_model() {
  return nn::Sequential{nn::conv2d(32, 3, Padding::Valid, Activation::Relu),
                        nn::conv2d(64, 3, Padding::Valid, Activation::Relu),
                        nn::max_pool2d(2),
                        nn::dropout(0.25f),
                        nn::flatten(),
                        nn::dense(128, Activation::Relu),
                        nn::dropout(0.5f),
                        nn::dense(10, Activation::Softmax)};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Seed 004: the Keras MNIST CNN, seconds per epoch on CPU, GPU or cuDNN",
               "mnist_cnn"};
  apps::CommonOptions options;
  options.dataset = "mnist";
  options.batch_size = 128;
  options.epochs = 12;
  bool no_graph = false;
  int64_t test_images = 0;
  apps::add_common_flags(app, options, {"mnist", "fashion", "synthetic"});
  app.add_option("--test-images", test_images,
                 "validate and evaluate on the first N test images only (0: all), for quick runs")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app.add_flag("--no-graph", no_graph,
               "GPU: launch every kernel of every step from the host instead of replaying one "
               "recorded CUDA graph per step (to see what the graph saves)");

  return apps::run_app(app, argc, argv, [&]() {
    const Device device = apps::apply_common_options(options);
    if (options.epochs == 0 && options.load_path.empty()) {
      throw apps::UsageError("--epochs 0 only makes sense with --load (evaluate a saved model)");
    }
    std::cout << "Device: " << backend_for(device).name() << "\n";

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

    nn::Sequential model = make_model();
    model.build(image, device, options.seed);
    model.summary(std::cout);
    if (!options.load_path.empty()) {
      nn::load_weights(model, options.load_path);
      std::cout << "Loaded weights from " << options.load_path << "\n";
    }
    model.compile(std::make_unique<nn::Adadelta>(), nn::Loss::SparseCategoricalCrossentropy);

    const auto start = std::chrono::steady_clock::now();
    nn::History history;
    if (options.epochs > 0) {
      std::printf("Train on %lld samples, validate on %lld samples\n",
                  static_cast<long long>(train.size()), static_cast<long long>(test.size()));
      nn::FitOptions fit;
      fit.epochs = options.epochs;
      fit.batch_size = options.batch_size;
      fit.steps_per_epoch = options.steps_per_epoch;
      fit.seed = options.seed;
      fit.validation = &test;
      fit.use_graph = !no_graph;
      history = model.fit(train, fit);
    }
    const double train_seconds = apps::seconds_since(start);
    const nn::EvalResult result = model.evaluate(test, {options.batch_size, false, nullptr});
    const double total_seconds = apps::seconds_since(start);

    std::printf("Test loss: %.4f - test accuracy: %.4f (%lld images)\n", result.loss,
                result.accuracy, static_cast<long long>(result.samples));
    apps::print_epoch_seconds(history, train.size(), options.batch_size,
                              "the article, 60,000 images: CPU 58, GPU 18, GPU + cuDNN 9");
    std::printf("Time on %s: %.2f s (training and validation %.2f s + evaluation %.2f s)\n",
                to_string(device).c_str(), total_seconds, train_seconds,
                result.seconds);
    apps::print_step_report(device, history);
    if (!options.save_path.empty()) {
      nn::save_weights(model, options.save_path);
      std::cout << "Saved weights to " << options.save_path << "\n";
    }
    if (!options.json_path.empty()) {
      nlohmann::json record = apps::machine_record(options, device);
      record["app"] = "mnist_cnn";
      record["dataset"] = options.dataset;
      record["data"] = description;
      record["train_samples"] = train.size();
      record["test_samples"] = test.size();
      record["parameters"] = model.parameter_count();
      apps::record_fit(record, device, history);
      record["test_loss"] = result.loss;
      record["test_accuracy"] = result.accuracy;
      record["train_seconds"] = train_seconds;
      record["total_seconds"] = total_seconds;
      apps::write_json(options.json_path, record);
      std::cout << "Wrote " << options.json_path << "\n";
    }
    return 0;
  });
}
