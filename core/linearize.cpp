#include "core/linearize.h"

#include <unordered_set>

#include "core/batched_rules.h"
#include "core/error.h"
#include "core/nvtx.h"

namespace engine {
namespace {

// `what` (e.g. "vjp of 'matmul'") must hold K directions of `shape`.
void check_stack(const std::string& what, const Tensor& t, int64_t directions, const Shape& shape) {
  ENGINE_CHECK(t.defined() && t.shape() == stacked_shape(directions, shape), what, " has shape ",
               t.defined() ? to_string(t.shape()) : "(undefined)", ", expected ",
               to_string(stacked_shape(directions, shape)));
}

// slot += g, where the first contribution is kept as it is (it may be shared: add hands one
// tensor to both inputs), so a sum is always a new tensor.
void accumulate(Tensor& slot, const Tensor& g) {
  slot = slot.defined() ? detail::stacked_binary(BinaryOp::Add, slot, g) : g;
}

}  // namespace

Linearization::Linearization(const Tensor& x, const Tensor& y) : x_(x), y_(y) {
  ENGINE_CHECK(x.defined() && x.requires_grad() && !x.grad_fn(),
               "Linearization: x must be a leaf that requires grad");
  ENGINE_CHECK(y.defined() && y.dtype() == DType::F32, "Linearization: f(x) must be a float tensor");
  ENGINE_CHECK(y.device() == x.device(), "Linearization: f(x) is on ", to_string(y.device()),
               ", x on ", to_string(x.device()));
  y_is_x_ = is_x(y);
  Node* root = y.grad_fn().get();
  if (root == nullptr) return;  // y is x itself, or a constant
  // An op is on the path when one of its inputs is x or the output of an op on the path;
  // inputs come before consumers, so one pass in recording order decides every op.
  std::unordered_set<const Node*> on_path;
  for (Node* op : topological_order(root)) {
    std::vector<bool> wanted(op->inputs().size(), false);
    bool any = false;
    for (size_t i = 0; i < wanted.size(); ++i) {
      const Tensor& in = op->inputs()[i];
      wanted[i] = in.defined() && (is_x(in) || on_path.count(in.grad_fn().get()) > 0);
      if (wanted[i] && in.grad_fn()) ++consumers_[in.grad_fn().get()];
      any = any || wanted[i];
    }
    if (!any) continue;
    on_path.insert(op);
    ops_.push_back(op);
    wanted_.emplace(op, std::move(wanted));
  }
  if (on_path.count(root) == 0) {  // y does not depend on x: nothing to sweep
    ops_.clear();
    wanted_.clear();
    consumers_.clear();
  }
}

bool Linearization::is_x(const Tensor& t) const {
  return !t.grad_fn() && t.requires_grad() && t.same_storage(x_) && t.raw_data() == x_.raw_data() &&
         t.shape() == x_.shape();
}

bool Linearization::forward_supported(std::string* missing) const {
  for (const Node* op : ops_) {
    if (!op->has_jvp()) {
      if (missing) *missing = op->name();
      return false;
    }
  }
  return true;
}

Tensor Linearization::jvp(int64_t directions, const Tensor& tangents) const {
  check_stack("jvp: the tangents of x", tangents, directions, x_.shape());
  if (y_is_x_) return tangents;
  if (ops_.empty()) return Tensor::zeros(stacked_shape(directions, y_.shape()), DType::F32, y_.device());
  NoGradGuard no_grad;
  std::unordered_map<const Node*, Tensor> tangent;  // of each op's output, until its last use
  std::unordered_map<const Node*, int> uses_left = consumers_;
  for (Node* op : ops_) {
    const std::vector<bool>& wanted = wanted_.at(op);
    std::vector<Tensor> in(wanted.size());
    for (size_t i = 0; i < in.size(); ++i) {
      if (!wanted[i]) continue;
      const Tensor& input = op->inputs()[i];
      in[i] = is_x(input) ? tangents : tangent.at(input.grad_fn().get());
    }
    Tensor out;
    {
      NvtxRange range(op->name());
      out = op->jvp(directions, in);
    }
    check_stack(detail::concat("jvp of '", op->name(), "'"), out, directions, op->output_shape());
    tangent[op] = out;
    for (size_t i = 0; i < in.size(); ++i) {  // free what no later op reads
      const Node* producer = wanted[i] ? op->inputs()[i].grad_fn().get() : nullptr;
      if (producer && --uses_left[producer] == 0) tangent.erase(producer);
    }
  }
  return tangent.at(y_.grad_fn().get());
}

Tensor Linearization::vjp(int64_t directions, const Tensor& cotangents) const {
  check_stack("vjp: the cotangents of y", cotangents, directions, y_.shape());
  if (y_is_x_) return cotangents;
  if (ops_.empty()) return Tensor::zeros(stacked_shape(directions, x_.shape()), DType::F32, x_.device());
  NoGradGuard no_grad;
  std::unordered_map<const Node*, Tensor> pending;  // cotangent of each op's output
  pending[y_.grad_fn().get()] = cotangents;
  Tensor result;
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
    Node* op = *it;
    auto found = pending.find(op);
    ENGINE_CHECK(found != pending.end(), "vjp: no cotangent reached '", op->name(), "'");
    const Tensor cotangent = found->second;
    pending.erase(found);
    const std::vector<bool>& wanted = wanted_.at(op);
    std::vector<Tensor> grads;
    {
      NvtxRange range(op->name());
      grads = op->vjp(directions, cotangent, wanted);
    }
    ENGINE_CHECK(grads.size() == wanted.size(), op->name(), " vjp returned ", grads.size(),
                 " cotangents for ", wanted.size(), " inputs");
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!wanted[i]) continue;
      const Tensor& input = op->inputs()[i];
      check_stack(detail::concat("vjp of '", op->name(), "'"), grads[i], directions, input.shape());
      accumulate(is_x(input) ? result : pending[input.grad_fn().get()], grads[i]);
    }
  }
  return result;  // defined: every op on the path leads back to x
}

}  // namespace engine
