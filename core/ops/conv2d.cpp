// conv2d, NHWC (core/conv_geometry.h): its dispatch points, cost and reverse-mode rules
// (core/ops/conv2d.h). No forward-mode rule (Node's default jvp says so by name); reverse mode
// is what training needs.
#include "core/ops/conv2d.h"

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/op_checks.h"

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
    Tensor dx, dw;
    if (needs_input_grad(0)) {  // not for a network's first layer, whose x is data
      dx = Tensor::empty(x.shape(), DType::F32, dy.device());
      raw::conv2d_backward_data(g_, dy, w, dx);
    }
    if (needs_input_grad(1)) {
      dw = gradient_destination(1);
      if (!dw.defined()) dw = Tensor::empty(w.shape(), DType::F32, dy.device());
      raw::conv2d_backward_filter(g_, x, dy, dw);
    }
    return {dx, dw};
  }

  // K directions, one call per direction and input, each written into its slot of the
  // stacked result: never into a parameter's gradient buffer (Node::vjp's contract).
  std::vector<Tensor> vjp(int64_t K, const Tensor& dy, const std::vector<bool>& wanted) override {
    const Tensor& x = inputs()[0];
    const Tensor& w = inputs()[1];
    Tensor dx, dw;
    if (wanted[0]) dx = Tensor::empty(stacked_shape(K, x.shape()), DType::F32, dy.device());
    if (wanted[1]) dw = Tensor::empty(stacked_shape(K, w.shape()), DType::F32, dy.device());
    for (int64_t k = 0; k < K; ++k) {
      const Tensor dy_k = direction(dy, k, output_shape());
      if (dx.defined()) {
        Tensor slot = direction(dx, k, x.shape());
        raw::conv2d_backward_data(g_, dy_k, w, slot);
      }
      if (dw.defined()) {
        Tensor slot = direction(dw, k, w.shape());
        raw::conv2d_backward_filter(g_, x, dy_k, slot);
      }
    }
    return {dx, dw};
  }

 private:
  Conv2dGeometry g_;
};

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& w, int64_t stride, Padding padding) {
  detail::check_defined_float("conv2d", x, "x");
  detail::check_defined_float("conv2d", w, "filters");
  detail::check_same_device("conv2d", x, w);
  const Conv2dGeometry g = conv2d_geometry(x.shape(), w.shape(), stride, stride, padding);
  Tensor y = Tensor::empty(g.y_shape(), DType::F32, x.device());
  raw::conv2d_forward(g, x, w, y);
  return record(y, std::make_shared<Conv2dNode>(x, w, g));
}

namespace raw {

void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y) {
  dispatch(y, [&] { return OpCall{"conv2d_forward", conv_shape(g), conv2d_cost(g)}; },
           [&] { cpu::conv2d_forward(g, x, w, y); },
           [&] { ENGINE_CUDA(cuda::conv2d_forward(g, x, w, y)); },
           [&] { ENGINE_CUDA(vendor::conv2d_forward(g, x, w, y)); });
}

void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w, Tensor& dx) {
  dispatch(dx, [&] { return OpCall{"conv2d_backward_data", conv_shape(g), conv2d_cost(g)}; },
           [&] { cpu::conv2d_backward_data(g, dy, w, dx); },
           [&] { ENGINE_CUDA(cuda::conv2d_backward_data(g, dy, w, dx)); },
           [&] { ENGINE_CUDA(vendor::conv2d_backward_data(g, dy, w, dx)); });
}

void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw) {
  dispatch(dw, [&] { return OpCall{"conv2d_backward_filter", conv_shape(g), conv2d_cost(g)}; },
           [&] { cpu::conv2d_backward_filter(g, x, dy, dw); },
           [&] { ENGINE_CUDA(cuda::conv2d_backward_filter(g, x, dy, dw)); },
           [&] { ENGINE_CUDA(vendor::conv2d_backward_filter(g, x, dy, dw)); });
}

}  // namespace raw
}  // namespace engine
