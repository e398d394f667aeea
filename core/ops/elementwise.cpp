// add, sub, mul and scale: their dispatch points, costs and rules (core/ops/elementwise.h).
#include "core/ops/elementwise.h"

#include "core/autograd.h"
#include "core/batched_rules.h"
#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {
namespace {

Tensor empty_like(const Tensor& x) { return Tensor::empty(x.shape(), DType::F32, x.device()); }

Tensor scaled(const Tensor& x, float factor) {
  Tensor y = empty_like(x);
  raw::axpby(factor, x, 0.0f, y);
  return y;
}

class BinaryNode final : public Node {
 public:
  BinaryNode(BinaryOp op, const Tensor& a, const Tensor& b) : Node({a, b}), op_(op) {}
  const char* name() const override {
    return op_ == BinaryOp::Add ? "add" : op_ == BinaryOp::Sub ? "sub" : "mul";
  }
  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor da, db;
    switch (op_) {
      case BinaryOp::Add:
        return {dy, dy};
      case BinaryOp::Sub:
        return {dy, needs_input_grad(1) ? scaled(dy, -1.0f) : Tensor()};
      case BinaryOp::Mul:
        if (needs_input_grad(0)) {
          da = empty_like(dy);
          raw::binary(BinaryOp::Mul, dy, inputs()[1], da);
        }
        if (needs_input_grad(1)) {
          db = empty_like(dy);
          raw::binary(BinaryOp::Mul, dy, inputs()[0], db);
        }
        break;
    }
    return {da, db};
  }

  std::vector<Tensor> vjp(int64_t, const Tensor& dy, const std::vector<bool>& wanted) override {
    Tensor da, db;
    switch (op_) {
      case BinaryOp::Add:
        return {wanted[0] ? dy : Tensor(), wanted[1] ? dy : Tensor()};
      case BinaryOp::Sub:
        return {wanted[0] ? dy : Tensor(), wanted[1] ? scaled(dy, -1.0f) : Tensor()};
      case BinaryOp::Mul:  // each factor's cotangent is dy times the other factor
        if (wanted[0]) da = detail::elementwise_rule(Activation::None, inputs()[1], dy);
        if (wanted[1]) db = detail::elementwise_rule(Activation::None, inputs()[0], dy);
        break;
    }
    return {da, db};
  }

  bool has_jvp() const override { return true; }
  Tensor jvp(int64_t K, const std::vector<Tensor>& t) override {
    const Tensor& ta = t[0];
    const Tensor& tb = t[1];
    if (!ta.defined() && !tb.defined()) {
      return Tensor::zeros(stacked_shape(K, output_shape()), DType::F32, inputs()[0].device());
    }
    Tensor first, second;  // the terms of d(a op b) from da and from db
    switch (op_) {
      case BinaryOp::Add:
        first = ta, second = tb;
        break;
      case BinaryOp::Sub:
        first = ta;
        if (tb.defined()) second = scaled(tb, -1.0f);
        break;
      case BinaryOp::Mul:  // d(ab) = da b + a db
        if (ta.defined()) first = detail::elementwise_rule(Activation::None, inputs()[1], ta);
        if (tb.defined()) second = detail::elementwise_rule(Activation::None, inputs()[0], tb);
        break;
    }
    if (!first.defined()) return second;
    if (!second.defined()) return first;
    return detail::stacked_binary(BinaryOp::Add, first, second);
  }

 private:
  BinaryOp op_;
};

class ScaleNode final : public Node {
 public:
  ScaleNode(const Tensor& x, float factor) : Node({x}), factor_(factor) {}
  const char* name() const override { return "scale"; }
  std::vector<Tensor> backward(const Tensor& dy) override { return {scaled(dy, factor_)}; }
  std::vector<Tensor> vjp(int64_t, const Tensor& dy, const std::vector<bool>&) override {
    return {scaled(dy, factor_)};
  }
  bool has_jvp() const override { return true; }
  Tensor jvp(int64_t, const std::vector<Tensor>& t) override { return scaled(t[0], factor_); }

 private:
  float factor_;
};

Tensor binary_op(BinaryOp op, const char* name, const Tensor& a, const Tensor& b) {
  detail::check_defined_float(name, a, "a");
  detail::check_defined_float(name, b, "b");
  detail::check_same_device(name, a, b);
  detail::check_same_shape(name, a, b);
  Tensor y = empty_like(a);
  raw::binary(op, a, b, y);
  return record(y, std::make_shared<BinaryNode>(op, a, b));
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Add, "add", a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Sub, "sub", a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Mul, "mul", a, b); }

Tensor scale(const Tensor& x, float factor) {
  detail::check_defined_float("scale", x, "x");
  Tensor y = scaled(x, factor);
  return record(y, std::make_shared<ScaleNode>(x, factor));
}

namespace raw {

void fill(Tensor& y, float value) {
  dispatch(y, [&] { return OpCall{"fill", dims(y), {0.0, tensor_bytes({&y})}}; },
           [&] { cpu::fill(y, value); }, [&] { ENGINE_CUDA(cuda::fill(y, value)); });
}

void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) {
  dispatch(y, [&] { return OpCall{"binary", dims(y), elementwise_cost(y.numel(), 1.0, 3)}; },
           [&] { cpu::binary(op, a, b, y); }, [&] { ENGINE_CUDA(cuda::binary(op, a, b, y)); });
}

void axpby(float alpha, const Tensor& x, float beta, Tensor& y) {
  dispatch(y, [&] { return OpCall{"axpby", dims(y), elementwise_cost(y.numel(), 3.0, 3)}; },
           [&] { cpu::axpby(alpha, x, beta, y); },
           [&] { ENGINE_CUDA(cuda::axpby(alpha, x, beta, y)); });
}

}  // namespace raw
}  // namespace engine
