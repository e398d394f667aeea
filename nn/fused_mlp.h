// fit()'s fused path for MLPs: where the model and the run allow it, the training steps run
// in the fused kernel (core/ops/fused_mlp.h: one launch for many steps) instead of one
// kernel per op. docs/FUSED_MLP.md tells the lesson; this file decides and drives it.
//
// It applies to [Flatten] -> Dense (ReLU or none) [-> Dropout] ... -> Dense head (softmax or
// none), at most FUSED_MLP_MAX_LAYERS Dense layers and FUSED_MLP_MAX_CLASSES classes, trained
// with sparse categorical cross-entropy and Adam on data resident on the device. By default
// (FusedUse::Auto) it is used where a weight-stationary kernel takes the model (one or two
// hidden layers whose weights fit the SMs' shared memory: core/ops/fused_mlp.h), which is
// faster than the CUDA graph; with --fused (On) also in the streaming kernel, for any MLP; never with
// --no-fused. And only where nothing needs the op-by-op path: not with --no-graph, --tf32 where
// the op-by-op path would use the tensor cores (the kernels compute in FP32, as that path does
// for the small products of the seed's models), callbacks (which may act after any step),
// data-parallel ranks, a device that cannot run it or keep the model's state in its L2 cache,
// or --device cudnn (whose matmuls are cuBLAS's). Each refusal is one line, which the run
// header prints.
// --breakdown counts the launches as compute; the NaN check, for which the kernel keeps no
// gradients, looks at the loss and the weights after every step, launched one at a time.
#pragma once
#include <cstdint>
#include <string>

#include "core/device.h"
#include "core/ops/fused_mlp.h"
#include "core/tensor.h"
#include "nn/training.h"

namespace engine::nn {

class Sequential;
struct FitRun;

// What the device offers the kernel.
struct FusedMlpLimits {
  // The most bytes of parameters and Adam's two moments it takes on: 0 where it cannot run at
  // all (the CPU, a GPU without cooperative launches), else the GPU's L2 cache, which keeps
  // them close to the SMs from step to step (a larger model is faster op by op).
  int64_t state_bytes = 0;
  bool tf32 = false;  // TF32 matmuls allowed (--tf32), for the products large enough to gain
  bool vendor = false;  // --device cudnn: the matmuls in cuBLAS
  // The weight-stationary kernels' room: SMs (a block each) and shared memory a block.
  int64_t sms = 0, shared_bytes = 0;
};
FusedMlpLimits fused_mlp_limits(Device device);

struct FusedMlpChoice {
  bool mlp = false;   // the model and its loss and optimizer are what the kernel runs
  bool use = false;   // ... and this run takes it
  bool stationary = false;  // where use: in a weight-stationary kernel (else the streaming)
  std::string why_not;  // where !use: one line (for a model it does not run, what in it)
  FusedMlpPlan plan;    // where mlp: the layers (dropout keys from the model's training seed)
  // The kernel's name, as the run header, History::fused_kernel and --json give it.
  const char* kernel() const { return stationary ? "stationary" : "streaming"; }
};
// `resident_data`: the batches come from a float data set on the device with an epoch order
// there (resident_float_data).
FusedMlpChoice choose_fused_mlp(Sequential& model, const FitOptions& options,
                                bool resident_data, const FusedMlpLimits& limits);
// Whether `source` is what the kernel reads: float inputs on the device, picked in an order the
// source holds there (BatchSource::epoch_order).
bool resident_float_data(const BatchSource& source);

// The fused steps of one run, as fit() calls them: launch(s) runs steps s .. end - 1 of the
// epoch in one call and returns end. A launch never mixes full and partial batches, and takes
// one step at a time during the warm-up (the first two full steps: the kernel's first launch,
// which fit's warm-up measures apart from the steady steps); otherwise up to
// STEPS_PER_LAUNCH steps, so that a signal or the progress line waits at most that many, or
// one with the NaN check, which looks at the weights after every step.
class FusedSteps {
 public:
  static constexpr int64_t STEPS_PER_LAUNCH = 256;
  static int64_t most_steps_a_launch(const FitOptions& options) {
    return options.check_numerics ? 1 : STEPS_PER_LAUNCH;
  }
  FusedSteps(FitRun& run, FusedMlpPlan plan);
  int64_t launch(int64_t s);

 private:
  FitRun& run_;
  FusedMlpPlan plan_;
  Tensor m_, v_;  // Adam's moments: views of the optimizer's own buffers
  Tensor workspace_;
  int64_t full_steps_launched_ = 0;
};

}  // namespace engine::nn
