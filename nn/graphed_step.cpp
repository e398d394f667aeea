#include "nn/graphed_step.h"

#include "core/error.h"
#include "core/nvtx.h"
#include "nn/sequential.h"

namespace engine::nn {

void GraphedStep::run(const Tensor& index, bool full_batch) {
  Sequential& model = run_.model;
  const Dataset& data = run_.source.rows();
  if (!full_batch) {
    model.train_step(data, index, run_.running);
    return;
  }
  if (run_.options.use_graph && !graph_ && eager_full_steps_ > 0) {
    run_.clock.leave();  // recording runs nothing on the device: host time, "other"
    const auto capture_start = std::chrono::steady_clock::now();
    graph_ = run_.device.capture([&] { model.train_step(data, index, run_.running); });
    graph_index_ = index;
    if (graph_) {
      run_.history.graph_replay = true;
      run_.history.kernels_per_step = graph_->kernel_count();
      run_.history.capture_seconds = seconds_since(capture_start);
    }
    run_.clock.enter(BreakdownClock::Part::Compute);
  }
  if (graph_) {
    ENGINE_CHECK(index.same_storage(graph_index_), "a batch source moved its full-batch index");
    NvtxRange range("train_step");
    graph_->replay();
    ++run_.replayed_steps;
  } else {
    model.train_step(data, index, run_.running);
    ++eager_full_steps_;
  }
}

}  // namespace engine::nn
