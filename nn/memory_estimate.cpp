#include "nn/memory_estimate.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "core/error.h"

namespace engine::nn {
namespace {

constexpr size_t FLOAT_BYTES = 4;

size_t to_bytes(double bytes) { return static_cast<size_t>(std::ceil(bytes)); }

}  // namespace

MemoryEstimate estimate_training_memory(const Sequential& model, int64_t batch,
                                        int64_t optimizer_buffers) {
  ENGINE_CHECK(model.built(), "estimate_training_memory() needs a built model");
  ENGINE_CHECK(batch >= 1, "estimate_training_memory(): batch must be at least 1, got ", batch);
  ENGINE_CHECK(optimizer_buffers >= 0, "estimate_training_memory(): ", optimizer_buffers,
               " optimizer buffers");
  const auto weights = static_cast<size_t>(model.parameter_count());
  const auto samples = static_cast<double>(batch);
  // Floats per sample that the forward pass makes and keeps for the backward pass.
  double kept = 0.0;
  const std::vector<Shape>& shapes = model.layer_output_shapes();
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Layer& layer = *model.layers()[i];
    const double output = static_cast<double>(numel(shapes[i]));
    if (layer.type() == "Flatten") continue;  // a view of its input: no memory of its own
    // A layer with weights keeps its pre-activation (x @ kernel, or the convolution) beside its
    // output: the bias-and-activation op reads one and writes the other.
    kept += layer.param_specs().empty() ? output : 2.0 * output;
  }

  MemoryEstimate e;
  e.batch = batch;
  e.parameters = weights * FLOAT_BYTES;
  e.gradients = weights * FLOAT_BYTES;
  e.optimizer_state = static_cast<size_t>(optimizer_buffers) * weights * FLOAT_BYTES;
  e.activations = to_bytes(samples * kept * FLOAT_BYTES * ACTIVATION_FACTOR);
  // The gathered samples, their labels (4 bytes each, I32 or F32) and the rows' index (I32).
  e.input_batch =
      to_bytes(samples * (static_cast<double>(numel(model.input_shape())) + 2.0) * FLOAT_BYTES);
  return e;
}

std::string memory_size(size_t bytes) {
  const double b = static_cast<double>(bytes);
  char text[32];
  if (b >= 1024.0 * 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.2f GiB", b / (1024.0 * 1024 * 1024));
  } else if (b >= 1024.0 * 1024) {
    std::snprintf(text, sizeof text, "%.1f MiB", b / (1024.0 * 1024));
  } else if (b >= 1024.0) {
    std::snprintf(text, sizeof text, "%.1f KiB", b / 1024.0);
  } else {
    std::snprintf(text, sizeof text, "%zu B", bytes);
  }
  return text;
}

namespace {
// "(parameters 0.4 MiB, gradients 0.4 MiB, ...)"
std::string parts(const MemoryEstimate& e) {
  return "(parameters " + memory_size(e.parameters) + ", gradients " + memory_size(e.gradients) +
         ", optimizer state " + memory_size(e.optimizer_state) + ", activations " +
         memory_size(e.activations) + ", input batch " + memory_size(e.input_batch) + ")";
}
}  // namespace

std::string describe(const MemoryEstimate& e) {
  return "~" + memory_size(e.total()) + " for batch " + std::to_string(e.batch) + " " + parts(e);
}

void check_training_memory(const MemoryEstimate& need, const DeviceMemory& memory,
                           size_t already_allocated, Device device) {
  if (!memory.known()) return;
  const size_t available = memory.free_bytes + already_allocated;
  if (need.total() <= available) return;
  const std::string what = device.is_cpu() ? "host" : "device";
  throw DeviceError("needs ~" + memory_size(need.total()) + " of " + what +
                    " memory for batch " + std::to_string(need.batch) + " " + parts(need) +
                    ", the " + what + " has " + memory_size(available) + " free of " +
                    memory_size(memory.total_bytes) + ": lower --batch-size");
}

MemoryEstimate preflight_training_memory(Sequential& model, int64_t batch,
                                         std::optional<DeviceMemory> memory) {
  const int64_t optimizer_buffers =
      static_cast<int64_t>(model.optimizer().state(model.parameters()).size());
  const MemoryEstimate need = estimate_training_memory(model, batch, optimizer_buffers);
  const DeviceMemory have = memory ? *memory : model.parameters().values.services().memory_info();
  spdlog::debug("memory estimate for training on {}: {}; activations at {:.1f}x what the layers "
                "keep for the backward pass; {} free of {}",
                to_string(model.device()), describe(need), ACTIVATION_FACTOR,
                have.known() ? memory_size(have.free_bytes) : std::string("unknown"),
                have.known() ? memory_size(have.total_bytes) : std::string("unknown"));
  // The model's buffers are in place already: its weights and gradients (build) and the
  // optimizer's state (just made).
  check_training_memory(need, have, need.parameters + need.gradients + need.optimizer_state,
                        model.device());
  return need;
}

}  // namespace engine::nn
