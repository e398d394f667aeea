// The recorded graph of y = f(x), cut down to the ops on a path from x to y, and the two
// ways of pushing K directions through it at once:
//   jvp: K tangents of x  (K, *x.shape) -> K tangents of y  (K, *y.shape), forward mode:
//        each op's Node::jvp, in the order the forward pass ran them;
//   vjp: K cotangents of y (K, *y.shape) -> K cotangents of x (K, *x.shape), reverse mode:
//        each op's Node::vjp, in reverse order.
// Row k of the K directions is one Jacobian-vector (or vector-Jacobian) product. Ops that do
// not depend on x (a weight's own history) are never visited and no weight's gradient is
// computed, so neither sweep touches any tensor's .grad. nn/jacobian.h builds full
// Jacobians from these two sweeps.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/autograd.h"
#include "core/tensor.h"

namespace engine {

class Linearization {
 public:
  // x: the leaf that y was recorded from (it requires grad); y = f(x) with f made of engine
  // ops, recorded (grad mode on). Holding y keeps the recorded graph alive.
  Linearization(const Tensor& x, const Tensor& y);

  const Tensor& x() const { return x_; }
  const Tensor& y() const { return y_; }
  bool depends_on_x() const { return y_is_x_ || !ops_.empty(); }
  int64_t op_count() const { return static_cast<int64_t>(ops_.size()); }
  // Whether every op on the path has a forward-mode rule; if not, `missing` names one.
  bool forward_supported(std::string* missing = nullptr) const;

  Tensor jvp(int64_t directions, const Tensor& tangents) const;
  Tensor vjp(int64_t directions, const Tensor& cotangents) const;

 private:
  bool is_x(const Tensor& t) const;

  Tensor x_, y_;
  bool y_is_x_ = false;
  std::vector<Node*> ops_;  // the ops on a path from x to y, inputs before consumers
  std::unordered_map<const Node*, std::vector<bool>> wanted_;  // per op: inputs that depend on x
  std::unordered_map<const Node*, int> consumers_;  // per op: uses of its output on the path
};

}  // namespace engine
