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
  // A recorded step keeps the rate it was recorded with: record it again for a new one.
  const float rate = model.optimizer().learning_rate();
  const bool stale = graph_ && rate != graph_rate_;
  if (run_.options.use_graph && recordable_ && (stale || (!graph_ && eager_full_steps_ > 0))) {
    run_.clock.leave();  // recording runs nothing on the device: host time, "other"
    const auto capture_start = std::chrono::steady_clock::now();
    graph_.reset();  // waits for its last replay; its memory goes back to the allocator's cache
    graph_index_ = index;
    // Captures nothing of this call's frame: a stand-in recorder may call it again later.
    const std::function<void()> step = [this] {
      run_.model.train_step(run_.source.rows(), graph_index_, run_.running);
    };
    graph_ = record_ ? record_(step) : run_.device.capture(step);
    recordable_ = graph_ != nullptr;  // the CPU, or an op hook (--profile): op by op from now on
    if (graph_) {
      graph_rate_ = rate;
      History& history = run_.history;
      if (history.graph_captures++ == 0) {  // the first recording is part of the warm-up
        history.graph_replay = true;
        history.kernels_per_step = graph_->kernel_count();
        history.capture_seconds = seconds_since(capture_start);
      }
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
