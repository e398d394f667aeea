#include "nn/fused_mlp.h"

#include <algorithm>
#include <cstdio>

#include "core/device_services.h"
#include "core/ops/matmul.h"
#include "core/ops/optimizers.h"
#include "nn/fit_run.h"
#include "nn/layers.h"
#include "nn/sequential.h"

namespace engine::nn {

FusedMlpLimits fused_mlp_limits(Device device) {
  const DeviceServices& services = device_services(device);
  const DeviceServices::FusedMlpRoom room = services.fused_mlp_room();
  return {room.l2_bytes, services.tf32(), services.vendor_libraries(), room.sms,
          room.shared_bytes_per_block};
}

namespace {

// The plan of an MLP the kernel runs, or why the model is not one (a non-empty line).
std::string plan_of(Sequential& model, FusedMlpPlan& plan) {
  if (model.loss() != Loss::SparseCategoricalCrossentropy) {
    return "its loss is not sparse categorical cross-entropy";
  }
  const auto* adam = dynamic_cast<const Adam*>(&model.optimizer());
  if (adam == nullptr) return "its optimizer is not Adam";
  plan.adam = adam->config();
  const ParameterStore& store = model.parameters();
  const float* base = store.values.data<float>();
  const auto& layers = model.layers();
  int64_t dropouts = 0, dense = 0;
  bool dropout_taken = false;  // the last Dense layer has its Dropout
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& layer = *layers[i];
    const std::string type = layer.type();
    if (type == "Flatten" && i == 0) continue;
    if (type == "Dropout" && !plan.layers.empty() && !dropout_taken && i + 1 < layers.size()) {
      dropout_taken = true;
      plan.layers.back().dropout_rate = static_cast<float>(layer.config().at(0).value);
      plan.layers.back().dropout_seed = model.dropout_stream(dropouts++);
      continue;
    }
    if (type != "Dense") return "it has a " + type + " layer where the kernel takes Dense layers";
    const bool head = i + 1 == layers.size();
    const Activation act = layer.activation();
    if (head ? act != Activation::Softmax && act != Activation::None
             : act != Activation::Relu && act != Activation::None) {
      return head ? "its head is not softmax" : "a hidden layer's activation is not ReLU";
    }
    // The kernel and the bias, one after the other in the flat buffer (nn/parameters.h).
    const Parameter& kernel = store.params.at(static_cast<size_t>(2 * dense));
    FusedMlpLayer d;
    d.inputs = kernel.value.dim(0);
    d.units = kernel.value.dim(1);
    d.offset = kernel.value.data<float>() - base;
    d.relu = act == Activation::Relu;
    plan.layers.push_back(d);
    ++dense;
    dropout_taken = false;
  }
  if (plan.layers.empty()) return "it has no Dense layer";
  if (static_cast<int64_t>(plan.layers.size()) > FUSED_MLP_MAX_LAYERS) {
    return "it has more than " + std::to_string(FUSED_MLP_MAX_LAYERS) + " Dense layers";
  }
  if (plan.layers.back().units > FUSED_MLP_MAX_CLASSES) {
    return "it has more than " + std::to_string(FUSED_MLP_MAX_CLASSES) + " classes";
  }
  return "";
}

// Whether the op-by-op path computes every product of a step in FP32 even under --tf32
// (gpu_matmul_stays_fp32, core/ops/matmul.h): then the fused kernels, which compute in FP32,
// do the arithmetic it does. Per layer: the forward pass (batch x units over its inputs), the
// weight gradient (inputs x units over the batch) and, above the first, the input gradient.
bool products_stay_fp32(const FusedMlpPlan& plan, int64_t batch, int64_t sms) {
  for (size_t l = 0; l < plan.layers.size(); ++l) {
    const FusedMlpLayer& d = plan.layers[l];
    if (!gpu_matmul_stays_fp32(batch, d.units, d.inputs, sms) ||
        !gpu_matmul_stays_fp32(d.inputs, d.units, batch, sms) ||
        (l > 0 && !gpu_matmul_stays_fp32(batch, d.inputs, d.units, sms))) {
      return false;
    }
  }
  return true;
}

std::string megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

}  // namespace

