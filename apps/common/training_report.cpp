#include "apps/common/training_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/backend.h"
#include "core/error.h"
#include "core/tensor.h"

namespace engine::apps {
namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace

nn::Dataset to_dataset(const datasets::LabeledImages& images, const Shape& sample_shape,
                       Device device, int64_t count) {
  const int64_t per_image = images.rows * images.cols * images.channels;
  ENGINE_CHECK(numel(sample_shape) == per_image, "to_dataset: a sample of shape ",
               to_string(sample_shape), " does not hold the ", images.rows, "x", images.cols, "x",
               images.channels, " values of an image");
  if (count < 0) count = images.count;
  ENGINE_CHECK(count <= images.count, "to_dataset: asked for ", count, " images of ", images.count);
  Shape shape{count};
  shape.insert(shape.end(), sample_shape.begin(), sample_shape.end());
  if (count == images.count) {  // the whole set: no copy of the host vectors
    return {Tensor::from_vector(images.pixels, shape, device),
            Tensor::from_ints(images.labels, {count}, device)};
  }
  // The first `count`: copies of the leading parts of the host vectors.
  const std::vector<float> pixels(images.pixels.begin(), images.pixels.begin() + count * per_image);
  const std::vector<int32_t> labels(images.labels.begin(), images.labels.begin() + count);
  return {Tensor::from_vector(pixels, shape, device), Tensor::from_ints(labels, {count}, device)};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median_step_microseconds(const nn::History& history) {
  std::vector<double> per_step;
  for (const nn::EpochRecord& e : history.epochs) {
    if (e.steps > 0) per_step.push_back(e.seconds / static_cast<double>(e.steps) * 1e6);
  }
  return median(per_step);
}

void print_epoch_seconds(const nn::History& history, int64_t train_samples, int64_t batch_size,
                         const std::string& reference) {
  if (history.epochs.empty()) return;
  std::vector<double> seconds;
  std::printf("Seconds per epoch (training steps only):");
  for (const nn::EpochRecord& e : history.epochs) {
    std::printf(" %.3f", e.seconds);
    seconds.push_back(e.seconds);
  }
  std::printf("; median %.3f s (%s)\n", median(seconds), reference.c_str());
  const int64_t full_steps = (train_samples + batch_size - 1) / batch_size;
  const int64_t steps = history.epochs.back().steps;
  if (steps < full_steps) {
    const double step_us = median_step_microseconds(history);
    std::printf(
        "Epochs cut to %lld of %lld steps: a whole epoch at the median %.3f ms/step "
        "would take about %.2f s\n",
        static_cast<long long>(steps), static_cast<long long>(full_steps), step_us * 1e-3,
        step_us * 1e-6 * static_cast<double>(full_steps));
  }
}

void print_step_report(Device device, const nn::History& history) {
  if (device.is_cpu() || history.epochs.empty()) return;
  const double step_us = median_step_microseconds(history);
  if (history.graph_replay) {
    std::printf("Training step: one CUDA graph replay of %lld kernels, median %.1f us/step\n",
                static_cast<long long>(history.kernels_per_step), step_us);
  } else {
    std::printf("Training step: kernels launched one by one (--no-graph), median %.1f us/step\n",
                step_us);
  }
  const AllocatorStats memory = backend_for(device).allocator().stats();
  std::printf("Device memory: peak %.1f MiB in use, %zu cudaMalloc calls in the whole run\n",
              static_cast<double>(memory.peak_bytes) / (1 << 20), memory.system_allocations);
}

void record_fit(nlohmann::json& record, Device device, const nn::History& history) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const nn::EpochRecord& e : history.epochs) {
    nlohmann::json epoch = {{"epoch", e.epoch},
                            {"seconds", e.seconds},
                            {"steps", e.steps},
                            {"loss", e.loss},
                            {"accuracy", e.accuracy}};
    if (!std::isnan(e.val_loss)) {
      epoch["val_loss"] = e.val_loss;
      epoch["val_accuracy"] = e.val_accuracy;
      epoch["val_seconds"] = e.val_seconds;
    }
    epochs.push_back(epoch);
  }
  record["epochs_run"] = epochs;
  record["final_loss"] =
      history.epochs.empty() ? nlohmann::json(nullptr) : nlohmann::json(history.epochs.back().loss);
  const AllocatorStats memory = backend_for(device).allocator().stats();
  record["median_step_us"] = median_step_microseconds(history);
  record["graph_replay"] = history.graph_replay;
  record["kernels_per_step"] = history.kernels_per_step;
  record["peak_device_bytes"] = memory.peak_bytes;
  record["system_allocations"] = memory.system_allocations;
}

}  // namespace engine::apps
