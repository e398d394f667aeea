// Seed 000: the TensorFlow MNIST MLP, timed on the CPU and the GPU.
//   Flatten -> Dense(128, relu) -> Dropout(0.2) -> Dense(10, softmax)
//   --wide: Flatten -> Dense(1000, relu) -> Dropout(0.2) -> Dense(1000, relu) -> Dropout(0.2)
//           -> Dense(10, softmax)
// Adam (Keras defaults), sparse categorical cross-entropy, batch 32, 10 epochs, then
// evaluate on the test set. The article measured 52 s (CPU) vs 123 s (GPU) for the small
// model and 390 s vs 224 s for the wide one, on an i5-6200U and a GeForce 940M.
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

nn::Sequential make_model(bool wide) {
  if (wide) {
    return nn::Sequential{nn::flatten(),
                          nn::dense(1000, Activation::Relu),
                          nn::dropout(0.2f),
                          nn::dense(1000, Activation::Relu),
                          nn::dropout(0.2f),
                          nn::dense(10, Activation::Softmax)};
  }
  return nn::Sequential{nn::flatten(), nn::dense(128, Activation::Relu), nn::dropout(0.2f),
                        nn::dense(10, Activation::Softmax)};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Seed 000: MNIST MLP (Keras tutorial model), timed on CPU or GPU", "mnist_mlp"};
  apps::CommonOptions options;
  options.dataset = "mnist";
  bool wide = false, no_graph = false;
  apps::add_common_flags(app, options, {"mnist", "fashion", "synthetic"});
  app.add_flag("--wide", wide, "the seed's wide model: Dense(1000) x 2 with Dropout(0.2)");
  app.add_flag("--no-graph", no_graph,
               "GPU: launch every kernel of every step from the host instead of replaying one "
               "recorded CUDA graph per step (to see what the graph saves)");

  return apps::run_app(app, argc, argv, [&]() {
    const Device device = apps::apply_common_options(options);
    if (options.epochs == 0 && options.load_path.empty()) {
      throw apps::UsageError("--epochs 0 only makes sense with --load (evaluate a saved model)");
    }
    std::cout << "Device: " << backend_for(device).name() << "\n";

    const datasets::DigitsData data =
        datasets::load_digits(options.dataset, options.data_dir, options.seed);
    std::cout << "Data: " << data.description << "\n";
    const Shape image = {data.train.rows, data.train.cols};
    const nn::Dataset train = apps::to_dataset(data.train, image, device);
    const nn::Dataset test = apps::to_dataset(data.test, image, device);

    nn::Sequential model = make_model(wide);
    model.build(image, device, options.seed);
    model.summary(std::cout);
    if (!options.load_path.empty()) {
      nn::load_weights(model, options.load_path);
      std::cout << "Loaded weights from " << options.load_path << "\n";
    }
    model.compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy);

    const auto start = std::chrono::steady_clock::now();
    nn::History history;
    if (options.epochs > 0) {
      nn::FitOptions fit;
      fit.epochs = options.epochs;
      fit.batch_size = options.batch_size;
      fit.steps_per_epoch = options.steps_per_epoch;
      fit.seed = options.seed;
      fit.use_graph = !no_graph;
      history = model.fit(train, fit);
    }
    const double train_seconds = apps::seconds_since(start);
    const nn::EvalResult result = model.evaluate(test, {32, true, nullptr});
    const double total_seconds = apps::seconds_since(start);

    std::printf("Test accuracy: %.4f - test loss: %.4f (%lld images)\n", result.accuracy,
                result.loss, static_cast<long long>(result.samples));
    std::printf("Time on %s: %.2f s (training %.2f s + evaluation %.2f s)\n",
                to_string(device).c_str(), total_seconds, train_seconds, result.seconds);
    apps::print_step_report(device, history);
    if (!options.save_path.empty()) {
      nn::save_weights(model, options.save_path);
      std::cout << "Saved weights to " << options.save_path << "\n";
    }
    if (!options.json_path.empty()) {
      nlohmann::json record = apps::machine_record(options, device);
      record["app"] = "mnist_mlp";
      record["model"] = wide ? "wide" : "small";
      record["dataset"] = options.dataset;
      record["data"] = data.description;
      record["train_samples"] = data.train.count;
      record["test_samples"] = data.test.count;
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
