// A whole MLP training step, many steps in one call: the fused kernel of the small-model lesson
// (docs/FUSED_MLP.md). The model is Dense layers (ReLU or none, each optionally followed by
// Dropout) under a Dense head trained with softmax cross-entropy, and Adam; per step it does
// what Sequential::train_step does for that model (gather the batch by the epoch's order ->
// forward -> loss -> backward -> Adam -> add the batch's loss and correct rows to the sums),
// with the same dropout masks (core/rng.h's dropout_uniform, keyed per Dropout layer) and the
// same Adam step size, so the weights agree with the op-by-op path to float rounding.
// Implementations: cpu/fused_mlp.cpp (the reference, phase by phase in plain loops, with the
// CPU backend's own Dropout and Adam) and three persistent GPU kernels, their phases separated
// by grid-wide barriers: kernels/fused_mlp_stationary.cu and fused_mlp_stationary_two.cu for
// one or two hidden layers that fit the SMs' shared memory, kernels/fused_mlp.cu (the
// streaming kernel, and the choice) for any other.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/host_device.h"
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

// The scratch a call with `batch` rows needs, as offsets in floats from the workspace's start:
// per hidden layer its output and its gradient (batch x units each; the stationary kernel uses
// the first layer's two as its outputs by step parity), the head's gradient (batch x classes),
// per-row losses and hits (batch each), two copies of the head (its kernel and bias, rows
// padded to whole float4s: the stationary kernel's head by step parity); for two hidden layers
// also two copies of the second one's kernel (the two-hidden kernel's, by step parity) and the
// logits' partial sums (a block's for each row and padded class, for as many blocks as the
// larger layer has units); and the floats in all.
struct FusedMlpWorkspace {
  std::vector<int64_t> out, grad;
  int64_t dlogits = 0, row_loss = 0, row_hit = 0, head_copy[2] = {0, 0}, layer_copy[2] = {0, 0},
          logit_partials = 0, floats = 0;
};
FusedMlpWorkspace fused_mlp_workspace(const FusedMlpPlan& plan, int64_t batch);
inline int64_t fused_mlp_workspace_floats(const FusedMlpPlan& plan, int64_t batch) {
  return fused_mlp_workspace(plan, batch).floats;
}

// ---- the weight-stationary kernel (kernels/fused_mlp_stationary.cu) --------------------------
// For an MLP of one hidden layer it keeps the weights where they are used: each block owns
// `columns` hidden units for the whole launch (their kernel columns, bias and Adam moments in
// shared memory, and their rows of the head, which it updates and publishes each step), and
// computes the tiny head from every unit's output, so a step is one grid-wide barrier. It takes a
// model where that fits one block per SM; the streaming kernel (kernels/fused_mlp.cu) takes
// any other. Both are exact to float rounding against cpu/fused_mlp.cpp.
constexpr int FUSED_MLP_STATIONARY_THREADS = 512;
constexpr int FUSED_MLP_STATIONARY_MAX_ROWS = 32;  // a row per lane in the head
constexpr int FUSED_MLP_STATIONARY_MAX_COLUMNS = 16;  // a warp or more per owned unit
constexpr int FUSED_MLP_STATIONARY_MAX_CLASSES = 16;  // a register each in the head's loops
// Where a full batch's rows leave room, they lie in a ring of 48 row slots: the next step's
// first 16 rows are copied into the 16 slots this step does not use while its head runs, and
// the other 16 into this step's first 16 slots once its Adam has read them.
constexpr int FUSED_MLP_STATIONARY_RING_ROWS = FUSED_MLP_STATIONARY_MAX_ROWS * 3 / 2;

// Hands out a block's shared memory to the stationary kernels' arrays, in floats from its
// start, each array on a 16-byte boundary.
struct SharedFloatCursor {
  int at = 0;
  ENGINE_HOST_DEVICE int take(int floats) {
    const int start = at;
    at += (floats + 3) / 4 * 4;
    return start;
  }
};

// Where each array lies in a block's shared memory, in floats from its start (each array
// starts on a 16-byte boundary). Computed the same way by the kernel and by the host.
struct FusedMlpStationaryLayout {
  int classes_padded = 0;  // the head's rows padded to whole float4s
  int hidden_stride = 0;   // a row of the hidden output in shared memory: odd, no bank conflicts
  int logit_stride = 0;    // a (warp, row)'s classes in the head's sums: odd, likewise
  int x = 0, w0 = 0, m0 = 0, v0 = 0, w1 = 0, m1 = 0, v1 = 0, hidden = 0, dlogits = 0, dh = 0,
      mask = 0, partial = 0, logit_partial = 0, row_loss = 0, row_hit = 0, labels = 0, lr_t = 0,
      rows_landed = 0, floats = 0;
};
// prefetch: the rows in the ring (a full batch only), else batch slots.
ENGINE_HOST_DEVICE FusedMlpStationaryLayout fused_mlp_stationary_layout(int batch, int inputs,
                                                                        int units, int classes,
                                                                        int columns,
                                                                        bool prefetch) {
  FusedMlpStationaryLayout s;
  s.classes_padded = (classes + 3) / 4 * 4;
  s.hidden_stride = units % 2 == 0 ? units + 1 : units;
  s.logit_stride = s.classes_padded + 1;
  SharedFloatCursor cursor;
  const auto take = [&cursor](int floats) { return cursor.take(floats); };
  constexpr int rows = FUSED_MLP_STATIONARY_MAX_ROWS;
  constexpr int warps = FUSED_MLP_STATIONARY_THREADS / 32;
  s.x = take((prefetch ? FUSED_MLP_STATIONARY_RING_ROWS : batch) * inputs);  // the data set's rows
  s.w0 = take(columns * (inputs + 1));                    // owned units: kernel column + bias
  s.m0 = take(columns * (inputs + 1));
  s.v0 = take(columns * (inputs + 1));
  s.w1 = take((units + 1) * s.classes_padded);            // the head, this step's: kernel + bias
  s.m1 = take((columns + 1) * s.classes_padded);          // its moments: own units' rows, and
  s.v1 = take((columns + 1) * s.classes_padded);          // the bias row (block 0's)
  s.hidden = take(batch * s.hidden_stride);               // every unit's output, this step
  s.dlogits = take(rows * s.classes_padded);
  s.dh = take(columns * rows);                            // owned units' output gradients
  s.mask = take(columns * rows);                          // ... and d(out)/d(z)
  s.partial = take(warps * rows);                         // the forward pass's warp sums
  s.logit_partial = take(warps * rows * s.logit_stride);  // the head's warp sums
  s.row_loss = take(rows);
  s.row_hit = take(rows);
  s.labels = take(rows);                                  // the rows' labels (int32)
  s.lr_t = take(FUSED_MLP_STATIONARY_THREADS);            // Adam's step sizes, 512 steps
  s.rows_landed = take(2);                                // the rows' mbarrier (8 bytes)
  s.floats = cursor.at;
  return s;
}

