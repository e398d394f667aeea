// Regression on a CSV file: read a table of numbers, split it into a training and a test part,
// fit a few Dense layers with the mean squared error, evaluate on the test part and predict.
//
// data.csv (next to this file) has a header "x1,x2,x3,y" and 400 rows: three features drawn
// uniformly from [-1, 1] and the target y = sin(2 x1) + x2 x3 + 0.5 x3^2 plus a little noise
// (normal, standard deviation 0.05). The rows are in random order, so the first 320 can train
// and the last 80 test.
//
//   csv_regression [--gpu] [path/to/data.csv]
//
// Prints what it did and, last, "test mse: X" (the mean squared error on the 80 test rows).
#include <engine/core/device_services.h>
#include <engine/datasets/csv.h>
#include <engine/nn/layers.h>
#include <engine/nn/sequential.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

using namespace engine;

int main(int argc, char** argv) {
  // The command line: --gpu runs on the first GPU, anything else is the CSV's path.
  Device device = Device::cpu();
  std::string path = DATA_CSV;  // set by CMakeLists.txt
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--gpu") device = Device::cuda();
    else path = arg;
  }
  std::string why_not;
  if (!device_available(device, &why_not)) {
    std::fprintf(stderr, "no GPU to run on: %s\n", why_not.c_str());
    return 1;
  }

  try {
    // 1. The file: "y" is the target, every other column a feature. x: (400, 3), y: (400,).
    const datasets::CsvData data = datasets::load_csv(path, {"y"}, datasets::CsvTarget::Values);
    const int64_t rows = data.x.dim(0), features = data.x.dim(1);
    std::printf("read %s: %lld rows, %lld features\n", path.c_str(), static_cast<long long>(rows),
                static_cast<long long>(features));

    // 2. Train on the first 80%, test on the rest. slice() takes a run of elements: the rows
    //    [0, n_train) of x are its first n_train * features numbers. Then onto the device.
    const int64_t n_train = rows * 8 / 10, n_test = rows - n_train;
    const nn::Dataset train{data.x.slice(0, {n_train, features}).to(device),
                            data.y.slice(0, {n_train}).to(device)};
    const nn::Dataset test{data.x.slice(n_train * features, {n_test, features}).to(device),
                           data.y.slice(n_train, {n_test}).to(device)};

    // 3. The model: two hidden layers and one linear output, the usual head for regression.
    nn::Sequential model{nn::dense(32, Activation::Tanh), nn::dense(32, Activation::Tanh),
                         nn::dense(1)};
    model.build({features}, device, /*seed=*/1);
    model.compile(std::make_unique<nn::Adam>(0.01f), nn::Loss::MeanSquaredError);
    model.summary(std::cout);

    // 4. Fit. The progress line per epoch is turned off (100 of them); the history has them all.
    nn::FitOptions options;
    options.epochs = 100;
    options.batch_size = 32;
    options.seed = 1;
    options.verbose = false;
    const nn::History history = model.fit(train, options);
    for (const nn::EpochRecord& epoch : history.epochs)
      if (epoch.epoch == 1 || epoch.epoch % 25 == 0)
        std::printf("epoch %3d  loss (mse) %.5f  mae %.4f\n", epoch.epoch, epoch.loss, epoch.mae);

    // 5. Evaluate on rows the model has never seen: the loss is the test MSE, mae beside it.
    const nn::EvalResult result = model.evaluate(test);

    // 6. Predict: the model's output for the first five test rows, next to the truth.
    const std::vector<float> predicted = model.predict(test.x).to_vector();
    const std::vector<float> truth = test.y.to_vector();
    std::printf("first test rows: predicted vs true y\n");
    for (size_t i = 0; i < 5; ++i) std::printf("  %8.4f  %8.4f\n", predicted[i], truth[i]);

    std::printf("test mae: %.4f\n", result.mae);
    std::printf("test mse: %.4f\n", result.loss);
    return 0;
  } catch (const std::exception& e) {  // engine::Error: one line naming the problem
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
