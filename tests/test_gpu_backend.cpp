// The GPU as a whole (its DeviceServices and the ops together), beyond single ops: graph
// replay computes exactly what the op-by-op step computes, the steady state never reaches
// cudaMalloc, a partial last batch is handled, running out of device memory is a DeviceError
// (exit status 2 in apps), and the measuring parts (timers, the peaks probe, --breakdown) run
// here, where compute-sanitizer covers them (scripts/gpu/sanitize.sh).
// Runs only with a GPU (gpu_skip_main.cpp reports "Skipped" otherwise).
#include <doctest/doctest.h>

#include <memory>
#include <sstream>
#include <vector>

#include "core/device_services.h"
#include "core/error.h"
#include "core/rng.h"
#include "nn/layers.h"
#include "nn/sequential.h"

using namespace engine;

namespace {

// 300 random samples of 20 features, 4 classes; 300 = 9 batches of 32 + 12.
nn::Dataset random_data(Device device) {
  Generator rng(5);
  std::vector<float> x(300 * 20);
  std::vector<int32_t> y(300);
  for (float& v : x) v = rng.uniform();
  for (int32_t& v : y) v = static_cast<int32_t>(rng.below(4));
  return {Tensor::from_vector(x, {300, 20}, device), Tensor::from_ints(y, {300}, device)};
}

struct Run {
  nn::History history;
  std::vector<float> weights;
  AllocatorStats memory_after_first_epoch, memory_after_last_epoch;
};

Run train(bool use_graph, int epochs, bool breakdown = false) {
  const Device gpu = Device::cuda();
  const nn::Dataset data = random_data(gpu);
  nn::Sequential model{nn::dense(64, Activation::Relu), nn::dropout(0.3f),
                       nn::dense(4, Activation::Softmax)};
  model.build({20}, gpu, 9);
  model.compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy);
  std::ostringstream log;
  nn::FitOptions options;
  options.batch_size = 32;
  options.seed = 9;
  options.use_graph = use_graph;
  options.fused = nn::FusedUse::Off;  // the graph against op by op, not the fused MLP kernel
  options.breakdown = breakdown;
  options.out = &log;
  Run run;
  options.epochs = 1;
  run.history = model.fit(data, options);
  run.memory_after_first_epoch = device_services(gpu).allocator().stats();
  options.epochs = epochs - 1;
  const nn::History rest = model.fit(data, options);
  run.memory_after_last_epoch = device_services(gpu).allocator().stats();
  run.history.epochs.insert(run.history.epochs.end(), rest.epochs.begin(), rest.epochs.end());
  run.weights = model.parameters().values.to_vector();
  return run;
}

}  // namespace

TEST_CASE("graph replay computes exactly what the op-by-op step computes, partial batches too") {
  const Run graph = train(true, 3);
  const Run eager = train(false, 3);
  CHECK(graph.history.graph_replay);
  CHECK(graph.history.kernels_per_step > 10);
  CHECK(!eager.history.graph_replay);
  REQUIRE(graph.history.epochs.size() == eager.history.epochs.size());
  for (size_t e = 0; e < graph.history.epochs.size(); ++e) {
    // Same kernels in the same order on the same data: bit-identical, not just close.
    CHECK(graph.history.epochs[e].loss == eager.history.epochs[e].loss);
    CHECK(graph.history.epochs[e].accuracy == eager.history.epochs[e].accuracy);
  }
  CHECK(graph.weights == eager.weights);
  CHECK(graph.history.epochs.back().loss < graph.history.epochs.front().loss);
}

namespace {

// The cudaMalloc count after each epoch: re-recording the graph reuses the cached memory.
struct Mallocs : nn::Callback {
  std::vector<size_t> after_epoch;
  void on_epoch_end(nn::FitControl&, const nn::EpochRecord&) override {
    after_epoch.push_back(device_services(Device::cuda()).allocator().stats().system_allocations);
  }
};

// Four epochs under a cosine schedule: a new rate every epoch.
Run train_scheduled(bool use_graph, const std::shared_ptr<Mallocs>& mallocs) {
  const Device gpu = Device::cuda();
  const nn::Dataset data = random_data(gpu);
  nn::Sequential model{nn::dense(64, Activation::Relu), nn::dropout(0.3f),
                       nn::dense(4, Activation::Softmax)};
  model.build({20}, gpu, 9);
  model.compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy);
  std::ostringstream log;
  nn::FitOptions options;
  options.epochs = 4;
  options.seed = 9;
  options.use_graph = use_graph;
  options.fused = nn::FusedUse::Off;  // the graph against op by op, not the fused MLP kernel
  options.out = &log;
  options.lr_schedule = nn::LearningRateSchedule::cosine(1e-5);
  options.callbacks = {mallocs};
  Run run;
  run.history = model.fit(data, options);
  run.weights = model.parameters().values.to_vector();
  return run;
}

}  // namespace

