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
  std::vector<Tensor> vjp(int64_t K, const Tensor& dy, const std::vector<bool>&) override {
    return {dy.view(stacked_shape(K, inputs()[0].shape()))};
  }
  bool has_jvp() const override { return true; }
  Tensor jvp(int64_t K, const std::vector<Tensor>& t) override {
    return t[0].view(stacked_shape(K, output_shape()));
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
  // K directions: dx[k, :] = factor * dy[k], the outer product dy (K, 1) @ ones (1, n).
  std::vector<Tensor> vjp(int64_t K, const Tensor& dy, const std::vector<bool>&) override {
    const Shape& x_shape = inputs()[0].shape();
    const int64_t n = numel(x_shape);
    Tensor dx = Tensor::empty(stacked_shape(K, x_shape), DType::F32, dy.device());
    Tensor rows = dx.view({K, n});
    dy.backend().matmul(dy.view({K, 1}), false, Tensor::full({1, n}, 1.0f, dy.device()), false,
                        rows, factor_, 0.0f);
    return {dx};
  }
  bool has_jvp() const override { return true; }
  // dy[k] = factor * sum(dx[k, :]) = factor * (dx (K, n) @ ones (n, 1)).
  Tensor jvp(int64_t K, const std::vector<Tensor>& t) override {
    const int64_t n = inputs()[0].numel();
    Tensor dy = Tensor::empty({K}, DType::F32, t[0].device());
    Tensor column = dy.view({K, 1});
    t[0].backend().matmul(t[0].view({K, n}), false, Tensor::full({n, 1}, 1.0f, t[0].device()),
                          false, column, factor_, 0.0f);
    return dy;
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

namespace {
// The last element a walk visits must lie inside `t`.
void check_walk(const char* what, const Tensor& t, const std::array<int64_t, 3>& extent,
                const Walk3d& walk) {
  int64_t last = walk.offset;
  for (size_t d = 0; d < 3; ++d) {
    ENGINE_CHECK(walk.stride[d] >= 0, "strided_copy: negative stride in the ", what, " walk");
    last += (extent[d] - 1) * walk.stride[d];
  }
  ENGINE_CHECK(walk.offset >= 0 && last < t.numel(), "strided_copy: the ", what,
               " walk reaches element ", last, " of a tensor of ", t.numel());
}
}  // namespace

void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                  const Walk3d& from, const Walk3d& to) {
  ENGINE_CHECK(x.defined() && y.defined(), "strided_copy: undefined tensor");
  ENGINE_CHECK(x.dtype() == y.dtype(), "strided_copy: dtypes differ (", to_string(x.dtype()),
               " and ", to_string(y.dtype()), ")");
  ENGINE_CHECK(element_size(x.dtype()) == 4, "strided_copy: ", to_string(x.dtype()),
               " is not supported (the walks move 4-byte elements)");
  detail::check_same_device("strided_copy", x, y);
  ENGINE_CHECK(!x.same_storage(y), "strided_copy: source and destination share storage");
  for (int64_t e : extent) ENGINE_CHECK(e >= 0, "strided_copy: negative extent ", e);
  if (extent[0] == 0 || extent[1] == 0 || extent[2] == 0) return;
  check_walk("source", x, extent, from);
  check_walk("destination", y, extent, to);
  x.backend().strided_copy(x, y, extent, from, to);
}

}  // namespace engine
