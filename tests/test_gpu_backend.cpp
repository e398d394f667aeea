// The CUDA backend as a whole, beyond single ops: graph replay computes exactly what the
// op-by-op step computes, the steady state never reaches cudaMalloc, a partial last batch
// is handled, and running out of device memory is a DeviceError (exit status 2 in apps).
// Runs only with a GPU (gpu_skip_main.cpp reports "Skipped" otherwise).
#include <doctest/doctest.h>

#include <sstream>

#include "core/backend.h"
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

Run train(bool use_graph, int epochs) {
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
  options.out = &log;
  Run run;
  options.epochs = 1;
  run.history = model.fit(data, options);
  run.memory_after_first_epoch = backend_for(gpu).allocator().stats();
  options.epochs = epochs - 1;
  const nn::History rest = model.fit(data, options);
  run.memory_after_last_epoch = backend_for(gpu).allocator().stats();
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
  // The backend still works afterwards.
  const Tensor t = Tensor::full({3}, 2.0f, Device::cuda());
  CHECK(t.to_vector() == std::vector<float>{2.0f, 2.0f, 2.0f});
}