// A schedule changes the rate a recorded step holds (by value, in its update kernel): fit
// records the step again at each new rate, and ends with the op-by-op weights, bit for bit.
TEST_CASE("a learning-rate schedule with the graph: re-recorded per rate, the op-by-op weights") {
  const auto graph_mallocs = std::make_shared<Mallocs>();
  const Run graph = train_scheduled(true, graph_mallocs);
  const Run eager = train_scheduled(false, std::make_shared<Mallocs>());
  CHECK(graph.history.graph_replay);
  CHECK(graph.history.graph_captures == 4);  // epoch 1's second step, then each epoch's new rate
  CHECK(eager.history.graph_captures == 0);
  REQUIRE(graph.history.epochs.size() == eager.history.epochs.size());
  for (size_t e = 0; e < graph.history.epochs.size(); ++e) {
    CHECK(graph.history.epochs[e].learning_rate == eager.history.epochs[e].learning_rate);
    CHECK(graph.history.epochs[e].loss == eager.history.epochs[e].loss);
  }
  CHECK(graph.history.epochs[1].learning_rate < graph.history.epochs[0].learning_rate);
  CHECK(graph.weights == eager.weights);
  REQUIRE(graph_mallocs->after_epoch.size() == 4);
  CHECK(graph_mallocs->after_epoch[3] == graph_mallocs->after_epoch[1]);
}

TEST_CASE("after the first epoch, training never reaches cudaMalloc") {
  const Run run = train(true, 4);
  CHECK(run.memory_after_last_epoch.system_allocations ==
        run.memory_after_first_epoch.system_allocations);
  CHECK(run.memory_after_last_epoch.peak_bytes > 0);
}

TEST_CASE("asking for more device memory than there is: a DeviceError that says so") {
  bool thrown = false;
  try {
    Tensor::empty({int64_t{1} << 40}, DType::F32, Device::cuda());  // 4 TiB
  } catch (const DeviceError& e) {
    thrown = true;
    const std::string what = e.what();
    CHECK(what.find("out of memory") != std::string::npos);
    CHECK(what.find("cuda:0") != std::string::npos);
  }
  CHECK(thrown);
  // The device still works afterwards.
  const Tensor t = Tensor::full({3}, 2.0f, Device::cuda());
  CHECK(t.to_vector() == std::vector<float>{2.0f, 2.0f, 2.0f});
}

TEST_CASE("the device's timers: spans in the device's order that add up, again after a reset") {
  const std::unique_ptr<DeviceTimers> timers = device_services(Device::cuda()).make_timers();
  for (int round = 0; round < 2; ++round) {
    timers->reset();
    const uint64_t start = timers->record();
    const Tensor filled = Tensor::full({int64_t{1} << 24}, 1.0f, Device::cuda());  // 64 MiB written
    const uint64_t middle = timers->record();
    const uint64_t end = timers->record();
    const double fill = timers->seconds(start, middle);
    const double nothing = timers->seconds(middle, end);
    CHECK(fill > 0.0);
    CHECK(nothing >= 0.0);
    // One clock: the whole span is its two parts (to the events' float milliseconds).
    CHECK(timers->seconds(start, end) == doctest::Approx(fill + nothing).epsilon(1e-3));
  }
}

TEST_CASE("the peaks probe on the GPU: every figure measured") {
  const MeasuredPeaks p = device_services(Device::cuda()).measure_peaks();
  // Bounds any CUDA GPU meets by far, compute-sanitizer's slowing included: a smoke test of the
  // probe's path, not of the device (docs/PROFILING.md has the H100's figures). A launch took
  // 14 ms under memcheck with 15 other sanitized suites loading the host (H100, 2026-11-24);
  // ~2 us unsanitized. 0.1 s still catches a latency reported in the wrong unit.
  CHECK(p.flops_per_s > 1e9);
  CHECK(p.bytes_per_s > 1e9);
  CHECK(p.launch_seconds > 0.0);
  CHECK(p.launch_seconds < 1e-1);
  CHECK(p.host_to_device_bytes_per_s > 1e8);
  CHECK(p.device_to_host_bytes_per_s > 1e8);
}

TEST_CASE("--breakdown on the GPU: device spans inside each epoch's wall, replays counted") {
  const Run run = train(true, 3, /*breakdown=*/true);
  REQUIRE(run.history.epochs.size() == 3);
  for (const nn::EpochRecord& e : run.history.epochs) {
    REQUIRE(e.breakdown);
    const nn::EpochBreakdown& b = *e.breakdown;
    INFO("epoch ", e.epoch);
    CHECK(b.steps == 10);  // 9 full batches and a partial one
    CHECK(b.compute_seconds > 0.0);
    CHECK(b.readback_seconds > 0.0);  // the epoch's loss and accuracy
    CHECK(b.input_seconds == 0.0);    // resident rows: the batch is part of the step
    // Device time within the host's wall (a little slack for two clocks).
    CHECK(b.measured_seconds() <= b.wall_seconds * 1.01 + 50e-6);
  }
  // train() runs epoch 1 alone and epochs 2-3 as a second fit: in each fit the first full step
  // runs op by op and the second is recorded and replayed, so 8 of 9 full batches are replays
  // in its first epoch, 9 of 9 after; the partial batch always runs op by op.
  CHECK(run.history.epochs[0].breakdown->replayed_steps == 8);
  CHECK(run.history.epochs[1].breakdown->replayed_steps == 8);
  CHECK(run.history.epochs[2].breakdown->replayed_steps == 9);
}
