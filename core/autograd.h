// Reverse-mode automatic differentiation on a recorded graph.
//
// Every differentiable op (core/ops_*.cpp) that sees an input requiring a gradient records a
// Node on its output: the node keeps the inputs (its edges) and whatever the backward needs.
// backward(loss) orders the nodes reachable from the loss topologically and visits them in
// reverse, so each node runs once, after every consumer of its output has contributed:
// gradients of a tensor used twice are summed before they flow further.
#pragma once
#include <functional>
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
  // The output's shape, noted by record().
  const Shape& output_shape() const { return output_shape_; }

  // ---- batched rules, for Jacobians (core/linearize.h) -------------------------------------
  // Both push K directions through the op at once. A direction's tangent or cotangent has the
  // shape of the tensor it belongs to, and the K of them are stacked into one contiguous
  // (K, *shape) tensor (stacked_shape below), so most rules are one op call for all K.
  //
  // Reverse mode: the K cotangents of the output -> the K cotangents of each input i with
  // wanted[i], undefined elsewhere (a Jacobian never computes a weight's gradient). The
  // default runs backward() once per direction; ops on a Jacobian's fast paths override it.
  virtual std::vector<Tensor> vjp(int64_t directions, const Tensor& cotangents,
                                  const std::vector<bool>& wanted);
  // Forward mode: the K tangents of each input (undefined where the input does not depend on
  // the Jacobian's x: a zero tangent) -> the K tangents of the output. Only ops that have a
  // forward-mode rule say so with has_jvp(); the default jvp throws.
  virtual bool has_jvp() const { return false; }
  virtual Tensor jvp(int64_t directions, const std::vector<Tensor>& tangents);

 private:
  friend Tensor& record(Tensor& output, std::shared_ptr<Node> node);
  std::vector<Tensor> inputs_;
  Shape output_shape_;
};

// K directions of `shape` stacked into one tensor: (K, *shape).
Shape stacked_shape(int64_t directions, const Shape& shape);
// Direction k of a stacked tensor, as a view of `shape` (no copy).
Tensor direction(const Tensor& stacked, int64_t k, const Shape& shape);

// The nodes reachable from `root` (root included), each after every node whose output it
// consumes: inputs before consumers, the order of the forward pass.
std::vector<Node*> topological_order(Node* root);

// Runs the backward pass from `root`. With no `seed`, root must hold one element and its
// gradient is 1. Leaf tensors that require grad get their .grad accumulated (added to an
// existing grad in place, so a parameter's grad view into a model's flat gradient buffer
// is filled where it lies). `leaf_written`, where given, is called after each contribution to
// a leaf's grad was queued: data-parallel training starts averaging a group of gradients
// across GPUs while the backward pass goes on (nn/gradient_buckets.h).
void backward(const Tensor& root, const Tensor& seed = Tensor(),
              const std::function<void(const Tensor& leaf)>& leaf_written = {});

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

// Sets grad mode for a scope, either way: jacobian() records f even when called inside a
// NoGradGuard.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled);
  ~GradModeGuard();
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

// Attaches `node` to `output` when grad mode is on and any of the node's inputs needs a
// gradient; otherwise drops it. Returns the output for chaining.
Tensor& record(Tensor& output, std::shared_ptr<Node> node);

}  // namespace engine
