// matmul and bias + activation: the two halves of a Dense layer.
#include "core/autograd.h"
#include "core/op_checks.h"
#include "core/ops.h"

namespace engine {
namespace {

// C = A' B' with A' = op(A), B' = op(B). The logical gradients are dA' = dC B'^T and
// dB' = A'^T dC; where an operand is stored transposed its gradient is the transpose of the
// logical one, which is again a single matmul with other transpose flags (no copies).
class MatmulNode final : public Node {
 public:
  MatmulNode(const Tensor& a, const Tensor& b, bool ta, bool tb)
      : Node({a, b}), transpose_a_(ta), transpose_b_(tb) {}
  const char* name() const override { return "matmul"; }

  std::vector<Tensor> backward(const Tensor& dc) override {
    const Tensor& a = inputs()[0];
    const Tensor& b = inputs()[1];
    Tensor da, db;
    if (needs_input_grad(0)) {
      // stored A (M,K): dA = dC B^T   (with op(B) = B or B^T)
      // stored A^T (K,M): dA = B dC^T (i.e. (dC B^T)^T)
      da = transpose_a_ ? matmul_raw(b, transpose_b_, dc, true, a.shape(), gradient_destination(0))
                        : matmul_raw(dc, false, b, !transpose_b_, a.shape(), gradient_destination(0));
    }
    if (needs_input_grad(1)) {
      // stored B (K,N): dB = A^T dC ; stored B^T (N,K): dB = dC^T A
      db = transpose_b_ ? matmul_raw(dc, true, a, transpose_a_, b.shape(), gradient_destination(1))
                        : matmul_raw(a, !transpose_a_, dc, false, b.shape(), gradient_destination(1));
    }
    return {da, db};
  }

 private:
  // Into `out` when given (a parameter's gradient buffer), else into a new tensor.
  static Tensor matmul_raw(const Tensor& x, bool tx, const Tensor& y, bool ty, const Shape& shape,
                           Tensor out) {
    if (!out.defined()) out = Tensor::empty(shape, DType::F32, x.device());
    x.backend().matmul(x, tx, y, ty, out, 1.0f, 0.0f);
    return out;
  }
  bool transpose_a_, transpose_b_;
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
      if (db.defined()) dy.backend().sum_rows(dy, db);
      return {needs_input_grad(0) ? dy : Tensor(), db};
    }
    Tensor dx = Tensor::empty(dy.shape(), DType::F32, dy.device());
    dy.backend().bias_activation_backward(act_, y_, dy, dx, db);
    return {needs_input_grad(0) ? dx : Tensor(), db};
  }

 private:
  Activation act_;
  Tensor y_;
};

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  detail::check_defined_float("matmul", a, "a");
  detail::check_defined_float("matmul", b, "b");
  detail::check_same_device("matmul", a, b);
  detail::check_ndim("matmul", a, 2, "a");
  detail::check_ndim("matmul", b, 2, "b");
  const int64_t m = transpose_a ? a.dim(1) : a.dim(0);
  const int64_t k = transpose_a ? a.dim(0) : a.dim(1);
  const int64_t k2 = transpose_b ? b.dim(1) : b.dim(0);
  const int64_t n = transpose_b ? b.dim(0) : b.dim(1);
  ENGINE_CHECK(k == k2, "matmul: inner dimensions differ: ", to_string(a.shape()),
               transpose_a ? "^T" : "", " @ ", to_string(b.shape()), transpose_b ? "^T" : "");
  Tensor c = Tensor::empty({m, n}, DType::F32, a.device());
  a.backend().matmul(a, transpose_a, b, transpose_b, c, 1.0f, 0.0f);
  return record(c, std::make_shared<MatmulNode>(a, b, transpose_a, transpose_b));
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
  x.backend().bias_activation_forward(act, x, bias, y);
  return record(y, std::make_shared<BiasActivationNode>(x, bias, act, y));
}

Tensor add_bias(const Tensor& x, const Tensor& bias) {
  return bias_activation(x, bias, Activation::None);
}

}  // namespace engine
