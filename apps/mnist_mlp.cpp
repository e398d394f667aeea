// Seed 000: the TensorFlow MNIST MLP, timed on the CPU and the GPU.
//   Flatten -> Dense(128, relu) -> Dropout(0.2) -> Dense(10, softmax)
//   --wide: Flatten -> Dense(1000, relu) -> Dropout(0.2) -> Dense(1000, relu) -> Dropout(0.2)
//           -> Dense(10, softmax)
// Adam (Keras defaults), sparse categorical cross-entropy, batch 32, 10 epochs, then
// evaluate on the test set. The article measured 52 s (CPU) vs 123 s (GPU) for the small
// model and 390 s vs 224 s for the wide one, on an i5-6200U and a GeForce 940M.
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

namespace {

// The article's two Keras models, layer by layer as its scripts list them (Keras gives Flatten
// the input shape (28, 28); here build() takes it from the data).
nn::Sequential mnist_mlp(bool wide) {
  if (!wide) {  // the TensorFlow tutorial's model, 101,770 parameters
    return nn::Sequential{nn::flatten(),
                          nn::dense(128, Activation::Relu),
                          nn::dropout(0.2f),
                          nn::dense(10, Activation::Softmax)};
  }
  // --wide: two hidden layers of 1,000, each with its dropout; 1,796,010 parameters
  return nn::Sequential{nn::flatten(),
                        nn::dense(1000, Activation::Relu),
                        nn::dropout(0.2f),
                        nn::dense(1000, Activation::Relu),
                        nn::dropout(0.2f),
                        nn::dense(10, Activation::Softmax)};
}

}  // namespace

int main(int argc, char** argv) {
  apps::Flags flags{"Seed 000: MNIST MLP (Keras tutorial model), timed on CPU or GPU", "mnist_mlp"};
  apps::CommonOptions options;
  options.dataset = "mnist";
  bool wide = false, no_graph = false;
  nn::FusedUse fused = nn::FusedUse::Auto;
  apps::add_common_flags(flags, options, {"mnist", "fashion", "synthetic"});
  flags.flag("--wide", wide, "the seed's wide model: Dense(1000) x 2 with Dropout(0.2)");
  apps::add_no_graph_flag(flags, no_graph);
  apps::add_fused_flags(flags, fused);

  return apps::run_app(flags, argc, argv, [&]() {
    const Device device = apps::start_training(options);

    const datasets::DigitsData data =
        datasets::load_digits(options.dataset, options.data_dir, options.seed);
    std::cout << "Data: " << data.description << "\n";
    const Shape image = {data.train.rows, data.train.cols};
    const nn::Dataset train = apps::to_dataset(data.train, image, device);
    const nn::Dataset test = apps::to_dataset(data.test, image, device);

    nn::Sequential model = mnist_mlp(wide);
    apps::TrainingPlan plan;
    plan.optimizer = std::make_unique<nn::Adam>();
    plan.use_graph = !no_graph;
    plan.fused = fused;
    plan.eval_batch_size = 32;  // Keras' evaluate default, whatever --batch-size trains with
    const apps::TrainingRun run =
        apps::train_and_report(model, image, device, options, train, test, std::move(plan));
    apps::write_run_json(options, device, model, run,
                         {{"app", "mnist_mlp"},
                          {"model", wide ? "wide" : "small"},
                          {"data", data.description},
                          {"train_samples", data.train.count},
                          {"test_samples", data.test.count}});
    return 0;
  });
}
