// The fused MLP steps on the CPU (cpu/fused_mlp.cpp, the GPU kernel's reference) against the
// op-by-op training step, over the table of tests/fused_mlp_cases.h; and nn/fused_mlp.h's
// choice, against fake device limits: which models and runs take the fused kernel, and the
// line that says why not.
#include <doctest/doctest.h>

#include <cstdio>

#include "fused_mlp_cases.h"
#include "nn/fit_run.h"
#include "toy_data.h"

using namespace engine;
using namespace engine::test;

TEST_CASE("the CPU reference of the fused steps trains as the op-by-op steps do") {
  for (const FusedCase& c : fused_cases()) {
    CAPTURE(c.name);
    const nn::Dataset data = fused_case_data(c, Device::cpu());
    const std::vector<int32_t> order = fused_case_order(c);
    nn::Sequential ops = fused_case_model(c, Device::cpu());
    nn::Sequential fused = fused_case_model(c, Device::cpu());
    nn::RunningMetrics ops_metrics(Device::cpu()), fused_metrics(Device::cpu());
    train_op_by_op(ops, data, order, c, ops_metrics);
    train_fused(fused, data, order, c, fused_metrics);
    const double worst = worst_relative(fused.parameters().values.to_vector(),
                                        ops.parameters().values.to_vector());
    std::printf("%-36s worst |diff| / (1e-3 + |w|) = %.2e\n", c.name, worst);
    CHECK(worst < 1e-3);
    CHECK(fused.step_counter().to_int_vector()[0] == c.steps);
    CHECK(fused_metrics.loss() == doctest::Approx(ops_metrics.loss()).epsilon(1e-5));
    CHECK(fused_metrics.accuracy(true) == doctest::Approx(ops_metrics.accuracy(true)));
  }
}

namespace {
constexpr int64_t LARGE_L2 = int64_t{50} << 20;
nn::FusedMlpChoice choice_for(nn::Sequential& model, const nn::FitOptions& options,
                              nn::FusedMlpLimits limits = {LARGE_L2, false}, bool resident = true) {
  return nn::choose_fused_mlp(model, options, resident, limits);
}
}  // namespace

TEST_CASE("the fused kernel is taken where the model and the run allow it, else one line says why") {
  nn::Sequential mlp = toy_model();  // Flatten -> Dense(16, relu) -> Dropout -> Dense(2, softmax)
  nn::FitOptions plain;
  plain.fused = true;
  const nn::FusedMlpChoice yes = choice_for(mlp, plain);
  CHECK(yes.mlp);
  CHECK(yes.use);
  REQUIRE(yes.plan.layers.size() == 2);
  CHECK(yes.plan.layers[0].dropout_rate == 0.25f);
  CHECK(yes.plan.layers[0].relu);
  CHECK(yes.plan.layers[1].offset == 6 * 16 + 16);

  struct Refusal {
    const char* why;
    nn::FitOptions options;
    nn::FusedMlpLimits limits;
    bool resident;
  };
  nn::FitOptions no_fused = plain, no_graph = plain, breakdown = plain, nan_check = plain,
                 callbacks = plain;
  no_fused.fused = false;
  no_graph.use_graph = false;
  breakdown.breakdown = true;
  nan_check.check_numerics = true;
  callbacks.callbacks.push_back(std::make_shared<nn::Callback>());
  const Refusal refusals[] = {
      {"not asked for (--fused)", no_fused, {LARGE_L2, false}, true},
      {"--no-graph launches every kernel from the host", no_graph, {LARGE_L2, false}, true},
      {"this device cannot run it (it needs a GPU with cooperative launches)", plain, {0, false}, true},
      {"--tf32: the fused kernel computes in FP32 only", plain, {LARGE_L2, true}, true},
      {"--breakdown times the ops one by one", breakdown, {LARGE_L2, false}, true},
      {"the NaN check looks at every step's gradients", nan_check, {LARGE_L2, false}, true},
      {"callbacks may act after any step", callbacks, {LARGE_L2, false}, true},
      {"its batches do not come from a float data set on the device", plain, {LARGE_L2, false}, false},
      // 146 parameters and two moments: 1,752 bytes; a GPU with a 1 KB L2 falls back.
      {"the parameters and Adam's moments (0.0 MB) are larger than the GPU's L2 cache (0.0 MB)",
       plain, {1024, false}, true},
  };
  for (const Refusal& r : refusals) {
    const nn::FusedMlpChoice no = choice_for(mlp, r.options, r.limits, r.resident);
    CHECK(no.mlp);
    CHECK_FALSE(no.use);
    CHECK(no.why_not == r.why);
  }
}

TEST_CASE("the kernel reads float inputs picked in an order on the device") {
  nn::FitOptions options;
  const nn::Dataset floats = toy_data(10, 1);
  const nn::Dataset bytes{Tensor::from_bytes(std::vector<uint8_t>(60, 7), {10, 2, 3}), floats.y};
  nn::ResidentBatches float_batches(floats, options, Device::cpu());
  nn::ResidentBatches byte_batches(bytes, options, Device::cpu());
  CHECK(nn::resident_float_data(float_batches));
  CHECK_FALSE(nn::resident_float_data(byte_batches));
}

