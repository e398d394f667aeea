// max_pool2d, NHWC (core/conv_geometry.h): its dispatch points, cost and reverse-mode rule
// (core/ops/pool.h). No forward-mode rule (Node's default jvp says so by name).
#include "core/ops/pool.h"

#include "core/autograd.h"
#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {
namespace {

// Keeps the output y (detached): the backward finds each window's maximum by comparing x with it.
class MaxPool2dNode final : public Node {
 public:
  MaxPool2dNode(const Tensor& x, const Conv2dGeometry& g, const Tensor& y)
      : Node({x}), g_(g), y_(y.detach()) {}
  const char* name() const override { return "max_pool2d"; }

  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor dx = Tensor::empty(inputs()[0].shape(), DType::F32, dy.device());
    raw::max_pool2d_backward(g_, inputs()[0], y_, dy, dx);
    return {dx};
  }

 private:
  Conv2dGeometry g_;
  Tensor y_;
};

}  // namespace

Tensor max_pool2d(const Tensor& x, int64_t pool, int64_t stride, Padding padding) {
  detail::check_defined_float("max_pool2d", x, "x");
  const Conv2dGeometry g = pool2d_geometry(x.shape(), pool, pool, stride, stride, padding);
  Tensor y = Tensor::empty(g.y_shape(), DType::F32, x.device());
  raw::max_pool2d_forward(g, x, y);
  return record(y, std::make_shared<MaxPool2dNode>(x, g, y));
}

Tensor max_pool2d(const Tensor& x, int64_t pool) {
  return max_pool2d(x, pool, pool, Padding::Valid);
}

namespace raw {

namespace {
// One comparison per window element of each output.
double window_flops(const Conv2dGeometry& g) {
  return static_cast<double>(numel(g.y_shape()) * g.kernel_h * g.kernel_w);
}
}  // namespace

void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y) {
  dispatch(y,
           [&] { return OpCall{"max_pool2d_forward", dims(x), {window_flops(g), tensor_bytes({&x, &y})}}; },
           [&] { cpu::max_pool2d_forward(g, x, y); },
           [&] { ENGINE_CUDA(cuda::max_pool2d_forward(g, x, y)); },
           [&] { ENGINE_CUDA(vendor::max_pool2d_forward(g, x, y)); });
}

void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                         const Tensor& dy, Tensor& dx) {
  dispatch(dx,
           [&] {
             return OpCall{"max_pool2d_backward", dims(x),
                           {window_flops(g), tensor_bytes({&x, &y, &dy, &dx})}};
           },
           [&] { cpu::max_pool2d_backward(g, x, y, dy, dx); },
           [&] { ENGINE_CUDA(cuda::max_pool2d_backward(g, x, y, dy, dx)); },
           [&] { ENGINE_CUDA(vendor::max_pool2d_backward(g, x, y, dy, dx)); });
}

}  // namespace raw
}  // namespace engine
