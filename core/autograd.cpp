#include "core/autograd.h"

#include <unordered_map>
#include <unordered_set>

#include "core/ops/elementwise.h"
#include "core/error.h"
#include "core/nvtx.h"

namespace engine {
namespace {

thread_local bool g_grad_enabled = true;

}  // namespace

// Nodes reachable from `root` in iterative DFS post-order: every node after the nodes whose
// outputs it consumes (inputs before consumers); backward() walks the list in reverse.
std::vector<Node*> topological_order(Node* root) {
  std::vector<Node*> order;
  std::unordered_set<Node*> visited;
  std::vector<std::pair<Node*, size_t>> stack{{root, 0}};
  visited.insert(root);
  while (!stack.empty()) {
    auto& [node, next_input] = stack.back();
    if (next_input < node->inputs().size()) {
      const Tensor& input = node->inputs()[next_input++];
      Node* child = input.defined() ? input.grad_fn().get() : nullptr;
      if (child && visited.insert(child).second) stack.emplace_back(child, 0);
    } else {
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;  // post-order: inputs before consumers
}

namespace {

// sum += g. A gradient tensor may be shared (an add node hands the same tensor to both of
// its inputs), so the first contribution is stored as is and later ones build a new sum.
void accumulate_into(Tensor& sum, const Tensor& g) {
  if (!sum.defined()) {
    sum = g;
    return;
  }
  Tensor total = Tensor::empty(sum.shape(), DType::F32, sum.device());
  raw::binary(BinaryOp::Add, sum, g, total);
  sum = total;
}

void accumulate_leaf(Tensor& leaf, const Tensor& g) {
  Tensor existing = leaf.grad();
  if (!existing.defined()) {
    leaf.set_grad(g.clone());
  } else if (leaf.overwrite_grad()) {
    if (existing.raw_data() != g.raw_data()) existing.copy_from(g);  // else written in place
    leaf.set_overwrite_grad(false);  // a second contribution adds
  } else {
    raw::axpby(1.0f, g, 1.0f, existing);  // the leaf owns its grad: add in place
  }
}

}  // namespace

Tensor Node::gradient_destination(size_t i) const {
  const Tensor& input = inputs_[i];
  if (!needs_input_grad(i) || input.grad_fn() || !input.overwrite_grad()) return Tensor();
  for (size_t j = 0; j < inputs_.size(); ++j) {  // a leaf used twice here gets two gradients
    if (j != i && inputs_[j].defined() && inputs_[j].raw_data() == input.raw_data()) return Tensor();
  }
  return input.grad();
}

bool grad_enabled() { return g_grad_enabled; }

NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

GradModeGuard::GradModeGuard(bool enabled) : previous_(g_grad_enabled) { g_grad_enabled = enabled; }
GradModeGuard::~GradModeGuard() { g_grad_enabled = previous_; }

Shape stacked_shape(int64_t directions, const Shape& shape) {
  Shape out{directions};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

Tensor direction(const Tensor& stacked, int64_t k, const Shape& shape) {
  return stacked.slice(k * numel(shape), shape);
}

// One backward() per direction, each written into its slot of the stacked result. Nodes
// that write gradients in place (gradient_destination) override vjp, so this never touches
// a parameter's gradient buffer.
std::vector<Tensor> Node::vjp(int64_t directions, const Tensor& cotangents,
                              const std::vector<bool>& wanted) {
  std::vector<Tensor> out(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (wanted[i]) {
      out[i] = Tensor::empty(stacked_shape(directions, inputs_[i].shape()), DType::F32,
                             cotangents.device());
    }
  }
  for (int64_t k = 0; k < directions; ++k) {
    const std::vector<Tensor> g = backward(direction(cotangents, k, output_shape_));
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (!wanted[i]) continue;
      Tensor slot = direction(out[i], k, inputs_[i].shape());
      if (g[i].defined()) {
        slot.copy_from(g[i]);
      } else {
        raw::fill(slot, 0.0f);
      }
    }
  }
  return out;
}

Tensor Node::jvp(int64_t, const std::vector<Tensor>&) {
  throw Error(detail::concat("forward mode: the op '", name(),
                             "' has no forward-mode rule (use reverse mode)"));
}

Tensor& record(Tensor& output, std::shared_ptr<Node> node) {
  if (!g_grad_enabled) return output;
  node->output_shape_ = output.shape();
  for (size_t i = 0; i < node->inputs().size(); ++i) {
    if (node->needs_input_grad(i)) {
      output.set_grad_fn(std::move(node));
      return output;
    }
  }
  return output;
}

void backward(const Tensor& root, const Tensor& seed,
              const std::function<void(const Tensor& leaf)>& leaf_written) {
  ENGINE_CHECK(root.defined(), "backward() on an undefined tensor");
  ENGINE_CHECK(root.requires_grad(),
               "backward() on a tensor that does not require grad (nothing was recorded)");
  Tensor root_grad = seed;
  if (!root_grad.defined()) {
    ENGINE_CHECK(root.numel() == 1, "backward() without a seed needs a one-element tensor, got ",
                 to_string(root.shape()));
    root_grad = Tensor::full(root.shape(), 1.0f, root.device());
  }
  ENGINE_CHECK(root_grad.shape() == root.shape(), "backward seed shape ",
               to_string(root_grad.shape()), " differs from ", to_string(root.shape()));

  // Backward itself is never recorded (no higher-order gradients).
  NoGradGuard no_grad;
  Node* root_node = root.grad_fn().get();
  if (root_node == nullptr) {  // root is a leaf
    Tensor leaf = root;
    accumulate_leaf(leaf, root_grad);
    if (leaf_written) leaf_written(leaf);
    return;
  }
  std::unordered_map<Node*, Tensor> pending;  // gradient w.r.t. each node's output
  pending[root_node] = root_grad;
  const std::vector<Node*> order = topological_order(root_node);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* node = *it;
    auto found = pending.find(node);
    if (found == pending.end()) continue;  // no gradient reached this node
    const Tensor grad_output = found->second;
    pending.erase(found);
    std::vector<Tensor> grads;
    {
      NvtxRange range(node->name());  // "matmul", "dropout", ... in Nsight's timeline
      grads = node->backward(grad_output);
    }
    ENGINE_CHECK(grads.size() == node->inputs().size(), node->name(), " backward returned ",
                 grads.size(), " gradients for ", node->inputs().size(), " inputs");
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!node->needs_input_grad(i) || !grads[i].defined()) continue;
      Tensor input = node->inputs()[i];
      ENGINE_CHECK(grads[i].shape() == input.shape(), node->name(), " produced a gradient of shape ",
                   to_string(grads[i].shape()), " for an input of shape ",
                   to_string(input.shape()));
      if (Node* producer = input.grad_fn().get()) {
        accumulate_into(pending[producer], grads[i]);
      } else {
        accumulate_leaf(input, grads[i]);
        if (leaf_written) leaf_written(input);
      }
    }
  }
}

}  // namespace engine
