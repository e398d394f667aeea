// The fused MLP kernels (kernels/fused_mlp.cu, the streaming one, and
// kernels/fused_mlp_stationary.cu and fused_mlp_stationary_two.cu, which plans of one and two
// hidden layers take) on the GPU: each against the op-by-op steps on the GPU and against the
// CPU reference over the table of tests/fused_mlp_cases.h; the same bits on every run; the
// op-by-op step's gradients on the GPU against the CPU's, a step at a time; fit()
// taking it (History::fused) with the op-by-op path's epochs to float
// rounding, a partial last batch included, --breakdown counting its launches; the NaN check
// naming a fused step's bad weight; and a checkpoint of a fused run resumed by a fused
// run ending bit for bit where the straight run ends. Without a GPU: skipped (exit 77).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <sstream>
#include <vector>

#include "file_fixtures.h"
#include "fused_mlp_cases.h"
#include "nn/checkpoint.h"

using namespace engine;
using namespace engine::test;

namespace {
const Device GPU = Device::cuda();

bool fused_here() { return nn::fused_mlp_limits(GPU).state_bytes > 0; }

// ENGINE_FUSED_MLP_KERNEL=streaming while it lives (core/ops/fused_mlp.cpp reads it each call).
struct StreamingOnly {
  StreamingOnly() { setenv("ENGINE_FUSED_MLP_KERNEL", "streaming", 1); }
  ~StreamingOnly() { unsetenv("ENGINE_FUSED_MLP_KERNEL"); }
  StreamingOnly(const StreamingOnly&) = delete;
  StreamingOnly& operator=(const StreamingOnly&) = delete;
};

// Every case of the table: the fused kernel against the op-by-op steps on the GPU and the CPU
// reference, and against itself run again.
void check_fused_table() {
  for (const FusedCase& c : fused_cases()) {
    INFO(c.name);
    nn::Sequential probe = fused_case_model(c, GPU);
    nn::FitOptions on;
    on.fused = nn::FusedUse::On;
    const nn::FusedMlpLimits limits = nn::fused_mlp_limits(GPU);
    const FusedMlpPlan plan = nn::choose_fused_mlp(probe, on, true, limits).plan;
    const std::string why_not =
        fused_mlp_stationary_shape(plan, c.batch, limits.sms, limits.shared_bytes).why_not;
    const nn::Dataset gpu_data = fused_case_data(c, GPU), cpu_data = fused_case_data(c, Device::cpu());
    const std::vector<int32_t> order = fused_case_order(c);
    nn::Sequential ops = fused_case_model(c, GPU), fused = fused_case_model(c, GPU),
                   again = fused_case_model(c, GPU), reference = fused_case_model(c, Device::cpu());
    nn::RunningMetrics ops_m(GPU), fused_m(GPU), again_m(GPU), reference_m(Device::cpu());
    train_op_by_op(ops, gpu_data, order, c, ops_m);
    train_fused(fused, gpu_data, order, c, fused_m);
    train_fused(again, gpu_data, order, c, again_m);
    train_fused(reference, cpu_data, order, c, reference_m);
    const std::vector<float> w = fused.parameters().values.to_vector(),
                             w_ops = ops.parameters().values.to_vector(),
                             w_cpu = reference.parameters().values.to_vector();
    const WeightGap vs_ops = weight_gap(w, w_ops), vs_cpu = weight_gap(w, w_cpu);
    std::printf("%-40s %-10s vs GPU op by op %.2e (%lld beyond 1e-3), vs CPU reference %.2e "
                "(%lld)%s%s\n",
                c.name, why_not.empty() ? "stationary" : "streaming", vs_ops.worst,
                static_cast<long long>(vs_ops.beyond), vs_cpu.worst,
                static_cast<long long>(vs_cpu.beyond), why_not.empty() ? "" : ": ",
                why_not.c_str());
    CHECK(same_training(c, w, w_ops));
    CHECK(same_training(c, w, w_cpu));
    CHECK(w == again.parameters().values.to_vector());
    CHECK(fused.step_counter().to_int_vector()[0] == c.steps);
    // A weight whose Adam step went the other way (FusedCase::outliers) moves the later losses.
    const double loss_epsilon = c.outliers > 0 ? 1e-3 : 1e-5;
    CHECK(fused_m.loss() == doctest::Approx(ops_m.loss()).epsilon(loss_epsilon));
    CHECK(fused_m.accuracy(true) == doctest::Approx(ops_m.accuracy(true)));
    CHECK(fused_m.loss() == again_m.loss());
  }
}
}  // namespace

