// Row-wise softmax and log-softmax, and the losses built on them.
#include "core/autograd.h"
#include "core/op_checks.h"
#include "core/ops.h"

namespace engine {
namespace {

class SoftmaxNode final : public Node {
 public:
  SoftmaxNode(const Tensor& x, const Tensor& y, bool log) : Node({x}), y_(y.detach()), log_(log) {}
  const char* name() const override { return log_ ? "log_softmax" : "softmax"; }
  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor dx = Tensor::empty(dy.shape(), DType::F32, dy.device());
    dy.backend().softmax_backward(y_, dy, dx, log_);
    return {dx};
  }
  // Softmax's Jacobian diag(y) - y y^T is symmetric, so its backward formula is also its
  // forward-mode rule, applied direction by direction. Log-softmax's (I - 1 y^T) is not, and
  // has no forward rule here.
  bool has_jvp() const override { return !log_; }
  Tensor jvp(int64_t K, const std::vector<Tensor>& t) override {
    if (log_) return Node::jvp(K, t);
    Tensor out = Tensor::empty(t[0].shape(), DType::F32, t[0].device());
    for (int64_t k = 0; k < K; ++k) {
      Tensor out_k = direction(out, k, y_.shape());
      y_.backend().softmax_backward(y_, direction(t[0], k, y_.shape()), out_k, false);
    }
    return out;
  }

 private:
  Tensor y_;
  bool log_;
};

class SoftmaxCrossEntropyNode final : public Node {
 public:
  SoftmaxCrossEntropyNode(const Tensor& logits, const Tensor& labels, const Tensor& probs)
      : Node({logits, labels}), probs_(probs) {}
  const char* name() const override { return "sparse_softmax_cross_entropy"; }
  std::vector<Tensor> backward(const Tensor& dloss) override {
    Tensor dlogits = Tensor::empty(probs_.shape(), DType::F32, dloss.device());
    dloss.backend().softmax_cross_entropy_backward(probs_, inputs()[1], dloss, dlogits);
    return {dlogits, Tensor()};
  }

 private:
  Tensor probs_;
};

// An elementwise loss of (x, target) whose forward and backward are one backend op each:
// binary cross-entropy on probabilities, and the same fused with the sigmoid on logits.
using LossForward = void (Backend::*)(const Tensor&, const Tensor&, Tensor&);
using LossBackward = void (Backend::*)(const Tensor&, const Tensor&, const Tensor&, Tensor&);

class ElementwiseLossNode final : public Node {
 public:
  ElementwiseLossNode(const char* op_name, LossBackward backward_op, const Tensor& x,
                      const Tensor& target)
      : Node({x, target}), name_(op_name), backward_(backward_op) {}
  const char* name() const override { return name_; }
  std::vector<Tensor> backward(const Tensor& dloss) override {
    Tensor dx = Tensor::empty(dloss.shape(), DType::F32, dloss.device());
    (dloss.backend().*backward_)(inputs()[0], inputs()[1], dloss, dx);
    return {dx, Tensor()};  // targets are data, not parameters
  }

 private:
  const char* name_;
  LossBackward backward_;
};

Tensor elementwise_loss(const char* name, const char* x_name, LossForward forward,
                        LossBackward backward, const Tensor& x, const Tensor& target) {
  detail::check_defined_float(name, x, x_name);
  detail::check_defined_float(name, target, "target");
  detail::check_same_device(name, x, target);
  detail::check_same_shape(name, x, target);
  Tensor loss = Tensor::empty(x.shape(), DType::F32, x.device());
  (x.backend().*forward)(x, target, loss);
  return record(loss, std::make_shared<ElementwiseLossNode>(name, backward, x, target));
}

Tensor softmax_impl(const Tensor& x, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  detail::check_defined_float(name, x, "x");
  detail::check_ndim(name, x, 2, "x");
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  x.backend().softmax_forward(x, y, log);
  return record(y, std::make_shared<SoftmaxNode>(x, y, log));
}

}  // namespace

Tensor softmax(const Tensor& x) { return softmax_impl(x, false); }
Tensor log_softmax(const Tensor& x) { return softmax_impl(x, true); }

Tensor sparse_softmax_cross_entropy(const Tensor& logits, const Tensor& labels) {
  const char* name = "sparse_softmax_cross_entropy";
  detail::check_defined_float(name, logits, "logits");
  detail::check_ndim(name, logits, 2, "logits");
  ENGINE_CHECK(labels.defined() && labels.dtype() == DType::I32, name,
               ": labels must be an int32 tensor");
  detail::check_ndim(name, labels, 1, "labels");
  detail::check_same_device(name, logits, labels);
  ENGINE_CHECK(labels.dim(0) == logits.dim(0), name, ": ", labels.dim(0), " labels for ",
               logits.dim(0), " rows of logits");
  Tensor probs = Tensor::empty(logits.shape(), DType::F32, logits.device());
  Tensor loss = Tensor::empty({logits.dim(0)}, DType::F32, logits.device());
  logits.backend().softmax_cross_entropy_forward(logits, labels, probs, loss);
  return record(loss, std::make_shared<SoftmaxCrossEntropyNode>(logits, labels, probs));
}

Tensor binary_cross_entropy(const Tensor& p, const Tensor& target) {
  return elementwise_loss("binary_cross_entropy", "p", &Backend::binary_cross_entropy_forward,
                          &Backend::binary_cross_entropy_backward, p, target);
}

Tensor sigmoid_binary_cross_entropy(const Tensor& logits, const Tensor& target) {
  return elementwise_loss("sigmoid_binary_cross_entropy", "logits",
                          &Backend::sigmoid_cross_entropy_forward,
                          &Backend::sigmoid_cross_entropy_backward, logits, target);
}

}  // namespace engine
