// Reverse-mode automatic differentiation on a recorded graph.
//
// Every differentiable op (core/ops.cpp) that sees an input requiring a gradient records a
// Node on its output: the node keeps the inputs (its edges) and whatever the backward needs.
// backward(loss) orders the nodes reachable from the loss topologically and visits them in
// reverse, so each node runs once, after every consumer of its output has contributed:
// gradients of a tensor used twice are summed before they flow further.
#pragma once
#include <memory>
#include <vector>

#include "core/tensor.h"

namespace engine {

class Node {
 public:
  explicit Node(std::vector<Tensor> inputs) : inputs_(std::move(inputs)) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual const char* name() const = 0;
  // Given d(loss)/d(output), returns d(loss)/d(input_i) for each input, or an undefined
  // tensor where needs_input_grad(i) is false.
  virtual std::vector<Tensor> backward(const Tensor& grad_output) = 0;

  const std::vector<Tensor>& inputs() const { return inputs_; }
  // Where the gradient for input i may be written directly: the leaf's own gradient buffer
  // when it is marked overwrite (see Tensor::set_overwrite_grad), else undefined. A node
  // that writes there returns that same tensor, and backward() skips the accumulation.
  Tensor gradient_destination(size_t i) const;
  bool needs_input_grad(size_t i) const {
    return inputs_[i].defined() && inputs_[i].requires_grad();
  }

 private:
  std::vector<Tensor> inputs_;
};

// Runs the backward pass from `root`. With no `seed`, root must hold one element and its
// gradient is 1. Leaf tensors that require grad get their .grad accumulated (added to an
// existing grad in place, so a parameter's grad view into a model's flat gradient buffer
// is filled where it lies).
void backward(const Tensor& root, const Tensor& seed = Tensor());

// Whether ops record nodes; off inside a NoGradGuard (evaluation, optimizer steps).
bool grad_enabled();

class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Attaches `node` to `output` when grad mode is on and any of the node's inputs needs a
// gradient; otherwise drops it. Returns the output for chaining.
Tensor& record(Tensor& output, std::shared_ptr<Node> node);

}  // namespace engine
