// The fused MLP steps' dispatch point and cost (core/ops/fused_mlp.h).
#include "core/ops/fused_mlp.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/dispatch.h"
#include "core/error.h"

namespace engine {

FusedMlpWorkspace fused_mlp_workspace(const FusedMlpPlan& plan, int64_t batch) {
  FusedMlpWorkspace w;
  int64_t at = 0;
  for (size_t l = 0; l + 1 < plan.layers.size(); ++l) {
    w.out.push_back(at);
    w.grad.push_back(at + batch * plan.layers[l].units);
    at += 2 * batch * plan.layers[l].units;
  }
  w.dlogits = at;
  w.row_loss = at + batch * plan.layers.back().units;
  w.row_hit = w.row_loss + batch;
  const FusedMlpLayer& head = plan.layers.back();
  const int64_t head_floats = (head.inputs + 1) * ((head.units + 3) / 4 * 4);
  w.head_copy[0] = (w.row_hit + batch + 3) / 4 * 4;  // float4-aligned
  w.head_copy[1] = w.head_copy[0] + head_floats;
  at = w.head_copy[1] + head_floats;
  if (plan.layers.size() == 3) {
    const int64_t second = (plan.layers[1].inputs * plan.layers[1].units + 3) / 4 * 4;
    w.layer_copy[0] = at;  // float4-aligned, as the head copies: their rows are bulk copies
    w.layer_copy[1] = at + second;
    w.logit_partials = at + 2 * second;
    at = w.logit_partials + std::max(plan.layers[0].units, plan.layers[1].units) * batch *
                                ((head.units + 3) / 4 * 4);
  }
  w.floats = at;
  return w;
}

namespace {
// fused_mlp_stationary_shape for two hidden layers (at a batch and a head it takes).
FusedMlpStationaryShape two_hidden_shape(const FusedMlpPlan& plan, int64_t sms,
                                         int64_t shared_bytes) {
  FusedMlpStationaryShape shape;
  const FusedMlpLayer &first = plan.layers[0], &second = plan.layers[1];
  const int64_t units = std::max(first.units, second.units);
  int64_t columns = 1;
  while (columns * sms < units && columns < FUSED_MLP_TWO_HIDDEN_MAX_COLUMNS) columns *= 2;
  if (columns * sms < units) {
    shape.why_not = "its " + std::to_string(units) + " units in a hidden layer are more than " +
                    std::to_string(FUSED_MLP_TWO_HIDDEN_MAX_COLUMNS) + " a block on " +
                    std::to_string(sms) + " SMs";
    return shape;
  }
  const int64_t bytes =
      int64_t{sizeof(float)} *
      fused_mlp_two_hidden_layout(static_cast<int>(first.inputs), static_cast<int>(first.units),
                                  static_cast<int>(second.units),
                                  static_cast<int>(plan.layers[2].units),
                                  static_cast<int>(columns))
          .floats;
  if (bytes > shared_bytes) {
    shape.why_not = "a block's share (" + std::to_string(bytes / 1024) + " KiB) is more than its " +
                    std::to_string(shared_bytes / 1024) + " KiB of shared memory";
    return shape;
  }
  shape.columns = columns;
  shape.blocks = (units + columns - 1) / columns;
  shape.shared_bytes = bytes;
  return shape;
}
}  // namespace

FusedMlpStationaryShape fused_mlp_stationary_shape(const FusedMlpPlan& plan, int64_t batch,
                                                   int64_t sms, int64_t shared_bytes) {
  FusedMlpStationaryShape shape;
  const auto refuse = [&shape](std::string why) {
    shape.why_not = std::move(why);
    return shape;
  };
  // ENGINE_FUSED_MLP_KERNEL=streaming leaves every plan to the streaming kernel, to compare
  // the two (tests, docs/FUSED_MLP.md); read on every call, so a test can switch it.
  const char* forced = std::getenv("ENGINE_FUSED_MLP_KERNEL");
  if (forced != nullptr && std::string(forced) == "streaming") {
    return refuse("ENGINE_FUSED_MLP_KERNEL=streaming");
  }
  if (plan.layers.size() != 2 && plan.layers.size() != 3) {
    return refuse("it takes one or two hidden layers, not " +
                  std::to_string(plan.layers.size() - 1));
  }
  if (batch > FUSED_MLP_STATIONARY_MAX_ROWS) {
    return refuse("it takes batches of up to " + std::to_string(FUSED_MLP_STATIONARY_MAX_ROWS) +
                  " rows, not " + std::to_string(batch));
  }
  if (plan.layers.back().units > FUSED_MLP_STATIONARY_MAX_CLASSES) {
    return refuse("it takes up to " + std::to_string(FUSED_MLP_STATIONARY_MAX_CLASSES) +
                  " classes, not " + std::to_string(plan.layers.back().units));
  }
  if (plan.layers.size() == 3) return two_hidden_shape(plan, sms, shared_bytes);
  const FusedMlpLayer& hidden = plan.layers.front();
  if (batch * hidden.inputs > shared_bytes / int64_t{sizeof(float)}) {
    return refuse("the batch's rows alone are more than a block's shared memory");
  }
  int64_t columns = 1;
  while (columns * sms < hidden.units && columns < FUSED_MLP_STATIONARY_MAX_COLUMNS) columns *= 2;
  if (columns * sms < hidden.units) {
    return refuse("its " + std::to_string(hidden.units) + " hidden units are more than " +
                  std::to_string(FUSED_MLP_STATIONARY_MAX_COLUMNS) + " a block on " +
                  std::to_string(sms) + " SMs");
  }
  const auto bytes_with = [&](bool prefetch) {
    return int64_t{sizeof(float)} *
           fused_mlp_stationary_layout(static_cast<int>(batch), static_cast<int>(hidden.inputs),
                                       static_cast<int>(hidden.units),
                                       static_cast<int>(plan.layers.back().units),
                                       static_cast<int>(columns), prefetch)
               .floats;
  };
  shape.prefetch =
      batch == FUSED_MLP_STATIONARY_MAX_ROWS && bytes_with(true) <= shared_bytes;
  const int64_t bytes = bytes_with(shape.prefetch);
  if (bytes > shared_bytes) {
    return refuse("a block's share (" + std::to_string(bytes / 1024) + " KiB) is more than its " +
                  std::to_string(shared_bytes / 1024) + " KiB of shared memory");
  }
  shape.columns = columns;
  shape.blocks = (hidden.units + columns - 1) / columns;
  shape.shared_bytes = bytes;
  return shape;
}

namespace {
// What --profile shows for one call: every step's matmuls (forward, the input gradients below
// the head, the weight gradients) and its Adam, over the parameters and the batches' rows.
OpCall fused_mlp_call(const FusedMlpPlan& plan, int64_t batch, int64_t steps) {
  double flops = 0.0, bytes = 0.0, parameters = 0.0;
  for (size_t l = 0; l < plan.layers.size(); ++l) {
    const FusedMlpLayer& layer = plan.layers[l];
    const double weights = static_cast<double>((layer.inputs + 1) * layer.units);
    const double products = l == 0 ? 2.0 : 3.0;  // forward, weight gradient (+ input gradient)
    flops += products * 2.0 * static_cast<double>(batch) * weights;
    parameters += weights;
  }
  flops += 12.0 * parameters;                // Adam
  bytes += 7.0 * 4.0 * parameters;           // p, g, m, v read; p, m, v written
  bytes += 4.0 * static_cast<double>(batch * plan.layers.front().inputs);  // the batch's rows
  std::string shape = std::to_string(steps) + " steps x " + std::to_string(batch);
  for (const FusedMlpLayer& layer : plan.layers) shape += " " + std::to_string(layer.units);
  return OpCall{"fused_mlp_steps", shape,
                OpCost{flops * static_cast<double>(steps), bytes * static_cast<double>(steps)}};
}
}  // namespace

namespace raw {

void fused_mlp_steps(const FusedMlpPlan& plan, Tensor& params, Tensor& m, Tensor& v,
                     const Tensor& x, const Tensor& labels, const Tensor& order, int64_t batch,
                     int64_t steps, Tensor& step_counter, Tensor& workspace, Tensor& loss_sum,
                     Tensor& correct) {
  ENGINE_CHECK(!plan.layers.empty() &&
                   static_cast<int64_t>(plan.layers.size()) <= FUSED_MLP_MAX_LAYERS &&
                   plan.layers.back().units <= FUSED_MLP_MAX_CLASSES,
               "fused_mlp_steps: 1 to ", FUSED_MLP_MAX_LAYERS, " layers and at most ",
               FUSED_MLP_MAX_CLASSES, " classes");
  ENGINE_CHECK(batch >= 1 && steps >= 0 && order.numel() >= batch * steps,
               "fused_mlp_steps: ", steps, " steps of ", batch, " rows need as many in the order (",
               order.numel(), ")");
  ENGINE_CHECK(workspace.numel() >= fused_mlp_workspace_floats(plan, batch),
               "fused_mlp_steps: workspace too small");
  if (steps == 0) return;
  dispatch(params, [&] { return fused_mlp_call(plan, batch, steps); },
           [&] { cpu::fused_mlp_steps(plan, params, m, v, x, labels, order, batch, steps,
                                      step_counter, workspace, loss_sum, correct); },
           [&] { ENGINE_CUDA(cuda::fused_mlp_steps(plan, params, m, v, x, labels, order, batch,
                                                   steps, step_counter, workspace, loss_sum,
                                                   correct)); });
}

}  // namespace raw
}  // namespace engine
