// conv2d and max_pool2d: the window ops of a convolutional network, NHWC (core/conv_geometry.h).
// Neither has a forward-mode rule (Node's default jvp says so by name); reverse mode is what
// training needs.
#include "core/autograd.h"
#include "core/op_checks.h"
#include "core/ops.h"

namespace engine {
namespace {

// y = x (*) w. dx is the transposed convolution of dy with w; dw correlates x with dy. The
// filter gradient goes straight into the parameter's gradient buffer when it may
// (gradient_destination), like a Dense kernel's.
class Conv2dNode final : public Node {
 public:
  Conv2dNode(const Tensor& x, const Tensor& w, const Conv2dGeometry& g) : Node({x, w}), g_(g) {}
  const char* name() const override { return "conv2d"; }

  std::vector<Tensor> backward(const Tensor& dy) override {
    const Tensor& x = inputs()[0];
    const Tensor& w = inputs()[1];
    Backend& be = dy.backend();
    Tensor dx, dw;
    if (needs_input_grad(0)) {  // not for a network's first layer, whose x is data
      dx = Tensor::empty(x.shape(), DType::F32, dy.device());
      be.conv2d_backward_data(g_, dy, w, dx);
    }
    if (needs_input_grad(1)) {
      dw = gradient_destination(1);
      if (!dw.defined()) dw = Tensor::empty(w.shape(), DType::F32, dy.device());
      be.conv2d_backward_filter(g_, x, dy, dw);
    }
    return {dx, dw};
  }

  // K directions, one backend call per direction and input, each written into its slot of the
  // stacked result: never into a parameter's gradient buffer (Node::vjp's contract).
  std::vector<Tensor> vjp(int64_t K, const Tensor& dy, const std::vector<bool>& wanted) override {
    const Tensor& x = inputs()[0];
    const Tensor& w = inputs()[1];
    Backend& be = dy.backend();
    Tensor dx, dw;
    if (wanted[0]) dx = Tensor::empty(stacked_shape(K, x.shape()), DType::F32, dy.device());
    if (wanted[1]) dw = Tensor::empty(stacked_shape(K, w.shape()), DType::F32, dy.device());
    for (int64_t k = 0; k < K; ++k) {
      const Tensor dy_k = direction(dy, k, output_shape());
      if (dx.defined()) {
        Tensor slot = direction(dx, k, x.shape());
        be.conv2d_backward_data(g_, dy_k, w, slot);
      }
      if (dw.defined()) {
        Tensor slot = direction(dw, k, w.shape());
        be.conv2d_backward_filter(g_, x, dy_k, slot);
      }
    }
    return {dx, dw};
  }

 private:
  Conv2dGeometry g_;
};

// Keeps the output y (detached): the backward finds each window's maximum by comparing x with it.
class MaxPool2dNode final : public Node {
 public:
  MaxPool2dNode(const Tensor& x, const Conv2dGeometry& g, const Tensor& y)
      : Node({x}), g_(g), y_(y.detach()) {}
  const char* name() const override { return "max_pool2d"; }

  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor dx = Tensor::empty(inputs()[0].shape(), DType::F32, dy.device());
    dy.backend().max_pool2d_backward(g_, inputs()[0], y_, dy, dx);
    return {dx};
  }

 private:
  Conv2dGeometry g_;
  Tensor y_;
};

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& w, int64_t stride, Padding padding) {
  detail::check_defined_float("conv2d", x, "x");
  detail::check_defined_float("conv2d", w, "filters");
  detail::check_same_device("conv2d", x, w);
  const Conv2dGeometry g = conv2d_geometry(x.shape(), w.shape(), stride, stride, padding);
  Tensor y = Tensor::empty(g.y_shape(), DType::F32, x.device());
  x.backend().conv2d_forward(g, x, w, y);
  return record(y, std::make_shared<Conv2dNode>(x, w, g));
}

Tensor max_pool2d(const Tensor& x, int64_t pool, int64_t stride, Padding padding) {
  detail::check_defined_float("max_pool2d", x, "x");
  const Conv2dGeometry g = pool2d_geometry(x.shape(), pool, pool, stride, stride, padding);
  Tensor y = Tensor::empty(g.y_shape(), DType::F32, x.device());
  x.backend().max_pool2d_forward(g, x, y);
  return record(y, std::make_shared<MaxPool2dNode>(x, g, y));
}

Tensor max_pool2d(const Tensor& x, int64_t pool) {
  return max_pool2d(x, pool, pool, Padding::Valid);
}

}  // namespace engine
