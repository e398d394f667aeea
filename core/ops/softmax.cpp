// Row-wise softmax and log-softmax, and sparse categorical cross-entropy built on softmax:
// their dispatch points, costs and rules (core/ops/softmax.h).
#include "core/ops/softmax.h"

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {
namespace {

class SoftmaxNode final : public Node {
 public:
  SoftmaxNode(const Tensor& x, const Tensor& y, bool log) : Node({x}), y_(y.detach()), log_(log) {}
  const char* name() const override { return log_ ? "log_softmax" : "softmax"; }
  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor dx = Tensor::empty(dy.shape(), DType::F32, dy.device());
    raw::softmax_backward(y_, dy, dx, log_);
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
      raw::softmax_backward(y_, direction(t[0], k, y_.shape()), out_k, false);
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
    raw::softmax_cross_entropy_backward(probs_, inputs()[1], dloss, dlogits);
    return {dlogits, Tensor()};
  }

 private:
  Tensor probs_;
};

Tensor softmax_impl(const Tensor& x, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  detail::check_defined_float(name, x, "x");
  detail::check_ndim(name, x, 2, "x");
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  raw::softmax_forward(x, y, log);
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
  raw::softmax_cross_entropy_forward(logits, labels, probs, loss);
  return record(loss, std::make_shared<SoftmaxCrossEntropyNode>(logits, labels, probs));
}

namespace raw {

void softmax_forward(const Tensor& x, Tensor& y, bool log) {
  dispatch(y, [&] { return OpCall{"softmax_forward", dims(x), elementwise_cost(y.numel(), 4.0, 2)}; },
           [&] { cpu::softmax_forward(x, y, log); },
           [&] { ENGINE_CUDA(cuda::softmax_forward(x, y, log)); });
}

void softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log) {
  dispatch(dx, [&] { return OpCall{"softmax_backward", dims(y), elementwise_cost(y.numel(), 3.0, 3)}; },
           [&] { cpu::softmax_backward(y, dy, dx, log); },
           [&] { ENGINE_CUDA(cuda::softmax_backward(y, dy, dx, log)); });
}

void softmax_cross_entropy_forward(const Tensor& logits, const Tensor& labels, Tensor& probs,
                                   Tensor& loss) {
  dispatch(loss,
           [&] {
             return OpCall{"softmax_cross_entropy_forward", dims(logits),
                           mixed_cost(logits, 4.0, {&logits, &labels, &probs, &loss})};
           },
           [&] { cpu::softmax_cross_entropy_forward(logits, labels, probs, loss); },
           [&] { ENGINE_CUDA(cuda::softmax_cross_entropy_forward(logits, labels, probs, loss)); });
}

void softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, const Tensor& dloss,
                                    Tensor& dlogits) {
  dispatch(dlogits,
           [&] {
             return OpCall{"softmax_cross_entropy_backward", dims(probs),
                           mixed_cost(probs, 2.0, {&probs, &labels, &dloss, &dlogits})};
           },
           [&] { cpu::softmax_cross_entropy_backward(probs, labels, dloss, dlogits); },
           [&] { ENGINE_CUDA(cuda::softmax_cross_entropy_backward(probs, labels, dloss, dlogits)); });
}

}  // namespace raw
}  // namespace engine