TEST_CASE("each plan's own kernel trains as the op-by-op steps and the CPU reference do, the same bits every run") {
  REQUIRE(fused_here());
  std::printf("worst |diff| / (1e-3 + |w|) of the weights:\n");
  check_fused_table();
}

TEST_CASE("the streaming kernel, every plan forced to it, trains as the op-by-op steps do") {
  REQUIRE(fused_here());
  StreamingOnly only;
  check_fused_table();
}

namespace {
// How far the GPU's gradients of each parameter are from the CPU's: the largest |difference|
// over the largest |CPU gradient| of that parameter, one figure per parameter.
std::vector<double> gradient_gaps(const nn::ParameterStore& store, const std::vector<float>& gpu,
                                  const std::vector<float>& cpu) {
  std::vector<double> gaps;
  size_t i = 0;
  for (const nn::Parameter& p : store.params) {
    const size_t end = i + static_cast<size_t>(p.value.numel());
    double largest = 0.0, worst = 0.0;
    for (size_t k = i; k < end; ++k) {
      largest = std::max(largest, std::abs(static_cast<double>(cpu[k])));
      worst = std::max(worst, std::abs(static_cast<double>(gpu[k]) - cpu[k]));
    }
    gaps.push_back(largest > 0.0 ? worst / largest : worst);
    i = end;
  }
  return gaps;
}
}  // namespace

// The op-by-op step itself, GPU against CPU, one step at a time from the same weights and Adam
// state (the CPU's copied over before each): the gradients, which the weights after a step do
// not show (Adam's first step moves a weight by about the learning rate whatever its
// gradient's size), and which later steps amplify where a gradient is near zero. Rounding moves
// a gradient by ~1e-6 of the parameter's largest; a different dropout mask or a wrong product
// by a sizeable share of it. The wide model runs three steps here.
TEST_CASE("the op-by-op step computes the CPU's gradients on the GPU, each step from the same state") {
  std::vector<FusedCase> cases = fused_cases();
  for (FusedCase& c : cases) c.steps = std::max<int64_t>(c.steps, 3);
  std::printf("largest |GPU - CPU gradient| / largest |CPU gradient|, per parameter:\n");
  for (const FusedCase& c : cases) {
    INFO(c.name);
    nn::Sequential gpu = fused_case_model(c, GPU), cpu = fused_case_model(c, Device::cpu());
    const nn::Dataset gpu_data = fused_case_data(c, GPU), cpu_data = fused_case_data(c, Device::cpu());
    const std::vector<int32_t> order = fused_case_order(c);
    nn::RunningMetrics gpu_m(GPU), cpu_m(Device::cpu());
    for (int64_t s = 0; s < c.steps; ++s) {
      CAPTURE(s);
      gpu.parameters().values.copy_from(cpu.parameters().values);
      auto gpu_state = gpu.optimizer().state(gpu.parameters());
      const auto cpu_state = cpu.optimizer().state(cpu.parameters());
      for (size_t k = 0; k < gpu_state.size(); ++k) gpu_state[k].second.copy_from(cpu_state[k].second);
      const std::vector<int32_t> rows(order.begin() + s * c.batch, order.begin() + (s + 1) * c.batch);
      gpu.train_step(gpu_data, Tensor::from_ints(rows, {c.batch}, GPU), gpu_m);
      cpu.train_step(cpu_data, Tensor::from_ints(rows, {c.batch}, Device::cpu()), cpu_m);
      const std::vector<double> gaps = gradient_gaps(cpu.parameters(), gpu.parameters().grads.to_vector(),
                                                     cpu.parameters().grads.to_vector());
      std::printf("%-40s step %lld:", c.name, static_cast<long long>(s));
      for (const double gap : gaps) std::printf(" %.1e", gap);
      std::printf("\n");
      for (const double gap : gaps) CHECK(gap <= 1e-4);
    }
    CHECK(gpu.step_counter().to_int_vector() == cpu.step_counter().to_int_vector());
  }
}

namespace {
// The seed's small model on 1,000 random 28 x 28 "images", batch 32: 31 full steps and a
// partial one of 8 rows per epoch.
const FusedCase FIT_CASE{"fit", 784, {128}, 10, 0.2f, 32, 1000, 0};

nn::FitOptions fit_options(int epochs, nn::FusedUse fused, std::ostream& log) {
  nn::FitOptions options;
  options.epochs = epochs;
  options.batch_size = FIT_CASE.batch;
  options.seed = 12;
  options.fused = fused;
  options.out = &log;
  return options;
}
}  // namespace

