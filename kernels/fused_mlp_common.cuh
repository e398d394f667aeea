// What the fused MLP kernels share (core/ops/fused_mlp.h): their arguments, the dropout
// factor of a hidden unit, and the clock that times a step's phases
// (ENGINE_FUSED_MLP_PHASES=1). kernels/fused_mlp.cu is the streaming kernel and the host side
// that picks one; kernels/fused_mlp_stationary.cu and fused_mlp_stationary_two.cu the
// weight-stationary kernels for one and two hidden layers.
#pragma once
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/ops/fused_mlp.h"
#include "core/rng.h"

namespace engine::cuda::fused_mlp {

constexpr int MAX_HIDDEN = static_cast<int>(FUSED_MLP_MAX_LAYERS) - 1;

struct Layer {
  int inputs, units;
  int64_t offset;  // kernel (inputs x units), then bias (units), in p, m and v
  bool relu;
  float rate;  // dropout after it (0: none)
  uint64_t seed;
};

struct Args {
  Layer layer[FUSED_MLP_MAX_LAYERS];
  int layers;  // the last is the head
  AdamConfig adam;
  float *p, *m, *v;
  const float* x;
  const int32_t* labels;
  const int32_t* order;
  int batch;
  int64_t steps;
  int32_t* counter;
  float* out[MAX_HIDDEN];   // hidden layers' outputs (batch, units)
  float* grad[MAX_HIDDEN];  // their gradients
  float *dlogits, *row_loss, *row_hit;
  float* head_copy[2];  // the stationary kernel's head, by step parity (fused_mlp_workspace)
  float* layer_copy[2];  // the two-hidden kernel's second layer, by step parity
  float* logit_partials;  // ... and its blocks' sums of the logits
  float *loss_sum, *correct;
  // ENGINE_FUSED_MLP_PHASES: where block 0 writes the GPU's clock (ns) at each phase's start
  // and end, CLOCK_MARKS per step for the first CLOCK_STEPS steps (null: not timed).
  unsigned long long* clock;
  // ... and where every block writes it as it reaches the step's barrier (the stationary
  // kernel: gridDim.x a step for the same steps; null: not timed).
  unsigned long long* arrival;
};
constexpr int CLOCK_MARKS = 16, CLOCK_STEPS = 64;

// d(out)/d(z) of a hidden unit whose output (after ReLU and Dropout) is `out`: ReLU's
// (out > 0; a dropped unit's out is 0 and its factor 0 either way) times Dropout's keep *
// scale, the mask recomputed from its counter as the forward pass drew it (element i of the
// layer's (batch, units) output at training step `step`).
__device__ __forceinline__ float dropout_relu_factor(const Layer& layer, float out, int64_t i,
                                                     uint32_t step) {
  float d = layer.relu && !(out > 0.0f) ? 0.0f : 1.0f;
  if (layer.rate > 0.0f) {
    const bool keep = dropout_uniform(layer.seed, step, static_cast<uint64_t>(i)) >= layer.rate;
    d = keep ? d * (1.0f / (1.0f - layer.rate)) : 0.0f;
  }
  return d;
}

// A hidden unit's output from its pre-activation z (ReLU, then Dropout with the same mask),
// and d(out)/d(z) as dropout_relu_factor gives it, from one draw of the mask.
struct Activated {
  float out, factor;
};
__device__ __forceinline__ Activated activate(const Layer& layer, float z, int64_t i,
                                              uint32_t step) {
  const float y = layer.relu ? fmaxf(z, 0.0f) : z;
  const float relu_factor = layer.relu && !(z > 0.0f) ? 0.0f : 1.0f;
  if (layer.rate == 0.0f) return {y, relu_factor};
  const bool keep = dropout_uniform(layer.seed, step, static_cast<uint64_t>(i)) >= layer.rate;
  const float scale = 1.0f / (1.0f - layer.rate);
  return {keep ? y * scale : 0.0f, keep ? relu_factor * scale : 0.0f};
}

// The run's sums (RunningMetrics' loss and correct rows), kept by one thread of block 0 in its
// registers for a launch: read at its start, each step's batch added in row order (the same
// float additions, in the same order, as adding to memory every step), written at its end. Off
// the step's path: a read-modify-write of device memory every step kept block 0, and so every
// block at the next barrier, waiting ~1 us.
struct BatchSums {
  float loss = 0.0f, hits = 0.0f;
  __device__ void load(const Args& a) {
    loss = *a.loss_sum;
    hits = *a.correct;
  }
  __device__ void add(const float* row_loss, const float* row_hit, int batch) {
    float batch_loss = 0.0f, batch_hits = 0.0f;
    for (int r = 0; r < batch; ++r) {
      batch_loss += row_loss[r];
      batch_hits += row_hit[r];
    }
    loss += batch_loss;
    hits += batch_hits;
  }
  __device__ void store(const Args& a) const {
    *a.loss_sum = loss;
    *a.correct = hits;
  }
};

// Moves one number of a stationary kernel's state: into shared memory at a launch's start
// (load), back to the model's buffer at its end.
__device__ __forceinline__ void move_value(bool load, float* shared_value, float& value) {
  if (load) {
    *shared_value = value;
  } else {
    value = *shared_value;
  }
}

__device__ __forceinline__ unsigned long long global_nanoseconds() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Block 0's clock: phase p's own work ends at mark 2p + 1, the barrier after it lets the
// block go at mark 2p + 2 (so their difference is its wait for the slowest block).
class PhaseClock {
 public:
  __device__ PhaseClock(const Args& a, int64_t step)
      : slot_(a.clock != nullptr && blockIdx.x == 0 && threadIdx.x == 0 && step < CLOCK_STEPS
                  ? a.clock + step * CLOCK_MARKS
                  : nullptr) {}
  __device__ void mark() {
    if (slot_ != nullptr) slot_[marks_] = global_nanoseconds();
    ++marks_;
  }
  // The grid-wide barrier that ends a phase, marked on both sides.
  __device__ void barrier(cooperative_groups::grid_group& grid) {
    mark();
    grid.sync();
    mark();
  }

 private:
  unsigned long long* slot_;
  int marks_ = 0;
};

// ENGINE_FUSED_MLP_PHASES=1: prints block 0's mean time per phase (named in `phases`) over the
// clocked steps after the first, its own work and then its wait at the barrier.
void print_phases(const char* kernel, const std::vector<std::string>& phases,
                  const unsigned long long* device_clock, int64_t steps);
// ... and how far apart the blocks reach the barrier (Args::arrival): the step is as slow as
// the last of them.
void print_arrivals(const unsigned long long* device_arrival, int64_t steps, int64_t blocks);

// The weight-stationary kernels (kernels/fused_mlp_stationary.cu for one hidden layer,
// kernels/fused_mlp_stationary_two.cu for two): their launches, and the phases their clocks
// mark, in order.
void launch_stationary(const Args& a, const FusedMlpStationaryShape& shape);
std::vector<std::string> stationary_phases();
void launch_stationary_two(const Args& a, const FusedMlpStationaryShape& shape);
std::vector<std::string> stationary_two_phases();

}  // namespace engine::cuda::fused_mlp
