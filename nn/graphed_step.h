// The training step as fit() runs it on a GPU: the first full batch op by op (it creates the
// optimizer's state and fills the allocator's cache), the second recorded as one CUDA graph,
// and every full batch after that a replay of it: one launch instead of one per kernel. A
// partial last batch has other shapes than the recorded step and runs op by op. Where the
// device cannot record (the CPU) or FitOptions::use_graph is off, every step runs op by op.
#pragma once
#include <memory>

#include "nn/fit_run.h"

namespace engine::nn {

class GraphedStep {
 public:
  explicit GraphedStep(FitRun& run) : run_(run) {}
  // One step on the rows `index` of the source, a full batch or not.
  void run(const Tensor& index, bool full_batch);

 private:
  FitRun& run_;
  std::unique_ptr<StepGraph> graph_;
  Tensor graph_index_;  // the index tensor the recorded step reads
  int64_t eager_full_steps_ = 0;
};

}  // namespace engine::nn