TEST_CASE("fit takes the fused kernel for an MLP and reports the epochs the op-by-op path does") {
  REQUIRE(fused_here());
  const nn::Dataset data = fused_case_data(FIT_CASE, GPU);
  std::ostringstream log;
  nn::Sequential fused = fused_case_model(FIT_CASE, GPU), ops = fused_case_model(FIT_CASE, GPU);
  nn::FitOptions with_breakdown = fit_options(3, nn::FusedUse::Auto, log);
  with_breakdown.breakdown = true;
  const nn::History f = fused.fit(data, with_breakdown);
  const nn::History o = ops.fit(data, fit_options(3, nn::FusedUse::Off, log));
  CHECK(f.fused);
  CHECK(f.fused_kernel == "stationary");
  CHECK_FALSE(o.fused);
  CHECK(o.fused_why_not == "--no-fused");
  REQUIRE(f.epochs.size() == 3);
  for (size_t e = 0; e < 3; ++e) {
    CAPTURE(e);
    CHECK(f.epochs[e].steps == 32);
    REQUIRE(f.epochs[e].breakdown);  // the launches, as compute
    CHECK(f.epochs[e].breakdown->fused_steps == 32);
    CHECK(f.epochs[e].breakdown->compute_seconds > 0.0);
    CHECK(f.epochs[e].loss == doctest::Approx(o.epochs[e].loss).epsilon(1e-4));
    CHECK(f.epochs[e].accuracy == doctest::Approx(o.epochs[e].accuracy).epsilon(1e-2));
  }
  CHECK(worst_relative(fused.parameters().values.to_vector(), ops.parameters().values.to_vector()) < 2e-2);
  CHECK(fused.step_counter().to_int_vector() == ops.step_counter().to_int_vector());
}

TEST_CASE("a fused run's checkpoint, resumed fused, ends where the straight run ends, bit for bit") {
  REQUIRE(fused_here());
  const nn::Dataset data = fused_case_data(FIT_CASE, GPU);
  std::ostringstream log;
  const std::string path =
      (std::filesystem::temp_directory_path() / "test_gpu_fused_mlp.ckpt").string();
  nn::Sequential straight = fused_case_model(FIT_CASE, GPU);
  straight.fit(data, fit_options(2, nn::FusedUse::On, log));

  nn::Sequential first = fused_case_model(FIT_CASE, GPU);
  nn::FitOptions one = fit_options(1, nn::FusedUse::On, log);
  one.checkpoint_path = path;
  one.checkpoint_every = 1;
  CHECK(first.fit(data, one).checkpoint_saved);
  nn::Sequential second = fused_case_model(FIT_CASE, GPU);
  const nn::TrainingState state = nn::load_checkpoint(second, path);
  nn::FitOptions resuming = fit_options(2, nn::FusedUse::On, log);
  resuming.resume = &state;
  CHECK(second.fit(data, resuming).fused);
  CHECK(second.parameters().values.to_vector() == straight.parameters().values.to_vector());
  std::filesystem::remove(path);
}

TEST_CASE("the NaN check of a fused run names the step and the first weight a NaN reached") {
  REQUIRE(fused_here());
  nn::Dataset data = fused_case_data(FIT_CASE, Device::cpu());
  std::vector<float> x = data.x.to_vector();
  x[70 * 784 + 300] = std::numeric_limits<float>::quiet_NaN();  // row 70: step 3 unshuffled
  data.x = Tensor::from_vector(x, data.x.shape()).to(GPU);
  data.y = data.y.to(GPU);
  std::ostringstream log;
  nn::FitOptions options = fit_options(1, nn::FusedUse::Auto, log);
  options.shuffle = false;
  options.check_numerics = true;
  nn::Sequential model = fused_case_model(FIT_CASE, GPU);
  // (ReLU turns the NaN pre-activation into 0, so the loss stays finite; the first kernel's
  // gradient x^T d, and so its weights after Adam, see it.)
  check_message(error_of([&] { model.fit(data, options); }),
                {"NaN/Inf at epoch 1, step 3/32", "in the weights of dense/kernel",
                 "after the step's update", "Training stopped without saving it"});
}
