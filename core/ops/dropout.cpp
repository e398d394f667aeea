// dropout: its dispatch points, cost and backward (core/ops/dropout.h).
#include "core/ops/dropout.h"

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {
namespace {

// Keeps the step counter's handle, not its value: backward runs in the same training step,
// before the counter moves, and reads the same number on the device.
class DropoutNode final : public Node {
 public:
  DropoutNode(const Tensor& x, float rate, const DropoutStream& stream)
      : Node({x}), rate_(rate), stream_(stream) {}
  const char* name() const override { return "dropout"; }
  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor dx = Tensor::empty(dy.shape(), DType::F32, dy.device());
    raw::dropout_backward(dy, dx, rate_, stream_.seed, stream_.step, stream_.first_element);
    return {dx};
  }

 private:
  float rate_;
  DropoutStream stream_;
};

}  // namespace

Tensor dropout(const Tensor& x, float rate, bool training, const DropoutStream& stream) {
  detail::check_defined_float("dropout", x, "x");
  ENGINE_CHECK(rate >= 0.0f && rate < 1.0f, "dropout: rate must be in [0, 1), got ", rate);
  if (!training || rate == 0.0f) return x;
  ENGINE_CHECK(stream.step.defined() && stream.step.dtype() == DType::I32 &&
                   stream.step.numel() == 1,
               "dropout: the step counter must be an int32 scalar");
  detail::check_same_device("dropout", x, stream.step);
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  raw::dropout_forward(x, y, rate, stream.seed, stream.step, stream.first_element);
  return record(y, std::make_shared<DropoutNode>(x, rate, stream));
}

namespace raw {

void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed, const Tensor& step,
                     uint64_t first) {
  dispatch(y, [&] { return OpCall{"dropout_forward", dims(x), elementwise_cost(x.numel(), 2.0, 2)}; },
           [&] { cpu::dropout_forward(x, y, rate, seed, step, first); },
           [&] { ENGINE_CUDA(cuda::dropout_forward(x, y, rate, seed, step, first)); });
}

void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed,
                      const Tensor& step, uint64_t first) {
  dispatch(dx, [&] { return OpCall{"dropout_backward", dims(dy), elementwise_cost(dy.numel(), 2.0, 2)}; },
           [&] { cpu::dropout_backward(dy, dx, rate, seed, step, first); },
           [&] { ENGINE_CUDA(cuda::dropout_backward(dy, dx, rate, seed, step, first)); });
}

}  // namespace raw
}  // namespace engine
