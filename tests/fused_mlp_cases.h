// The fused MLP steps (core/ops/fused_mlp.h) against the op-by-op training step on the same
// model, data, order and seed: the table of MLPs both test files run (test_fused_mlp.cpp on
// the CPU reference, test_gpu_fused_mlp.cpp on the GPU kernel), and the two ways of training.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ops/fused_mlp.h"
#include "core/rng.h"
#include "nn/fused_mlp.h"
#include "nn/layers.h"
#include "nn/sequential.h"
#include "nn/train_step.h"

namespace engine::test {

struct FusedCase {
  const char* name;
  int64_t features;
  std::vector<int64_t> hidden;  // units of the hidden layers
  int64_t classes;
  float dropout;  // after every hidden layer (0: none)
  int64_t batch, rows, steps;
  bool relu = true;
  // Weights allowed to differ by more than 1e-3 x (1e-3 + |w|) from the op-by-op steps' (see
  // WeightGap): none but in the wide model, where among 1.8 M weights a few have gradients that
  // cancel to their rounding, whose sign then picks the direction of Adam's step. One step of
  // it: over three, the GPU's op-by-op steps and the CPU reference end 221 K weights apart, a
  // difference not explained yet, larger than rounding or summation order make
  // (docs/FUSED_MLP.md); the plans of two narrower hidden layers cover several steps.
  int64_t outliers = 0;
};

// The seed's small and wide models (and the wide one narrowed), and odd shapes: widths that are
// no multiple of 4, batch 1 and 33, a head of 1 to 32 classes, no hidden layer, three of them,
// two of different widths, no dropout, no activation, several hidden units a block of the
// weight-stationary kernels.
inline const std::vector<FusedCase>& fused_cases() {
  static const std::vector<FusedCase> cases = {
      {"seed small 784-128-10, batch 32", 784, {128}, 10, 0.2f, 32, 200, 4},
      {"784-100-7, batch 33", 784, {100}, 7, 0.2f, 33, 100, 3},
      {"wide-shaped 784-200-200-10", 784, {200, 200}, 10, 0.2f, 32, 96, 3},
      {"the seed's wide 784-1000-1000-10, one step", 784, {1000, 1000}, 10, 0.2f, 32, 32, 1, true,
       100},
      {"two hidden layers 30-20-150-6, batch 7", 30, {20, 150}, 6, 0.3f, 7, 30, 4},
      {"two hidden layers 37-45-29-5, no dropout or activation", 37, {45, 29}, 5, 0.0f, 5, 20, 3,
       false},
      {"batch 1", 20, {16}, 3, 0.5f, 1, 10, 5},
      {"three hidden layers, 32 classes", 30, {20, 19, 21}, 32, 0.1f, 8, 40, 3},
      {"the head alone, 1 class", 12, {}, 1, 0.0f, 4, 20, 3},
      {"no dropout, no activation", 50, {33}, 10, 0.0f, 16, 64, 2, false},
      {"100-299-10: 4 units a block on 132 SMs, 3 in the last", 100, {299}, 10, 0.2f, 32, 64, 3},
      {"600-150-10: 2 units a block, rows 16-31 copied at a step's start", 600, {150}, 10, 0.2f,
       32, 96, 3},
      {"odd widths 37-45-5, batch 7", 37, {45}, 5, 0.3f, 7, 30, 4},
  };
  return cases;
}

inline nn::Sequential fused_case_model(const FusedCase& c, Device device) {
  std::vector<std::shared_ptr<nn::Layer>> layers{nn::flatten()};
  for (const int64_t units : c.hidden) {
    layers.push_back(nn::dense(units, c.relu ? Activation::Relu : Activation::None));
    if (c.dropout > 0.0f) layers.push_back(nn::dropout(c.dropout));
  }
  layers.push_back(nn::dense(c.classes, Activation::Softmax));
  nn::Sequential model(layers);
  model.build({c.features}, device, 5);
  model.compile(std::make_unique<nn::Adam>(3e-3f), nn::Loss::SparseCategoricalCrossentropy);
  model.set_training_seed(9);
  return model;
}

// x uniform in [0, 1), labels uniform over the classes, on `device`.
inline nn::Dataset fused_case_data(const FusedCase& c, Device device) {
  Generator rng(3);
  std::vector<float> x(static_cast<size_t>(c.rows * c.features));
  for (float& v : x) v = rng.uniform();
  std::vector<int32_t> y(static_cast<size_t>(c.rows));
  for (int32_t& v : y) v = static_cast<int32_t>(rng.below(static_cast<uint64_t>(c.classes)));
  return {Tensor::from_vector(x, {c.rows, c.features}).to(device),
          Tensor::from_ints(y, {c.rows}).to(device)};
}

// A fixed shuffled order of steps x batch rows (rows repeat across steps where the set is
// smaller).
inline std::vector<int32_t> fused_case_order(const FusedCase& c) {
  Generator rng(4);
  std::vector<int32_t> order(static_cast<size_t>(c.steps * c.batch));
  for (int32_t& row : order) row = static_cast<int32_t>(rng.below(static_cast<uint64_t>(c.rows)));
  return order;
}

// `steps` op-by-op training steps (Sequential::train_step), as fit() runs them.
inline void train_op_by_op(nn::Sequential& model, const nn::Dataset& data,
                           const std::vector<int32_t>& order, const FusedCase& c,
                           nn::RunningMetrics& metrics) {
  for (int64_t s = 0; s < c.steps; ++s) {
    const std::vector<int32_t> rows(order.begin() + s * c.batch, order.begin() + (s + 1) * c.batch);
    model.train_step(data, Tensor::from_ints(rows, {c.batch}, model.device()), metrics);
    metrics.samples += c.batch;
  }
}

// The same steps in one call of the fused op, on the model's device.
inline void train_fused(nn::Sequential& model, const nn::Dataset& data,
                        const std::vector<int32_t>& order, const FusedCase& c,
                        nn::RunningMetrics& metrics) {
  nn::FitOptions options;
  options.fused = nn::FusedUse::On;
  const nn::FusedMlpChoice choice =
      nn::choose_fused_mlp(model, options, true, nn::FusedMlpLimits{int64_t{1} << 40, false});
  REQUIRE_MESSAGE(choice.mlp, c.name);
  auto state = model.optimizer().state(model.parameters());
  Tensor workspace = Tensor::empty({fused_mlp_workspace_floats(choice.plan, c.batch)},
                                   DType::F32, model.device());
  Tensor counter = model.step_counter();
  raw::fused_mlp_steps(choice.plan, model.parameters().values, state.at(0).second,
                       state.at(1).second, data.x, data.y,
                       Tensor::from_ints(order, {c.steps * c.batch}, model.device()), c.batch,
                       c.steps, counter, workspace, metrics.loss_sum, metrics.correct);
  metrics.samples += c.steps * c.batch;
}

// How far a's weights are from b's: the largest |a - b| / (1e-3 + |b|), and how many weights
// exceed 1e-3 that way. Adam's first steps move each weight by about the learning rate whatever
// its gradient's size, so a weight whose gradient is near zero may move differently on rounding
// alone; the bound is set against that. The largest |a - b| too: a weight that Adam's steps
// took the other way ends about two of them (2 x the learning rate) a step apart.
struct WeightGap {
  double worst = 0.0;
  int64_t beyond = 0;
  double largest = 0.0;
};
inline WeightGap weight_gap(const std::vector<float>& a, const std::vector<float>& b) {
  WeightGap gap;
  for (size_t i = 0; i < a.size(); ++i) {
    const double diff = std::abs(static_cast<double>(a[i]) - b[i]);
    const double relative = diff / (1e-3 + std::abs(b[i]));
    gap.worst = std::max(gap.worst, relative);
    gap.beyond += relative > 1e-3 ? 1 : 0;
    gap.largest = std::max(gap.largest, diff);
  }
  return gap;
}
inline double worst_relative(const std::vector<float>& a, const std::vector<float>& b) {
  return weight_gap(a, b).worst;
}

// Whether a's weights after a case's steps are b's to float rounding, as the case allows.
inline bool same_training(const FusedCase& c, const std::vector<float>& a,
                          const std::vector<float>& b) {
  const WeightGap gap = weight_gap(a, b);
  constexpr double LEARNING_RATE = 3e-3;  // fused_case_model's
  return gap.beyond <= c.outliers &&
         gap.largest <= 2.0 * LEARNING_RATE * static_cast<double>(c.steps);
}

}  // namespace engine::test
