// The activations relu, tanh, sigmoid and GELU, the first three also fused with a bias: their
// dispatch points, costs and rules (core/ops/activation.h).
#include "core/ops/activation.h"

#include "core/autograd.h"
#include "core/batched_rules.h"
#include "core/dispatch.h"
#include "core/op_checks.h"
#include "core/ops/softmax.h"

namespace engine {

const char* activation_name(Activation act) {
  switch (act) {
    case Activation::None: return "none";
    case Activation::Relu: return "relu";
    case Activation::Tanh: return "tanh";
    case Activation::Sigmoid: return "sigmoid";
    case Activation::Softmax: return "softmax";
  }
  return "?";
}

namespace {

class ActivationNode final : public Node {
 public:
  // Keeps the output (detached, so the node does not own its own output's history).
  ActivationNode(Activation act, const Tensor& x, const Tensor& y)
      : Node({x}), act_(act), y_(y.detach()) {}
  const char* name() const override { return activation_name(act_); }
  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor dx = Tensor::empty(dy.shape(), DType::F32, dy.device());
    raw::activation_backward(act_, y_, dy, dx);
    return {dx};
  }
  // relu, tanh and sigmoid have diagonal Jacobians: one rule for both modes.
  std::vector<Tensor> vjp(int64_t, const Tensor& dy, const std::vector<bool>&) override {
    return {detail::elementwise_rule(act_, y_, dy)};
  }
  bool has_jvp() const override { return true; }
  Tensor jvp(int64_t, const std::vector<Tensor>& t) override {
    return detail::elementwise_rule(act_, y_, t[0]);
  }

 private:
  Activation act_;
  Tensor y_;
};

// Keeps the output y (detached) for the activation's derivative. Without an activation
// the gradient w.r.t. x is dy itself and only the bias needs a pass.
class BiasActivationNode final : public Node {
 public:
  BiasActivationNode(const Tensor& x, const Tensor& bias, Activation act, const Tensor& y)
      : Node({x, bias}), act_(act), y_(y.detach()) {}
  const char* name() const override { return act_ == Activation::None ? "add_bias" : "bias_activation"; }
  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor db;
    if (needs_input_grad(1)) {
      db = gradient_destination(1);
      if (!db.defined()) db = Tensor::empty(inputs()[1].shape(), DType::F32, dy.device());
    }
    if (act_ == Activation::None) {
      if (db.defined()) raw::sum_rows(dy, db);
      return {needs_input_grad(0) ? dy : Tensor(), db};
    }
    Tensor dx = Tensor::empty(dy.shape(), DType::F32, dy.device());
    raw::bias_activation_backward(act_, y_, dy, dx, db);
    return {needs_input_grad(0) ? dx : Tensor(), db};
  }

  // x (N, F), bias (F,): the bias' K cotangents are the column sums of each direction.
  std::vector<Tensor> vjp(int64_t K, const Tensor& dy, const std::vector<bool>& wanted) override {
    const Tensor dz = act_ == Activation::None ? dy : detail::elementwise_rule(act_, y_, dy);
    Tensor db;
    if (wanted[1]) {
      const Shape& bias_shape = inputs()[1].shape();
      db = Tensor::empty(stacked_shape(K, bias_shape), DType::F32, dy.device());
      for (int64_t k = 0; k < K; ++k) {
        Tensor out = direction(db, k, bias_shape);
        raw::sum_rows(direction(dz, k, y_.shape()), out);
      }
    }
    return {wanted[0] ? dz : Tensor(), db};
  }

  bool has_jvp() const override { return true; }
  // dy = act'(z) * (dx + dbias broadcast over the rows).
  Tensor jvp(int64_t K, const std::vector<Tensor>& t) override {
    const Shape& shape = y_.shape();
    Tensor dz = t[0];
    if (t[1].defined()) {  // a bias that itself depends on x: rare, one pass per direction
      dz = Tensor::empty(stacked_shape(K, shape), DType::F32, y_.device());
      const Tensor zero_rows = t[0].defined() ? Tensor() : Tensor::zeros(shape, DType::F32, y_.device());
      for (int64_t k = 0; k < K; ++k) {
        Tensor out = direction(dz, k, shape);
        raw::bias_activation_forward(
            Activation::None, t[0].defined() ? direction(t[0], k, shape) : zero_rows,
            direction(t[1], k, inputs()[1].shape()), out);
      }
    }
    return act_ == Activation::None ? dz : detail::elementwise_rule(act_, y_, dz);
  }

 private:
  Activation act_;
  Tensor y_;
};

Tensor pointwise_activation(Activation act, const Tensor& x) {
  detail::check_defined_float(activation_name(act), x, "x");
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  raw::activation_forward(act, x, y);
  return record(y, std::make_shared<ActivationNode>(act, x, y));
}

