// Seed 000: the TensorFlow MNIST MLP, timed on the CPU and the GPU.
//   Flatten -> Dense(128, relu) -> Dropout(0.2) -> Dense(10, softmax)
//   --wide: Flatten -> Dense(1000, relu) -> Dropout(0.2) -> Dense(1000, relu) -> Dropout(0.2)
//           -> Dense(10, softmax)
// Adam (Keras defaults), sparse categorical cross-entropy, batch 32, 10 epochs, then
// evaluate on the test set. The article measured 52 s (CPU) vs 123 s (GPU) for the small
// model and 390 s vs 224 s for the wide one, on an i5-6200U and a GeForce 940M.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include "apps/common/app_options.h"
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

nn::Dataset to_device(const datasets::LabeledImages& images, Device device) {
  return {Tensor::from_vector(images.pixels, {images.count, images.rows, images.cols}, device),
          Tensor::from_ints(images.labels, {images.count}, device)};
}

// The median over epochs of seconds per step, in microseconds: the first epoch also pays
// for warm-up (allocations, the graph's recording), which the median leaves out.
double median_step_microseconds(const nn::History& history) {
  std::vector<double> per_step;
  for (const nn::EpochRecord& e : history.epochs) {
    if (e.steps > 0) per_step.push_back(e.seconds / static_cast<double>(e.steps) * 1e6);
  }
  if (per_step.empty()) return 0.0;
  std::sort(per_step.begin(), per_step.end());
  const size_t mid = per_step.size() / 2;
  return per_step.size() % 2 ? per_step[mid] : (per_step[mid - 1] + per_step[mid]) / 2;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
    const nn::Dataset train = to_device(data.train, device);
    const nn::Dataset test = to_device(data.test, device);

    nn::Sequential model = make_model(wide);
    model.build({data.train.rows, data.train.cols}, device, options.seed);
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
    const double train_seconds = seconds_since(start);
    const nn::EvalResult result = model.evaluate(test, {32, true, nullptr});
    const double total_seconds = seconds_since(start);

    std::printf("Test accuracy: %.4f - test loss: %.4f (%lld images)\n", result.accuracy,
                result.loss, static_cast<long long>(result.samples));
    std::printf("Time on %s: %.2f s (training %.2f s + evaluation %.2f s)\n",
                to_string(device).c_str(), total_seconds, train_seconds, result.seconds);
    const double step_us = median_step_microseconds(history);
    const AllocatorStats memory = backend_for(device).allocator().stats();
    if (!device.is_cpu() && !history.epochs.empty()) {
      if (history.graph_replay) {
        std::printf("Training step: one CUDA graph replay of %lld kernels, median %.1f us/step\n",
                    static_cast<long long>(history.kernels_per_step), step_us);
      } else {
        std::printf("Training step: kernels launched one by one (--no-graph), median %.1f us/step\n",
                    step_us);
      }
      std::printf("Device memory: peak %.1f MiB in use, %zu cudaMalloc calls in the whole run\n",
                  static_cast<double>(memory.peak_bytes) / (1 << 20), memory.system_allocations);
    }
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
      nlohmann::json epochs = nlohmann::json::array();
      for (const nn::EpochRecord& e : history.epochs) {
        epochs.push_back({{"epoch", e.epoch}, {"seconds", e.seconds}, {"steps", e.steps},
                          {"loss", e.loss}, {"accuracy", e.accuracy}});
      }
      record["epochs_run"] = epochs;
      record["final_loss"] = history.epochs.empty() ? nlohmann::json(nullptr)
                                                    : nlohmann::json(history.epochs.back().loss);
      record["test_loss"] = result.loss;
      record["test_accuracy"] = result.accuracy;
      record["train_seconds"] = train_seconds;
      record["median_step_us"] = step_us;
      record["graph_replay"] = history.graph_replay;
      record["kernels_per_step"] = history.kernels_per_step;
      record["peak_device_bytes"] = memory.peak_bytes;
      record["system_allocations"] = memory.system_allocations;
      record["total_seconds"] = total_seconds;
      apps::write_json(options.json_path, record);
      std::cout << "Wrote " << options.json_path << "\n";
    }
    return 0;
  });
}
