// The fused MLP steps on the CPU (cpu/fused_mlp.cpp, the GPU kernel's reference) against the
// op-by-op training step, over the table of tests/fused_mlp_cases.h; and nn/fused_mlp.h's
// choice, against fake device limits: which models and runs take the fused kernel, and the
// line that says why not.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "fused_mlp_cases.h"
#include "file_fixtures.h"
#include "core/ops/matmul.h"
#include "nn/fit_run.h"
#include "nn/observers/checkpoints.h"
#include "nn/observers/observers.h"
#include "toy_data.h"

using namespace engine;
using namespace engine::test;

TEST_CASE("the CPU reference of the fused steps trains as the op-by-op steps do") {
  for (const FusedCase& c : fused_cases()) {
    INFO(c.name);
    const nn::Dataset data = fused_case_data(c, Device::cpu());
    const std::vector<int32_t> order = fused_case_order(c);
    nn::Sequential ops = fused_case_model(c, Device::cpu());
    nn::Sequential fused = fused_case_model(c, Device::cpu());
    nn::RunningMetrics ops_metrics(Device::cpu()), fused_metrics(Device::cpu());
    train_op_by_op(ops, data, order, c, ops_metrics);
    train_fused(fused, data, order, c, fused_metrics);
    const std::vector<float> w = fused.parameters().values.to_vector(),
                             w_ops = ops.parameters().values.to_vector();
    const WeightGap gap = weight_gap(w, w_ops);
    std::printf("%-36s worst |diff| / (1e-3 + |w|) = %.2e, %lld beyond 1e-3\n", c.name,
                gap.worst, static_cast<long long>(gap.beyond));
    CHECK(same_training(c, w, w_ops));
    CHECK(fused.step_counter().to_int_vector()[0] == c.steps);
    CHECK(fused_metrics.loss() == doctest::Approx(ops_metrics.loss()).epsilon(1e-5));
    CHECK(fused_metrics.accuracy(true) == doctest::Approx(ops_metrics.accuracy(true)));
  }
}

namespace {
constexpr int64_t LARGE_L2 = int64_t{50} << 20;
// An H100's room for the stationary kernels: 132 SMs, 227 KiB of shared memory a block.
constexpr int64_t H100_SMS = 132, H100_SHARED = 227 * 1024;
const nn::FusedMlpLimits H100{LARGE_L2, false, false, H100_SMS, H100_SHARED};
nn::FusedMlpChoice choice_for(nn::Sequential& model, const nn::FitOptions& options,
                              nn::FusedMlpLimits limits = H100, bool resident = true) {
  return nn::choose_fused_mlp(model, options, resident, limits);
}
}  // namespace

