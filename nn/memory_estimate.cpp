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

// Floats per sample that `layer`, with this output, makes and keeps for the backward pass.
double kept_floats(const Layer& layer, const Shape& output) {
  if (layer.type() == "Flatten") return 0.0;  // a view of its input: no memory of its own
  // A layer with weights keeps its pre-activation (x @ kernel, or the convolution) beside its
  // output: the bias-and-activation op reads one and writes the other.
  const double floats = static_cast<double>(numel(output));
  return layer.param_specs().empty() ? floats : 2.0 * floats;
}

// The estimate from what it is made of: the weights, the floats each sample keeps, a sample's.
MemoryEstimate estimate_of(int64_t weights, double kept, const Shape& sample_shape, int64_t batch,
                           int64_t optimizer_buffers) {
  ENGINE_CHECK(batch >= 1, "estimate_training_memory(): batch must be at least 1, got ", batch);
  ENGINE_CHECK(optimizer_buffers >= 0, "estimate_training_memory(): ", optimizer_buffers,
               " optimizer buffers");
  const auto weight_bytes = static_cast<size_t>(weights) * FLOAT_BYTES;
  const auto samples = static_cast<double>(batch);
  MemoryEstimate e;
  e.batch = batch;
  e.parameters = weight_bytes;
  e.gradients = weight_bytes;
  e.optimizer_state = static_cast<size_t>(optimizer_buffers) * weight_bytes;
  e.activations = to_bytes(samples * kept * FLOAT_BYTES * ACTIVATION_FACTOR);
  // The gathered samples, their labels (4 bytes each, I32 or F32) and the rows' index (I32).
  e.input_batch =
      to_bytes(samples * (static_cast<double>(numel(sample_shape)) + 2.0) * FLOAT_BYTES);
  return e;
}

}  // namespace

MemoryEstimate estimate_training_memory(const Sequential& model, int64_t batch,
                                        int64_t optimizer_buffers) {
  ENGINE_CHECK(model.built(), "estimate_training_memory() needs a built model");
  double kept = 0.0;
  const std::vector<Shape>& shapes = model.layer_output_shapes();
  for (size_t i = 0; i < shapes.size(); ++i) kept += kept_floats(*model.layers()[i], shapes[i]);
  return estimate_of(model.parameter_count(), kept, model.input_shape(), batch, optimizer_buffers);
}

MemoryEstimate estimate_training_memory(Sequential& model, const Shape& sample_shape,
                                        int64_t batch, int64_t optimizer_buffers) {
  ENGINE_CHECK(!model.built(), "estimate_training_memory(): the model is built already (use the "
               "estimate of a built model)");
  int64_t weights = 0;
  double kept = 0.0;
  Shape shape = sample_shape;
  for (const std::shared_ptr<Layer>& layer : model.layers()) {
    shape = layer->build(shape);
    for (const ParamSpec& spec : layer->param_specs()) weights += numel(spec.shape);
    kept += kept_floats(*layer, shape);
  }
  return estimate_of(weights, kept, sample_shape, batch, optimizer_buffers);
}

int64_t state_buffer_count(Optimizer& optimizer) {
  ParameterStore no_weights;
  no_weights.values = Tensor::zeros({0});
  return static_cast<int64_t>(optimizer.state(no_weights).size());
}

std::string memory_size(size_t bytes) {
  const double b = static_cast<double>(bytes);
  char text[32];
  const double gib = 1024.0 * 1024 * 1024;
  if (b >= gib * 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.2f PiB", b / (gib * 1024 * 1024));
  } else if (b >= gib * 1024) {
    std::snprintf(text, sizeof text, "%.2f TiB", b / (gib * 1024));
  } else if (b >= gib) {
    std::snprintf(text, sizeof text, "%.2f GiB", b / gib);
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

void check_memory(size_t need, const std::string& what, const DeviceMemory& memory,
                  size_t already_allocated, Device device, const std::string& hint) {
  if (!memory.known()) return;
  const size_t available = memory.free_bytes + already_allocated;
  if (need <= available) return;
  const std::string where = device.is_cpu() ? "host" : "device";
  throw DeviceError("needs ~" + memory_size(need) + " of " + where + " memory for " + what +
                    ", the " + where + " has " + memory_size(available) + " free of " +
                    memory_size(memory.total_bytes) + ": " + hint);
}

void check_training_memory(const MemoryEstimate& need, const DeviceMemory& memory,
                           size_t already_allocated, Device device) {
  const size_t weights = need.parameters + need.gradients + need.optimizer_state;
  const bool weights_fit = !memory.known() || weights <= memory.free_bytes + already_allocated;
  const std::string hint =
      weights_fit ? "lower --batch-size"
                  : "the weights alone (parameters, gradients and optimizer state, " +
                        memory_size(weights) + ") do not fit, whatever the batch: smaller inputs "
                        "or a smaller model";
  check_memory(need.total(), "batch " + std::to_string(need.batch) + " " + parts(need), memory,
               already_allocated, device, hint);
}

namespace {
// The estimate at debug level, with the memory it is checked against.
void log_estimate(const MemoryEstimate& need, const DeviceMemory& have, Device device) {
  spdlog::debug("memory estimate for training on {}: {}; activations at {:.1f}x what the layers "
                "keep for the backward pass; {} free of {}",
                to_string(device), describe(need), ACTIVATION_FACTOR,
                have.known() ? memory_size(have.free_bytes) : std::string("unknown"),
                have.known() ? memory_size(have.total_bytes) : std::string("unknown"));
}
}  // namespace

MemoryEstimate preflight_training_memory(Sequential& model, int64_t batch,
                                         std::optional<DeviceMemory> memory) {
  const int64_t optimizer_buffers =
      static_cast<int64_t>(model.optimizer().state(model.parameters()).size());
  const MemoryEstimate need = estimate_training_memory(model, batch, optimizer_buffers);
  const DeviceMemory have = memory ? *memory : model.parameters().values.services().memory_info();
  log_estimate(need, have, model.device());
  // The model's buffers are in place already: its weights and gradients (build) and the
  // optimizer's state (just made).
  check_training_memory(need, have, need.parameters + need.gradients + need.optimizer_state,
                        model.device());
  return need;
}

MemoryEstimate preflight_training_memory(Sequential& model, const Shape& sample_shape,
                                         Device device, int64_t batch, int64_t optimizer_buffers,
                                         std::optional<DeviceMemory> memory) {
  const MemoryEstimate need =
      estimate_training_memory(model, sample_shape, batch, optimizer_buffers);
  const DeviceMemory have = memory ? *memory : device_services(device).memory_info();
  log_estimate(need, have, device);
  check_training_memory(need, have, 0, device);
  return need;
}

}  // namespace engine::nn
