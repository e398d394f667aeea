// Shape changes, reductions, dropout and batch gathering.
#include "core/autograd.h"
#include "core/op_checks.h"
#include "core/ops.h"

namespace engine {
namespace {

class ReshapeNode final : public Node {
 public:
  explicit ReshapeNode(const Tensor& x) : Node({x}) {}
  const char* name() const override { return "reshape"; }
  std::vector<Tensor> backward(const Tensor& dy) override {
    return {dy.view(inputs()[0].shape())};
  }
};

class SumNode final : public Node {
 public:
  SumNode(const Tensor& x, float factor) : Node({x}), factor_(factor) {}
  const char* name() const override { return factor_ == 1.0f ? "sum" : "mean"; }
  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor dx = Tensor::empty(inputs()[0].shape(), DType::F32, dy.device());
    dy.backend().broadcast_scalar(dy, factor_, dx);
    return {dx};
  }

 private:
  float factor_;
};

// Keeps the step counter's handle, not its value: backward runs in the same training step,
// before the counter moves, and reads the same number on the device.
class DropoutNode final : public Node {
 public:
  DropoutNode(const Tensor& x, float rate, const DropoutStream& stream)
      : Node({x}), rate_(rate), stream_(stream) {}
  const char* name() const override { return "dropout"; }
  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor dx = Tensor::empty(dy.shape(), DType::F32, dy.device());
    dy.backend().dropout_backward(dy, dx, rate_, stream_.seed, stream_.step);
    return {dx};
  }

 private:
  float rate_;
  DropoutStream stream_;
};

Tensor reduce(const Tensor& x, float factor, const char* name) {
  detail::check_defined_float(name, x, "x");
  Tensor y = Tensor::empty({}, DType::F32, x.device());
  x.backend().sum(x, y, factor);
  return record(y, std::make_shared<SumNode>(x, factor));
}

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  ENGINE_CHECK(x.defined(), "reshape: x is undefined");
  Tensor y = x.view(shape);
  return record(y, std::make_shared<ReshapeNode>(x));
}

Tensor flatten(const Tensor& x) {
  ENGINE_CHECK(x.defined() && x.ndim() >= 1, "flatten: needs a tensor with a batch dimension");
  const int64_t rows = x.dim(0);
  return reshape(x, {rows, rows == 0 ? 0 : x.numel() / rows});
}

Tensor sum(const Tensor& x) { return reduce(x, 1.0f, "sum"); }

Tensor mean(const Tensor& x) {
  ENGINE_CHECK(x.defined() && x.numel() > 0, "mean: of an empty tensor");
  return reduce(x, 1.0f / static_cast<float>(x.numel()), "mean");
}

Tensor dropout(const Tensor& x, float rate, bool training, const DropoutStream& stream) {
  detail::check_defined_float("dropout", x, "x");
  ENGINE_CHECK(rate >= 0.0f && rate < 1.0f, "dropout: rate must be in [0, 1), got ", rate);
  if (!training || rate == 0.0f) return x;
  ENGINE_CHECK(stream.step.defined() && stream.step.dtype() == DType::I32 &&
                   stream.step.numel() == 1,
               "dropout: the step counter must be an int32 scalar");
  detail::check_same_device("dropout", x, stream.step);
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  x.backend().dropout_forward(x, y, rate, stream.seed, stream.step);
  return record(y, std::make_shared<DropoutNode>(x, rate, stream));
}

Tensor gather_rows(const Tensor& x, const Tensor& index) {
  ENGINE_CHECK(x.defined() && x.ndim() >= 1, "gather_rows: x needs a row dimension");
  ENGINE_CHECK(index.defined() && index.dtype() == DType::I32 && index.ndim() == 1,
               "gather_rows: index must be a 1-D int32 tensor");
  detail::check_same_device("gather_rows", x, index);
  Shape shape = x.shape();
  shape[0] = index.dim(0);
  Tensor y = Tensor::empty(shape, x.dtype(), x.device());
  x.backend().gather_rows(x, index, y);
  return y;
}

}  // namespace engine