FusedMlpChoice choose_fused_mlp(Sequential& model, const FitOptions& options,
                                bool resident_data, const FusedMlpLimits& limits) {
  FusedMlpChoice choice;
  choice.why_not = plan_of(model, choice.plan);
  if (!choice.why_not.empty()) return choice;
  choice.mlp = true;
  const int64_t state = 3 * model.parameter_count() * int64_t{sizeof(float)};
  const FusedMlpStationaryShape stationary = fused_mlp_stationary_shape(
      choice.plan, options.batch_size, limits.sms, limits.shared_bytes);
  const auto why_not = [&]() -> std::string {
    if (options.fused == FusedUse::Off) return "--no-fused";
    if (!options.use_graph) return "--no-graph launches every kernel from the host";
    if (limits.state_bytes == 0) return "this device cannot run it (it needs a GPU with cooperative launches)";
    if (limits.tf32 && !products_stay_fp32(choice.plan, options.batch_size, limits.sms)) {
      return "--tf32: the op-by-op path runs its large products on the tensor cores, the fused "
             "kernels in FP32";
    }
    if (limits.vendor) return "--device cudnn runs the matmuls in cuBLAS";
    if (!options.callbacks.empty()) return "callbacks may act after any step";
    if (options.communicator) return "data-parallel ranks average every step's gradients";
    if (!resident_data) return "its batches do not come from a float data set on the device";
    if (state > limits.state_bytes) {
      return "the parameters and Adam's moments (" + megabytes(state) +
             ") are larger than the GPU's L2 cache (" + megabytes(limits.state_bytes) + ")";
    }
    if (options.fused == FusedUse::Auto && !stationary.why_not.empty()) {
      return "the weight-stationary kernel does not take it (" + stationary.why_not +
             "); --fused runs the streaming one";
    }
    return "";
  }();
  choice.use = why_not.empty();
  choice.stationary = choice.use && stationary.why_not.empty();
  choice.why_not = why_not;
  return choice;
}

bool resident_float_data(const BatchSource& source) {
  return source.epoch_order() != nullptr && source.rows().x.dtype() == DType::F32;
}

FusedSteps::FusedSteps(FitRun& run, FusedMlpPlan plan)
    : run_(run),
      plan_(std::move(plan)),
      workspace_(Tensor::empty({fused_mlp_workspace_floats(plan_, run.full_batch)}, DType::F32,
                               run.model.device())) {
  const auto moments = run.model.optimizer().state(run.model.parameters());  // Adam: m, v
  m_ = moments.at(0).second;
  v_ = moments.at(1).second;
}

int64_t FusedSteps::launch(int64_t s) {
  const int64_t batch = run_.options.batch_size, n = run_.source.size();
  const int64_t full_steps = std::min(run_.steps, n / batch);  // steps of a whole batch
  int64_t end = s + 1;
  if (s < full_steps && full_steps_launched_ >= 2) {
    end = std::min(full_steps, s + most_steps_a_launch(run_.options));
  }
  const int64_t rows = s < full_steps ? batch : n - s * batch;
  if (s < full_steps) full_steps_launched_ += end - s;
  run_.fused_steps += end - s;
  Sequential& model = run_.model;
  // The optimizer's rate now: a schedule may have changed it since the last launch.
  plan_.adam = dynamic_cast<Adam&>(model.optimizer()).config();
  const Tensor order = run_.source.epoch_order()->slice(s * batch, {(end - s) * rows});
  const Dataset& data = run_.source.rows();
  Tensor counter = model.step_counter();
  raw::fused_mlp_steps(plan_, model.parameters().values, m_, v_, data.x, data.y, order, rows,
                       end - s, counter,
                       workspace_, run_.running.loss_sum, run_.running.correct);
  run_.running.samples += (end - s) * rows;
  return end;
}

}  // namespace engine::nn
