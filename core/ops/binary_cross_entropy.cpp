// Binary cross-entropy, on probabilities and fused with the sigmoid on logits: the dispatch
// points, costs and rules (core/ops/binary_cross_entropy.h).
#include "core/ops/binary_cross_entropy.h"

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {
namespace {

// An elementwise loss of (x, target) whose forward and backward are one op each: binary
// cross-entropy on probabilities, and the same fused with the sigmoid on logits.
using LossForward = void (*)(const Tensor&, const Tensor&, Tensor&);
using LossBackward = void (*)(const Tensor&, const Tensor&, const Tensor&, Tensor&);

class ElementwiseLossNode final : public Node {
 public:
  ElementwiseLossNode(const char* op_name, LossBackward backward_op, const Tensor& x,
                      const Tensor& target)
      : Node({x, target}), name_(op_name), backward_(backward_op) {}
  const char* name() const override { return name_; }
  std::vector<Tensor> backward(const Tensor& dloss) override {
    Tensor dx = Tensor::empty(dloss.shape(), DType::F32, dloss.device());
    backward_(inputs()[0], inputs()[1], dloss, dx);
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
  forward(x, target, loss);
  return record(loss, std::make_shared<ElementwiseLossNode>(name, backward, x, target));
}

}  // namespace

Tensor binary_cross_entropy(const Tensor& p, const Tensor& target) {
  return elementwise_loss("binary_cross_entropy", "p", &raw::binary_cross_entropy_forward,
                          &raw::binary_cross_entropy_backward, p, target);
}

Tensor sigmoid_binary_cross_entropy(const Tensor& logits, const Tensor& target) {
  return elementwise_loss("sigmoid_binary_cross_entropy", "logits",
                          &raw::sigmoid_cross_entropy_forward,
                          &raw::sigmoid_cross_entropy_backward, logits, target);
}

namespace raw {

void binary_cross_entropy_forward(const Tensor& p, const Tensor& target, Tensor& loss) {
  dispatch(loss,
           [&] { return OpCall{"binary_cross_entropy_forward", dims(p), elementwise_cost(p.numel(), 8.0, 3)}; },
           [&] { cpu::binary_cross_entropy_forward(p, target, loss); },
           [&] { ENGINE_CUDA(cuda::binary_cross_entropy_forward(p, target, loss)); });
}

void binary_cross_entropy_backward(const Tensor& p, const Tensor& target, const Tensor& dloss,
                                   Tensor& dp) {
  dispatch(dp,
           [&] { return OpCall{"binary_cross_entropy_backward", dims(p), elementwise_cost(p.numel(), 8.0, 4)}; },
           [&] { cpu::binary_cross_entropy_backward(p, target, dloss, dp); },
           [&] { ENGINE_CUDA(cuda::binary_cross_entropy_backward(p, target, dloss, dp)); });
}

void sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& target, Tensor& loss) {
  dispatch(loss,
           [&] {
             return OpCall{"sigmoid_cross_entropy_forward", dims(logits),
                           elementwise_cost(logits.numel(), 6.0, 3)};
           },
           [&] { cpu::sigmoid_cross_entropy_forward(logits, target, loss); },
           [&] { ENGINE_CUDA(cuda::sigmoid_cross_entropy_forward(logits, target, loss)); });
}

void sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& target,
                                    const Tensor& dloss, Tensor& dlogits) {
  dispatch(dlogits,
           [&] {
             return OpCall{"sigmoid_cross_entropy_backward", dims(logits),
                           elementwise_cost(logits.numel(), 5.0, 4)};
           },
           [&] { cpu::sigmoid_cross_entropy_backward(logits, target, dloss, dlogits); },
           [&] { ENGINE_CUDA(cuda::sigmoid_cross_entropy_backward(logits, target, dloss, dlogits)); });
}

}  // namespace raw
}  // namespace engine