// ---- the weight-stationary kernel for two hidden layers (kernels/fused_mlp_stationary_two.cu)
// The same idea for an MLP of two hidden layers (the seed's wide model, 784-1000-1000-10): block
// b owns `columns` units of each hidden layer (their kernel columns, biases and moments in shared
// memory) and its second-layer units' rows of the head, so no weight crosses between blocks but
// the second layer's, once a step, for the first layer's input gradient (whose rows a block
// reads: the second layer's kernel, published by step parity). The batch's rows, both hidden
// outputs and the gradients stay in L2; four grid-wide barriers a step.
constexpr int FUSED_MLP_TWO_HIDDEN_MAX_COLUMNS = 8;  // 32 / columns rows a warp in the dots

// Where each array lies in a block's shared memory, in floats from its start; the kernel and
// the host compute it the same way.
struct FusedMlpTwoHiddenLayout {
  int classes_padded = 0;
  int w0 = 0, m0 = 0, v0 = 0, w1 = 0, m1 = 0, v1 = 0, w2 = 0, m2 = 0, v2 = 0, rows_below = 0,
      mask0 = 0, mask1 = 0, out1 = 0, dz0 = 0, dz1 = 0, dlogits = 0, partial = 0, row_loss = 0,
      row_hit = 0, rows = 0, labels = 0, lr_t = 0, rows_landed = 0, floats = 0;
};
ENGINE_HOST_DEVICE FusedMlpTwoHiddenLayout fused_mlp_two_hidden_layout(int inputs, int units0,
                                                                       int units1, int classes,
                                                                       int columns) {
  FusedMlpTwoHiddenLayout s;
  s.classes_padded = (classes + 3) / 4 * 4;
  SharedFloatCursor cursor;
  const auto take = [&cursor](int floats) { return cursor.take(floats); };
  constexpr int rows = FUSED_MLP_STATIONARY_MAX_ROWS;
  s.w0 = take(columns * (inputs + 1));  // own units of layer 0: kernel column + bias
  s.m0 = take(columns * (inputs + 1));
  s.v0 = take(columns * (inputs + 1));
  s.w1 = take(columns * (units0 + 1));  // ... of layer 1
  s.m1 = take(columns * (units0 + 1));
  s.v1 = take(columns * (units0 + 1));
  s.w2 = take((columns + 1) * s.classes_padded);  // layer 1's own units' rows of the head,
  s.m2 = take((columns + 1) * s.classes_padded);  // and the bias row (block 0's)
  s.v2 = take((columns + 1) * s.classes_padded);
  s.rows_below = take(columns * units1);  // layer 1's kernel rows of own layer-0 units
  s.mask0 = take(columns * rows);         // own units' d(out)/d(z), layer 0
  s.mask1 = take(columns * rows);         // ... layer 1
  s.out1 = take(columns * rows);          // own units' outputs, layer 1
  s.dz0 = take(columns * rows);           // own units' gradients d(loss)/d(z), layer 0
  s.dz1 = take(columns * rows);           // ... layer 1
  s.dlogits = take(rows * s.classes_padded);
  s.partial = take(FUSED_MLP_STATIONARY_THREADS);  // the dots' warp sums
  s.row_loss = take(rows);
  s.row_hit = take(rows);
  s.rows = take(rows);    // the step's rows: places in the data set (int32)
  s.labels = take(rows);  // ... and labels (int32)
  s.lr_t = take(FUSED_MLP_STATIONARY_THREADS);  // Adam's step sizes, 512 steps
  s.rows_landed = take(2);                        // rows_below's mbarrier (8 bytes)
  s.floats = cursor.at;
  return s;
}

// How a stationary kernel would run `plan` at `batch` rows on a GPU with `sms` SMs and
// `shared_bytes` of shared memory a block: for one hidden layer, the smallest power-of-two
// `columns` a block for which one block per SM covers the hidden units, and whether the next
// step's rows are prefetched (a full batch, where the ring fits); for two, the same `columns`
// for the larger layer (FUSED_MLP_TWO_HIDDEN_MAX_COLUMNS at most); or why neither applies (a
// non-empty line).
struct FusedMlpStationaryShape {
  int64_t columns = 0, blocks = 0, shared_bytes = 0;
  bool prefetch = false;
  std::string why_not;
};
FusedMlpStationaryShape fused_mlp_stationary_shape(const FusedMlpPlan& plan, int64_t batch,
                                                   int64_t sms, int64_t shared_bytes);

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
