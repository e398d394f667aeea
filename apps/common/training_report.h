// What the training apps (mnist_mlp, cifar10_cnn, mnist_cnn) do around model.fit in the same
// way: put a dataset on the device, time the run, print how a GPU step ran, and write the
// fit's part of the --json record.
#pragma once
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "core/device.h"
#include "core/shape.h"
#include "datasets/mnist.h"
#include "nn/training.h"

namespace engine::apps {

// The first `count` images of `images` (all of them when count < 0) on `device`:
// x (count, *sample_shape) float, y (count,) int32. sample_shape must hold rows x cols x
// channels values, e.g. {28, 28} for an MLP, {28, 28, 1} or {32, 32, 3} for a CNN (NHWC).
nn::Dataset to_dataset(const datasets::LabeledImages& images, const Shape& sample_shape,
                       Device device, int64_t count = -1);

double seconds_since(std::chrono::steady_clock::time_point start);

// The median over epochs of seconds per step, in microseconds: the first epoch also pays
// for warm-up (allocations, the graph's recording), which the median leaves out.
double median_step_microseconds(const nn::History& history);

// Seconds of every epoch (training steps only, validation excluded), their median and, where
// --steps-per-epoch cut the epochs short, the whole epoch of `train_samples` they extrapolate
// to; then `reference` (the article's figures) in parentheses.
void print_epoch_seconds(const nn::History& history, int64_t train_samples, int64_t batch_size,
                         const std::string& reference);

// On a GPU: how the training step ran (one graph replay of N kernels, or launches one by
// one) with the median time per step, and the device memory it took. Nothing on the CPU.
void print_step_report(Device device, const nn::History& history);

// Adds the fit's fields to a --json record: epochs_run (seconds, steps, loss, accuracy and,
// with validation data, val_loss, val_accuracy, val_seconds per epoch), final_loss,
// median_step_us, graph_replay, kernels_per_step, peak_device_bytes, system_allocations.
void record_fit(nlohmann::json& record, Device device, const nn::History& history);

}  // namespace engine::apps