TEST_CASE("models the fused kernel does not run are not MLPs to it") {
  const auto build = [](std::vector<std::shared_ptr<nn::Layer>> layers,
                        std::unique_ptr<nn::Optimizer> optimizer, Shape input = {12}) {
    nn::Sequential model(std::move(layers));
    model.build(input, Device::cpu(), 1);
    model.compile(std::move(optimizer), nn::Loss::SparseCategoricalCrossentropy);
    return model;
  };
  const auto adam = [] { return std::make_unique<nn::Adam>(); };
  nn::Sequential sgd = build({nn::dense(8, Activation::Relu), nn::dense(3, Activation::Softmax)},
                             std::make_unique<nn::SGD>());
  nn::Sequential tanh = build({nn::dense(8, Activation::Tanh), nn::dense(3, Activation::Softmax)}, adam());
  nn::Sequential classes = build({nn::dense(8, Activation::Relu), nn::dense(33, Activation::Softmax)}, adam());
  nn::Sequential deep = build({nn::dense(8, Activation::Relu), nn::dense(8, Activation::Relu),
                               nn::dense(8, Activation::Relu), nn::dense(8, Activation::Relu),
                               nn::dense(3, Activation::Softmax)}, adam());
  nn::Sequential input_dropout = build({nn::dropout(0.2f), nn::dense(3, Activation::Softmax)}, adam());
  nn::Sequential conv = build({nn::conv2d(4, 3), nn::flatten(), nn::dense(3, Activation::Softmax)},
                              adam(), {6, 6, 1});
  const std::pair<nn::Sequential*, const char*> cases[] = {
      {&sgd, "its optimizer is not Adam"},
      {&tanh, "a hidden layer's activation is not ReLU"},
      {&classes, "it has more than 32 classes"},
      {&deep, "it has more than 4 Dense layers"},
      {&input_dropout, "it has a Dropout layer where the kernel takes Dense layers"},
      {&conv, "it has a Conv2D layer where the kernel takes Dense layers"}};
  for (const auto& [model, why] : cases) {
    const nn::FusedMlpChoice c = choice_for(*model, nn::FitOptions{});
    CHECK_FALSE(c.mlp);
    CHECK_FALSE(c.use);
    CHECK(c.why_not == why);
  }
}

TEST_CASE("fit's fused launches: the warm-up's steps alone, then up to 256, never full and partial together") {
  // fit()'s driver (nn::FusedSteps) on the CPU reference: 75 rows in batches of 8 make 9 full
  // steps and a partial one of 3; the weights end where 10 op-by-op steps over the same order
  // end.
  const FusedCase c{"fit's driver", 12, {16}, 3, 0.25f, 8, 75, 0};
  const nn::Dataset data = fused_case_data(c, Device::cpu());
  nn::FitOptions options;
  options.batch_size = c.batch;
  options.seed = 4;
  options.fused = true;
  nn::Sequential fused = fused_case_model(c, Device::cpu());
  nn::ResidentBatches source(data, options, Device::cpu());
  nn::FitRun run(fused, source, options);
  run.steps = nn::steps_per_epoch(options, source.size());
  run.full_batch = c.batch;
  REQUIRE(run.steps == 10);
  source.start_epoch(1, run.steps, c.batch, 0);
  const std::vector<int32_t> order = source.epoch_order()->to_int_vector();
  const nn::FusedMlpChoice choice =
      nn::choose_fused_mlp(fused, options, true, nn::FusedMlpLimits{int64_t{1} << 40, false});
  REQUIRE(choice.use);
  nn::FusedSteps steps(run, choice.plan);
  std::vector<int64_t> ends;
  for (int64_t s = 0; s < run.steps;) ends.push_back(s = steps.launch(s));
  CHECK(ends == std::vector<int64_t>{1, 2, 9, 10});
  CHECK(run.running.samples == 75);

  nn::Sequential ops = fused_case_model(c, Device::cpu());
  nn::RunningMetrics metrics(Device::cpu());
  for (int64_t s = 0; s < run.steps; ++s) {
    const int64_t first = s * c.batch, count = std::min<int64_t>(c.batch, c.rows - first);
    const std::vector<int32_t> rows(order.begin() + first, order.begin() + first + count);
    ops.train_step(data, Tensor::from_ints(rows, {count}, Device::cpu()), metrics);
    metrics.samples += count;
  }
  CHECK(worst_relative(fused.parameters().values.to_vector(), ops.parameters().values.to_vector()) < 1e-3);
  CHECK(run.running.loss() == doctest::Approx(metrics.loss()).epsilon(1e-5));
  CHECK(fused.step_counter().to_int_vector()[0] == 10);
}
