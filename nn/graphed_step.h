// The training step as fit() runs it on a GPU: the first full batch op by op (it creates the
// optimizer's state and fills the allocator's cache), the second recorded as one CUDA graph,
// and every full batch after that a replay of it: one launch instead of one per kernel. A
// partial last batch has other shapes than the recorded step and runs op by op. Where the
// device cannot record (the CPU) or FitOptions::use_graph is off, every step runs op by op.
//
// A replay launches the recorded kernels with the arguments they were recorded with, the
// optimizer's learning rate among them (passed by value). So when the rate changes (a
// schedule, a callback: Optimizer::set_learning_rate), the next full step records the graph
// again (History::graph_captures): ~1 ms of host time, which a step at the new rate then
// replays. Reading the rate from a device scalar instead would change every update kernel;
// re-recording changes none, and a run without a schedule records once, as before.
#pragma once
#include <functional>
#include <memory>

#include "nn/fit_run.h"

namespace engine::nn {

class GraphedStep {
 public:
  // Records `step` as a replayable graph, or returns nullptr where it cannot.
  using Recorder = std::function<std::unique_ptr<StepGraph>(const std::function<void()>& step)>;
  // `record`: the device's own (DeviceServices::capture) when empty; a test passes a stand-in.
  explicit GraphedStep(FitRun& run, Recorder record = nullptr)
      : run_(run), record_(std::move(record)) {}
  // One step on the rows `index` of the source, a full batch or not.
  void run(const Tensor& index, bool full_batch);

 private:
  FitRun& run_;
  Recorder record_;
  std::unique_ptr<StepGraph> graph_;
  Tensor graph_index_;      // the index tensor the recorded step reads
  float graph_rate_ = 0.0f;  // the learning rate the recorded step applies
  int64_t eager_full_steps_ = 0;
  bool recordable_ = true;  // false once the device declined to record
};

}  // namespace engine::nn