TEST_CASE("the fused kernel is taken where the model and the run allow it, else one line says why") {
  nn::Sequential mlp = toy_model();  // Flatten -> Dense(16, relu) -> Dropout -> Dense(2, softmax)
  nn::FitOptions plain;
  plain.fused = nn::FusedUse::On;
  const nn::FusedMlpChoice yes = choice_for(mlp, plain);
  CHECK(yes.mlp);
  CHECK(yes.use);
  CHECK(yes.stationary);
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
  // --breakdown and the NaN check run with it (nn/fused_mlp.h says how); so does --tf32 where
  // the op-by-op path would compute in FP32 too (small products: all of the seed's).
  nn::FitOptions breakdown = plain, nan_check = plain;
  breakdown.breakdown = true;
  nan_check.check_numerics = true;
  CHECK(choice_for(mlp, breakdown).use);
  CHECK(choice_for(mlp, nan_check).use);
  const nn::FusedMlpLimits tf32{LARGE_L2, true, false, H100_SMS, H100_SHARED};
  CHECK(choice_for(mlp, plain, tf32).use);
  // 784 -> 1024 -> 10 at batch 1024: the forward pass's 1024 x 1024 output over 784 inputs is
  // a large product, which --tf32 puts on the tensor cores op by op.
  nn::Sequential large{nn::flatten(), nn::dense(1024, Activation::Relu),
                       nn::dense(10, Activation::Softmax)};
  large.build({784}, Device::cpu(), 1);
  large.compile(std::make_unique<nn::Adam>(1e-3f), nn::Loss::SparseCategoricalCrossentropy);
  nn::FitOptions large_batch = plain;
  large_batch.batch_size = 1024;
  CHECK(choice_for(large, large_batch).use);
  const nn::FusedMlpChoice large_tf32 = choice_for(large, large_batch, tf32);
  CHECK_FALSE(large_tf32.use);
  CHECK(large_tf32.why_not ==
        "--tf32: the op-by-op path runs its large products on the tensor cores, the fused "
        "kernels in FP32");

  nn::FitOptions no_fused = plain, no_graph = plain, callbacks = plain;
  no_fused.fused = nn::FusedUse::Off;
  no_graph.use_graph = false;
  callbacks.callbacks.push_back(std::make_shared<nn::Callback>());
  const Refusal refusals[] = {
      {"--no-fused", no_fused, H100, true},
      {"--no-graph launches every kernel from the host", no_graph, H100, true},
      {"this device cannot run it (it needs a GPU with cooperative launches)", plain, {}, true},
      {"--device cudnn runs the matmuls in cuBLAS", plain,
       {LARGE_L2, false, true, H100_SMS, H100_SHARED}, true},
      {"callbacks may act after any step", callbacks, H100, true},
      {"its batches do not come from a float data set on the device", plain, H100, false},
      // 146 parameters and two moments: 1,752 bytes; a GPU with a 1 KB L2 falls back.
      {"the parameters and Adam's moments (0.0 MB) are larger than the GPU's L2 cache (0.0 MB)",
       plain, {1024, false, false, H100_SMS, H100_SHARED}, true},
  };
  for (const Refusal& r : refusals) {
    const nn::FusedMlpChoice no = choice_for(mlp, r.options, r.limits, r.resident);
    CHECK(no.mlp);
    CHECK_FALSE(no.use);
    CHECK(no.why_not == r.why);
  }
}

TEST_CASE("by default the fused kernel is taken where a weight-stationary kernel takes the model") {
  nn::Sequential one_hidden = toy_model();  // 6 -> 16 -> 2
  nn::Sequential two_hidden = fused_case_model(fused_cases()[2], Device::cpu());  // 784-200-200-10
  nn::Sequential three_hidden = fused_case_model(fused_cases()[7], Device::cpu());  // 30-20-19-21-32
  const nn::FitOptions automatic;  // FusedUse::Auto
  nn::FitOptions on;
  on.fused = nn::FusedUse::On;
  const nn::FusedMlpChoice small = choice_for(one_hidden, automatic);
  CHECK(small.use);
  CHECK(small.stationary);
  CHECK(std::string(small.kernel()) == "stationary");
  const nn::FusedMlpChoice wide = choice_for(two_hidden, automatic);
  CHECK(wide.use);
  CHECK(wide.stationary);
  const nn::FusedMlpChoice deep = choice_for(three_hidden, automatic);
  CHECK(deep.mlp);
  CHECK_FALSE(deep.use);
  CHECK(deep.why_not ==
        "the weight-stationary kernel does not take it (it takes one or two hidden layers, not "
        "3); --fused runs the streaming one");
  const nn::FusedMlpChoice forced = choice_for(three_hidden, on);
  CHECK(forced.use);
  CHECK_FALSE(forced.stationary);
  CHECK(std::string(forced.kernel()) == "streaming");
  // On the CPU (no room at all), the default says why not, as --fused does.
  CHECK(choice_for(one_hidden, automatic, {}).why_not ==
        "this device cannot run it (it needs a GPU with cooperative launches)");
}