// Keeps its input: GELU's derivative is a function of x, not of y.
class GeluNode final : public Node {
 public:
  explicit GeluNode(const Tensor& x) : Node({x}) {}
  const char* name() const override { return "gelu"; }
  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor dx = Tensor::empty(dy.shape(), DType::F32, dy.device());
    raw::gelu_backward(inputs()[0], dy, dx);
    return {dx};
  }
};

}  // namespace

Tensor gelu(const Tensor& x) {
  detail::check_defined_float("gelu", x, "x");
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  raw::gelu_forward(x, y);
  return record(y, std::make_shared<GeluNode>(x));
}

Tensor relu(const Tensor& x) { return pointwise_activation(Activation::Relu, x); }
Tensor tanh(const Tensor& x) { return pointwise_activation(Activation::Tanh, x); }
Tensor sigmoid(const Tensor& x) { return pointwise_activation(Activation::Sigmoid, x); }

Tensor activation(const Tensor& x, Activation act) {
  switch (act) {
    case Activation::None: return x;
    case Activation::Relu: return relu(x);
    case Activation::Tanh: return tanh(x);
    case Activation::Sigmoid: return sigmoid(x);
    case Activation::Softmax: return softmax(x);
  }
  return x;
}

Tensor bias_activation(const Tensor& x, const Tensor& bias, Activation act) {
  const char* name = act == Activation::None ? "add_bias" : "bias_activation";
  ENGINE_CHECK(act != Activation::Softmax, name, ": softmax is not elementwise (use softmax())");
  detail::check_defined_float(name, x, "x");
  detail::check_defined_float(name, bias, "bias");
  detail::check_same_device(name, x, bias);
  detail::check_ndim(name, x, 2, "x");
  detail::check_ndim(name, bias, 1, "bias");
  ENGINE_CHECK(bias.dim(0) == x.dim(1), name, ": bias of shape ", to_string(bias.shape()),
               " does not match x of shape ", to_string(x.shape()));
  Tensor y = Tensor::empty(x.shape(), DType::F32, x.device());
  raw::bias_activation_forward(act, x, bias, y);
  return record(y, std::make_shared<BiasActivationNode>(x, bias, act, y));
}

Tensor add_bias(const Tensor& x, const Tensor& bias) {
  return bias_activation(x, bias, Activation::None);
}

namespace raw {

void bias_activation_forward(Activation act, const Tensor& x, const Tensor& bias, Tensor& y) {
  dispatch(y,
           [&] { return OpCall{"bias_activation_forward", dims(x), mixed_cost(y, 2.0, {&x, &bias, &y})}; },
           [&] { cpu::bias_activation_forward(act, x, bias, y); },
           [&] { ENGINE_CUDA(cuda::bias_activation_forward(act, x, bias, y)); });
}

void bias_activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx,
                              Tensor& dbias) {
  dispatch(dx,
           [&] {
             return OpCall{"bias_activation_backward", dims(y),
                           mixed_cost(y, 2.0, {&y, &dy, &dx, &dbias})};
           },
           [&] { cpu::bias_activation_backward(act, y, dy, dx, dbias); },
           [&] { ENGINE_CUDA(cuda::bias_activation_backward(act, y, dy, dx, dbias)); });
}

void sum_rows(const Tensor& dy, Tensor& db) {
  dispatch(db, [&] { return OpCall{"sum_rows", dims(dy), mixed_cost(dy, 1.0, {&dy, &db})}; },
           [&] { cpu::sum_rows(dy, db); }, [&] { ENGINE_CUDA(cuda::sum_rows(dy, db)); });
}

void activation_forward(Activation act, const Tensor& x, Tensor& y) {
  dispatch(y,
           [&] { return OpCall{"activation_forward", dims(x), elementwise_cost(y.numel(), 1.0, 2)}; },
           [&] { cpu::activation_forward(act, x, y); },
           [&] { ENGINE_CUDA(cuda::activation_forward(act, x, y)); });
}

void activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx) {
  dispatch(dx,
           [&] { return OpCall{"activation_backward", dims(y), elementwise_cost(y.numel(), 2.0, 3)}; },
           [&] { cpu::activation_backward(act, y, dy, dx); },
           [&] { ENGINE_CUDA(cuda::activation_backward(act, y, dy, dx)); });
}

// erf costs about 15 FLOPs in a polynomial; the backward adds an exp.
void gelu_forward(const Tensor& x, Tensor& y) {
  dispatch(y, [&] { return OpCall{"gelu_forward", dims(x), elementwise_cost(y.numel(), 20.0, 2)}; },
           [&] { cpu::gelu_forward(x, y); }, [&] { ENGINE_CUDA(cuda::gelu_forward(x, y)); });
}

void gelu_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
  dispatch(dx, [&] { return OpCall{"gelu_backward", dims(x), elementwise_cost(dx.numel(), 35.0, 3)}; },
           [&] { cpu::gelu_backward(x, dy, dx); },
           [&] { ENGINE_CUDA(cuda::gelu_backward(x, dy, dx)); });
}

}  // namespace raw
}  // namespace engine
