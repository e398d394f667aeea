// Mean squared and mean absolute error, per sample: the dispatch points, costs and rules
// (core/ops/regression_loss.h).
#include "core/ops/regression_loss.h"

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {
namespace {

// A per-sample loss of (pred, target) whose forward and backward are one op each.
using LossForward = void (*)(const Tensor&, const Tensor&, Tensor&);
using LossBackward = void (*)(const Tensor&, const Tensor&, const Tensor&, Tensor&);

class RegressionLossNode final : public Node {
 public:
  RegressionLossNode(const char* op_name, LossBackward backward_op, const Tensor& pred,
                     const Tensor& target)
      : Node({pred, target}), name_(op_name), backward_(backward_op) {}
  const char* name() const override { return name_; }
  std::vector<Tensor> backward(const Tensor& dloss) override {
    const Tensor& pred = inputs()[0];
    Tensor dpred = Tensor::empty(pred.shape(), DType::F32, dloss.device());
    backward_(pred, inputs()[1], dloss, dpred);
    return {dpred, Tensor()};  // targets are data, not parameters
  }

 private:
  const char* name_;
  LossBackward backward_;
};

Tensor regression_loss(const char* name, LossForward forward, LossBackward backward,
                       const Tensor& pred, const Tensor& target) {
  detail::check_defined_float(name, pred, "pred");
  detail::check_defined_float(name, target, "target");
  detail::check_same_device(name, pred, target);
  detail::check_same_shape(name, pred, target);
  ENGINE_CHECK(pred.ndim() == 1 || pred.ndim() == 2, name,
               ": pred must be (N, F), or (N,) for a single output, got shape ",
               to_string(pred.shape()));
  ENGINE_CHECK(pred.ndim() == 1 || pred.dim(1) >= 1, name,
               ": pred has no outputs per sample, shape ", to_string(pred.shape()));
  Tensor loss = Tensor::empty({pred.dim(0)}, DType::F32, pred.device());
  forward(pred, target, loss);
  return record(loss, std::make_shared<RegressionLossNode>(name, backward, pred, target));
}

}  // namespace

Tensor mean_squared_error(const Tensor& pred, const Tensor& target) {
  return regression_loss("mean_squared_error", &raw::mean_squared_error_forward,
                         &raw::mean_squared_error_backward, pred, target);
}

Tensor mean_absolute_error(const Tensor& pred, const Tensor& target) {
  return regression_loss("mean_absolute_error", &raw::mean_absolute_error_forward,
                         &raw::mean_absolute_error_backward, pred, target);
}

namespace raw {

// Costs per element of pred: the forward subtracts, squares (or takes |.|) and adds; the
// backward subtracts and multiplies twice. Bytes: every operand once, the (N,) ones included.
void mean_squared_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss) {
  dispatch(loss,
           [&] {
             return OpCall{"mean_squared_error_forward", dims(pred),
                           mixed_cost(pred, 3.0, {&pred, &target, &loss})};
           },
           [&] { cpu::mean_squared_error_forward(pred, target, loss); },
           [&] { ENGINE_CUDA(cuda::mean_squared_error_forward(pred, target, loss)); });
}

void mean_squared_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                 Tensor& dpred) {
  dispatch(dpred,
           [&] {
             return OpCall{"mean_squared_error_backward", dims(pred),
                           mixed_cost(pred, 3.0, {&pred, &target, &dloss, &dpred})};
           },
           [&] { cpu::mean_squared_error_backward(pred, target, dloss, dpred); },
           [&] { ENGINE_CUDA(cuda::mean_squared_error_backward(pred, target, dloss, dpred)); });
}

void mean_absolute_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss) {
  dispatch(loss,
           [&] {
             return OpCall{"mean_absolute_error_forward", dims(pred),
                           mixed_cost(pred, 3.0, {&pred, &target, &loss})};
           },
           [&] { cpu::mean_absolute_error_forward(pred, target, loss); },
           [&] { ENGINE_CUDA(cuda::mean_absolute_error_forward(pred, target, loss)); });
}

void mean_absolute_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                  Tensor& dpred) {
  dispatch(dpred,
           [&] {
             return OpCall{"mean_absolute_error_backward", dims(pred),
                           mixed_cost(pred, 3.0, {&pred, &target, &dloss, &dpred})};
           },
           [&] { cpu::mean_absolute_error_backward(pred, target, dloss, dpred); },
           [&] { ENGINE_CUDA(cuda::mean_absolute_error_backward(pred, target, dloss, dpred)); });
}

}  // namespace raw
}  // namespace engine