TEST_CASE("the weight-stationary kernels' shape: units a block, blocks and shared memory, or why not") {
  const auto plan = [](int64_t inputs, std::vector<int64_t> hidden, int64_t classes) {
    FusedMlpPlan p;
    for (const int64_t units : hidden) {
      p.layers.push_back({inputs, units, 0, true, 0.2f, 1});
      inputs = units;
    }
    p.layers.push_back({inputs, classes, 0, false, 0.0f, 0});
    return p;
  };
  struct Case {
    const char* name;
    FusedMlpPlan plan;
    int64_t batch, sms, shared;
    int64_t columns, blocks;  // where it fits
    const char* why_not;      // where it does not
  };
  const Case cases[] = {
      {"seed small on an H100", plan(784, {128}, 10), 32, 132, H100_SHARED, 1, 128, ""},
      {"100-300-10: 4 units a block", plan(100, {300}, 10), 32, 132, H100_SHARED, 4, 75, ""},
      {"784-300-10: 4 units a block", plan(784, {300}, 10), 32, 132, H100_SHARED, 4, 75, ""},
      {"784-500-10 does not fit", plan(784, {500}, 10), 32, 132, H100_SHARED, 0, 0,
       "a block's share (254 KiB) is more than its 227 KiB of shared memory"},
      {"batch 1, 3 units", plan(20, {3}, 3), 1, 132, H100_SHARED, 1, 3, ""},
      {"seed small on 28 SMs with 99 KiB", plan(784, {128}, 10), 32, 28, 99 * 1024, 0, 0,
       "a block's share (228 KiB) is more than its 99 KiB of shared memory"},
      {"64-128-10, batch 16, on 28 SMs", plan(64, {128}, 10), 16, 28, 99 * 1024, 8, 16, ""},
      {"two hidden layers, 2 units of each a block", plan(784, {200, 200}, 10), 32, 132,
       H100_SHARED, 2, 100, ""},
      {"the seed's wide model: 8 units of each a block", plan(784, {1000, 1000}, 10), 32, 132,
       H100_SHARED, 8, 125, ""},
      {"two hidden layers of 20 and 150 units", plan(30, {20, 150}, 6), 7, 132, H100_SHARED, 2,
       75, ""},
      {"the wide model on 108 SMs", plan(784, {1000, 1000}, 10), 32, 108, 163 * 1024, 0, 0,
       "its 1000 units in a hidden layer are more than 8 a block on 108 SMs"},
      {"the wide model with 99 KiB", plan(784, {1000, 1000}, 10), 32, 132, 99 * 1024, 0, 0,
       "a block's share (210 KiB) is more than its 99 KiB of shared memory"},
      {"two hidden layers, batch 33", plan(784, {200, 200}, 10), 33, 132, H100_SHARED, 0, 0,
       "it takes batches of up to 32 rows, not 33"},
      {"three hidden layers", plan(30, {20, 19, 21}, 10), 8, 132, H100_SHARED, 0, 0,
       "it takes one or two hidden layers, not 3"},
      {"the head alone", plan(12, {}, 2), 4, 132, H100_SHARED, 0, 0,
       "it takes one or two hidden layers, not 0"},
      {"batch 33", plan(784, {100}, 7), 33, 132, H100_SHARED, 0, 0,
       "it takes batches of up to 32 rows, not 33"},
      {"20 classes", plan(30, {20}, 20), 8, 132, H100_SHARED, 0, 0,
       "it takes up to 16 classes, not 20"},
      {"1000 units on 16 SMs", plan(784, {1000}, 10), 32, 16, H100_SHARED, 0, 0,
       "its 1000 hidden units are more than 16 a block on 16 SMs"},
      {"rows larger than shared memory", plan(8192, {64}, 10), 32, 132, H100_SHARED, 0, 0,
       "the batch's rows alone are more than a block's shared memory"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const FusedMlpStationaryShape shape =
        fused_mlp_stationary_shape(c.plan, c.batch, c.sms, c.shared);
    CHECK(shape.why_not == c.why_not);
    CHECK(shape.columns == c.columns);
    CHECK(shape.blocks == c.blocks);
    if (shape.why_not.empty()) {
      CHECK(shape.shared_bytes > 0);
      CHECK(shape.shared_bytes <= c.shared);
    }
  }
  // The seed's small model: 150 KB of rows (a ring of 48: the next step's first 16 are
  // prefetched), 9 KB of own unit, 5 KB of head, 17 KB of hidden output, 27 KB of the head's
  // sums, 2 KB of step sizes, the rows' mbarrier: 216 KB of an H100's 227 KiB.
  const FusedMlpStationaryShape small = fused_mlp_stationary_shape(plan(784, {128}, 10), 32, 132,
                                                                   H100_SHARED);
  CHECK(small.prefetch);
  CHECK(small.shared_bytes == 165'616 + 16 * 784 * 4);
  // Where the ring does not fit beside the rest, the rows of a step take 32 slots, no more; a
  // partial batch never has the ring.
  const FusedMlpStationaryShape wider = fused_mlp_stationary_shape(plan(784, {300}, 10), 32, 132,
                                                                   H100_SHARED);
  CHECK(wider.why_not.empty());
  CHECK_FALSE(wider.prefetch);
  CHECK_FALSE(fused_mlp_stationary_shape(plan(784, {128}, 10), 31, 132, H100_SHARED).prefetch);
  // ENGINE_FUSED_MLP_KERNEL=streaming leaves every plan to the streaming kernel, and says so.
  setenv("ENGINE_FUSED_MLP_KERNEL", "streaming", 1);
  const FusedMlpStationaryShape forced =
      fused_mlp_stationary_shape(plan(784, {128}, 10), 32, 132, H100_SHARED);
  unsetenv("ENGINE_FUSED_MLP_KERNEL");
  CHECK(forced.why_not == "ENGINE_FUSED_MLP_KERNEL=streaming");
  CHECK(forced.blocks == 0);
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
  options.fused = nn::FusedUse::On;
  nn::Sequential fused = fused_case_model(c, Device::cpu());
  nn::ResidentBatches source(data, options, Device::cpu());
  nn::FitRun run(fused, source, options);
  run.steps = nn::steps_per_epoch(options, source.size());
  run.full_batch = c.batch;
  REQUIRE(run.steps == 10);
  source.start_epoch(1, run.steps, c.batch, 0);
  const std::vector<int32_t> order = source.epoch_order()->to_int_vector();
  const nn::FusedMlpChoice choice =
      nn::choose_fused_mlp(fused, options, true, H100);
  REQUIRE(choice.use);
  nn::FusedSteps steps(run, choice.plan);
  std::vector<int64_t> ends;
  for (int64_t s = 0; s < run.steps;) ends.push_back(s = steps.launch(s));
  CHECK(ends == std::vector<int64_t>{1, 2, 9, 10});
  CHECK(run.running.samples == 75);
  CHECK(run.fused_steps == 10);  // --breakdown's count

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

TEST_CASE("a NaN check of fused steps: one step a launch, then the loss and the weights after each") {
  const FusedCase c{"checked", 12, {16}, 3, 0.25f, 8, 75, 0};
  const nn::Dataset data = fused_case_data(c, Device::cpu());
  nn::FitOptions options;
  options.batch_size = c.batch;
  options.fused = nn::FusedUse::On;
  options.check_numerics = true;
  nn::Sequential model = fused_case_model(c, Device::cpu());
  nn::ResidentBatches source(data, options, Device::cpu());
  nn::FitRun run(model, source, options);
  run.steps = nn::steps_per_epoch(options, source.size());
  run.full_batch = c.batch;
  run.epoch = 1;
  run.history.fused = true;
  source.start_epoch(1, run.steps, c.batch, 0);
  nn::FusedSteps steps(run, nn::choose_fused_mlp(model, options, true, H100).plan);
  nn::Checkpoints checkpoints(run);
  nn::NanCheck check(run, checkpoints);
  std::vector<int64_t> ends;
  for (int64_t s = 0; s < run.steps;) {
    ends.push_back(s = steps.launch(s));
    check.step_finished(run, s, c.batch);  // finite: nothing
  }
  CHECK(ends == std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  // A NaN in the head's kernel (the second parameter: the first Dense's bias comes before it).
  float* w = model.parameters().values.data<float>();
  w[12 * 16 + 16 + 5] = NAN;
  check_message(error_of([&] { check.step_finished(run, 4, c.batch); }),
                {"NaN/Inf at epoch 1, step 4/10", "in the weights of ", "dense_1/kernel",
                 "after the step's update"});
  w[12 * 16 + 16 + 5] = 0.0f;
  run.running.loss_sum.data<float>()[0] = INFINITY;
  check_message(error_of([&] { check.step_finished(run, 5, c.batch); }),
                {"NaN/Inf at epoch 1, step 5/10", "in the loss", "the weights are finite"});
}

TEST_CASE("the GPU's matmul keeps small, shallow outputs in FP32, the rule --tf32 follows") {
  // The seed models' products on an H100 (132 SMs): the small model's forward pass, weight
  // gradient and head; the wide model's 1000 x 1000 weight gradient over a batch of 32 (64
  // large tiles for 132 SMs, K too shallow to split).
  CHECK(gpu_matmul_small_output(32, 128, 784, 132));
  CHECK(gpu_matmul_small_output(784, 128, 32, 132));
  CHECK(gpu_matmul_small_output(32, 10, 128, 132));
  CHECK(gpu_matmul_small_output(1000, 1000, 32, 132));
  // Large: a deep 1024 x 1024, and a wave of tiles however shallow.
  CHECK_FALSE(gpu_matmul_small_output(1024, 1024, 784, 132));
  CHECK_FALSE(gpu_matmul_small_output(2048, 2048, 32, 132));
  CHECK(gpu_matmul_small_output(2048, 2048, 32, 512));  // ... unless the GPU has more SMs
  // Under --tf32, by shape on 132 SMs: whether a product stays FP32 (the small outputs but
  // those 2,048 deep or of 64 M multiply-adds, which the seed MLPs never reach), and whether a
  // few rows, many columns or deep, take v9 (the CNNs' Dense input gradients and forward
  // passes; not the weight gradients, Dogs vs Cats' 32 rows, nor FP32 products).
  struct Route {
    const char* name;
    int64_t M, N, K;
    bool stays_fp32, few_rows_on_v9;
  };
  const Route routes[] = {
      {"the small MLP's forward", 32, 128, 784, true, false},
      {"the wide MLP's weight gradient", 1000, 1000, 32, true, false},
      {"CIFAR's Dense forward", 100, 128, 8192, false, true},
      {"CIFAR's Dense input gradient", 100, 8192, 128, false, true},
      {"CIFAR's Dense weight gradient: as much work", 8192, 128, 100, false, false},
      {"the MNIST CNN's Dense forward", 128, 128, 9216, false, true},
      {"the MNIST CNN's Dense input gradient", 128, 9216, 128, false, true},
      {"Dogs vs Cats' Dense forward: 32 rows", 32, 64, 18496, false, false},
      {"Dogs vs Cats' input gradient: 38 M", 32, 18496, 64, true, false},
      {"Dogs vs Cats' weight gradient: 38 M", 18496, 64, 32, true, false},
      {"large: TF32 kernels", 1024, 1024, 784, false, false},
      {"100 rows over 784: FP32", 100, 128, 784, true, false},
  };
  for (const Route& r : routes) {
    INFO(r.name);
    CHECK(gpu_matmul_stays_fp32(r.M, r.N, r.K, 132) == r.stays_fp32);
    CHECK(gpu_matmul_few_rows_tf32(r.M, r.N, r.K, 132) == r.few_rows_on_v9);
  }
  // Which products are a wide Dense layer's backward passes at a batch of 64-511, which run as
  // 1 x 1 convolutions on Hopper under --tf32: by shape and by transposes (dX = dY W^T is A
  // B^T, dW = X^T dY is A^T B).
  struct Backward {
    const char* name;
    int64_t M, N, K;
    bool ta, tb, as_conv;
  };
  const Backward backwards[] = {
      {"CIFAR's Dense input gradient", 100, 8192, 128, false, true, true},
      {"CIFAR's Dense weight gradient", 8192, 128, 100, true, false, true},
      {"the MNIST CNN's Dense input gradient", 128, 9216, 128, false, true, true},
      {"the MNIST CNN's Dense weight gradient", 9216, 128, 128, true, false, true},
      {"CIFAR's Dense forward: A B", 100, 128, 8192, false, false, false},
      {"a weight gradient stored the other way: A^T B^T", 8192, 128, 100, true, true, false},
      {"Dogs vs Cats' input gradient: 32 rows", 32, 18496, 64, false, true, false},
      {"Dogs vs Cats' weight gradient: FP32", 18496, 64, 32, true, false, false},
      {"the wide MLP's input gradient: 1,000 inputs", 32, 1000, 1000, false, true, false},
  };
  for (const Backward& b : backwards) {
    INFO(b.name);
    CHECK(gpu_matmul_dense_backward_as_conv(b.M, b.N, b.K, b.ta, b.tb, 132) == b.as_conv);
  }
}
