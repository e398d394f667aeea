// sum and mean, and the count of correct predictions: their dispatch points, costs and
// rules (core/ops/reduce.h).
#include "core/ops/reduce.h"

#include "core/autograd.h"
#include "core/ops/matmul.h"
#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {
namespace {

class SumNode final : public Node {
 public:
  SumNode(const Tensor& x, float factor) : Node({x}), factor_(factor) {}
  const char* name() const override { return factor_ == 1.0f ? "sum" : "mean"; }
  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor dx = Tensor::empty(inputs()[0].shape(), DType::F32, dy.device());
    raw::broadcast_scalar(dy, factor_, dx);
    return {dx};
  }
  // K directions: dx[k, :] = factor * dy[k], the outer product dy (K, 1) @ ones (1, n).
  std::vector<Tensor> vjp(int64_t K, const Tensor& dy, const std::vector<bool>&) override {
    const Shape& x_shape = inputs()[0].shape();
    const int64_t n = numel(x_shape);
    Tensor dx = Tensor::empty(stacked_shape(K, x_shape), DType::F32, dy.device());
    Tensor rows = dx.view({K, n});
    raw::matmul(dy.view({K, 1}), false, Tensor::full({1, n}, 1.0f, dy.device()), false,
                        rows, factor_, 0.0f);
    return {dx};
  }
  bool has_jvp() const override { return true; }
  // dy[k] = factor * sum(dx[k, :]) = factor * (dx (K, n) @ ones (n, 1)).
  Tensor jvp(int64_t K, const std::vector<Tensor>& t) override {
    const int64_t n = inputs()[0].numel();
    Tensor dy = Tensor::empty({K}, DType::F32, t[0].device());
    Tensor column = dy.view({K, 1});
    raw::matmul(t[0].view({K, n}), false, Tensor::full({n, 1}, 1.0f, t[0].device()),
                          false, column, factor_, 0.0f);
    return dy;
  }

 private:
  float factor_;
};

Tensor reduce(const Tensor& x, float factor, const char* name) {
  detail::check_defined_float(name, x, "x");
  Tensor y = Tensor::empty({}, DType::F32, x.device());
  raw::sum(x, y, factor);
  return record(y, std::make_shared<SumNode>(x, factor));
}

}  // namespace

Tensor sum(const Tensor& x) { return reduce(x, 1.0f, "sum"); }

Tensor mean(const Tensor& x) {
  ENGINE_CHECK(x.defined() && x.numel() > 0, "mean: of an empty tensor");
  return reduce(x, 1.0f / static_cast<float>(x.numel()), "mean");
}

namespace raw {

void sum(const Tensor& x, Tensor& y, float scale, bool add_to_y) {
  dispatch(y, [&] { return OpCall{"sum", dims(x), mixed_cost(x, 1.0, {&x})}; },
           [&] { cpu::sum(x, y, scale, add_to_y); },
           [&] { ENGINE_CUDA(cuda::sum(x, y, scale, add_to_y)); });
}

void broadcast_scalar(const Tensor& s, float scale, Tensor& y) {
  dispatch(y, [&] { return OpCall{"broadcast_scalar", dims(y), mixed_cost(y, 1.0, {&y})}; },
           [&] { cpu::broadcast_scalar(s, scale, y); },
           [&] { ENGINE_CUDA(cuda::broadcast_scalar(s, scale, y)); });
}

void count_correct(const Tensor& logits, const Tensor& labels, Tensor& count) {
  dispatch(count,
           [&] { return OpCall{"count_correct", dims(logits), mixed_cost(logits, 1.0, {&logits})}; },
           [&] { cpu::count_correct(logits, labels, count); },
           [&] { ENGINE_CUDA(cuda::count_correct(logits, labels, count)); });
}

}  // namespace raw
}  // namespace engine
