// A whole MLP training step, many steps in one call: the fused kernel of the small-model lesson
// (docs/FUSED_MLP.md). The model is Dense layers (ReLU or none, each optionally followed by
// Dropout) under a Dense head trained with softmax cross-entropy, and Adam; per step it does
// what Sequential::train_step does for that model (gather the batch by the epoch's order ->
// forward -> loss -> backward -> Adam -> add the batch's loss and correct rows to the sums),
// with the same dropout masks (core/rng.h's dropout_uniform, keyed per Dropout layer) and the
// same Adam step size, so the weights agree with the op-by-op path to float rounding.
// Implementations: cpu/fused_mlp.cpp (the reference, phase by phase in plain loops, with the
// CPU backend's own Dropout and Adam) and
// kernels/fused_mlp.cu (one persistent kernel, the phases separated by grid-wide barriers).
#pragma once
#include <cstdint>
#include <vector>

#include "core/ops/optimizers.h"
#include "core/tensor.h"

namespace engine {

// One Dense layer of the plan. Its kernel (inputs x units, row-major) and bias (units) lie
// one after the other in the flat parameter buffer from `offset` on: (inputs + 1) x units
// numbers, the bias as the kernel's last row. Adam's moments use the same offsets.
struct FusedMlpLayer {
  int64_t inputs = 0, units = 0;
  int64_t offset = 0;
  bool relu = false;          // hidden layers: ReLU or no activation; the head: none (logits)
  float dropout_rate = 0.0f;  // a Dropout after the layer (0: none); never on the head
  uint64_t dropout_seed = 0;  // that Dropout's stream (derive_seed(training seed, its index))
};

// The fixed part of a run: the layers (the last is the head, at most FUSED_MLP_MAX_CLASSES
// units) and Adam's settings. The batch is per call.
struct FusedMlpPlan {
  std::vector<FusedMlpLayer> layers;
  AdamConfig adam{};
};
constexpr int64_t FUSED_MLP_MAX_LAYERS = 4;
constexpr int64_t FUSED_MLP_MAX_CLASSES = 32;  // one warp lane per class in the head

// Floats of scratch a call with `batch` rows needs: per hidden layer its output and its
// gradient, and the head's gradient, per-row losses and hits.
int64_t fused_mlp_workspace_floats(const FusedMlpPlan& plan, int64_t batch);

namespace raw {
// Runs `steps` training steps of `batch` rows each. Step i takes rows order[i * batch ..
// (i + 1) * batch) of x (N, inputs of the first layer; F32) and labels (N,; I32); dropout
// and Adam read the step counter (an I32 scalar) as train_step does, and the call leaves it
// `steps` higher. params, m and v: the model's flat buffers (ParameterStore::values and
// Adam's state); loss_sum and correct: RunningMetrics' sums, added to. workspace:
// fused_mlp_workspace_floats(plan, batch) floats. Device work only, on the stream.
void fused_mlp_steps(const FusedMlpPlan& plan, Tensor& params, Tensor& m, Tensor& v,
                     const Tensor& x, const Tensor& labels, const Tensor& order, int64_t batch,
                     int64_t steps, Tensor& step_counter, Tensor& workspace, Tensor& loss_sum,
                     Tensor& correct);
}  // namespace raw

namespace cpu {
void fused_mlp_steps(const FusedMlpPlan& plan, Tensor& params, Tensor& m, Tensor& v,
                     const Tensor& x, const Tensor& labels, const Tensor& order, int64_t batch,
                     int64_t steps, Tensor& step_counter, Tensor& workspace, Tensor& loss_sum,
                     Tensor& correct);
}  // namespace cpu

namespace cuda {
void fused_mlp_steps(const FusedMlpPlan& plan, Tensor& params, Tensor& m, Tensor& v,
                     const Tensor& x, const Tensor& labels, const Tensor& order, int64_t batch,
                     int64_t steps, Tensor& step_counter, Tensor& workspace, Tensor& loss_sum,
                     Tensor& correct);
// Whether this GPU can run the kernel: cooperative launches (every block resident at once,
// which the grid-wide barriers need).
bool fused_mlp_supported();
}  // namespace cuda

}  // namespace engine
