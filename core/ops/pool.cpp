// max_pool2d, NHWC (core/conv_geometry.h): its dispatch points, cost and reverse-mode rule
// (core/ops/pool.h). No forward-mode rule (Node's default jvp says so by name).
#include "core/ops/pool.h"

#include "core/autograd.h"
#include "core/device_services.h"
#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {
namespace {

// Windows that overlap, pad or leave rows over, and cuDNN's pooling (which takes x and y): keeps
// the output y (detached), and the backward finds each window's maximum by comparing x with it.
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

// Windows that tile x: keeps the tap of each window's maximum (a byte an output), so the
// backward writes dx from dy and the taps alone.
class MaxPool2dTapsNode final : public Node {
 public:
  MaxPool2dTapsNode(const Tensor& x, const Conv2dGeometry& g, Tensor taps)
      : Node({x}), g_(g), taps_(std::move(taps)) {}
  const char* name() const override { return "max_pool2d"; }

  std::vector<Tensor> backward(const Tensor& dy) override {
    Tensor dx = Tensor::empty(inputs()[0].shape(), DType::F32, dy.device());
    raw::max_pool2d_backward_taps(g_, taps_, dy, dx);
    return {dx};
  }

 private:
  Conv2dGeometry g_;
  Tensor taps_;
};

}  // namespace

bool pool_windows_tile_input(const Conv2dGeometry& g) {
  return g.stride_h == g.kernel_h && g.stride_w == g.kernel_w && g.pad_top == 0 && g.pad_left == 0 &&
         g.out_h * g.kernel_h == g.in_h && g.out_w * g.kernel_w == g.in_w;
}

bool pool_records_taps(const Conv2dGeometry& g) {
  return pool_windows_tile_input(g) && g.kernel_h * g.kernel_w < POOL_NO_TAP;
}

Tensor max_pool2d(const Tensor& x, int64_t pool, int64_t stride, Padding padding) {
  detail::check_defined_float("max_pool2d", x, "x");
  const Conv2dGeometry g = pool2d_geometry(x.shape(), pool, pool, stride, stride, padding);
  Tensor y = Tensor::empty(g.y_shape(), DType::F32, x.device());
  // Where a gradient will flow, windows that tile x record their maxima's taps; under
  // --device cudnn, cuDNN's backward takes x and y instead.
  if (grad_enabled() && x.requires_grad() && pool_records_taps(g) &&
      !device_services(x.device()).vendor_libraries()) {
    Tensor taps = Tensor::empty(g.y_shape(), DType::U8, x.device());
    raw::max_pool2d_forward_taps(g, x, y, taps);
    return record(y, std::make_shared<MaxPool2dTapsNode>(x, g, std::move(taps)));
  }
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

void max_pool2d_forward_taps(const Conv2dGeometry& g, const Tensor& x, Tensor& y, Tensor& taps) {
  ENGINE_CHECK(pool_records_taps(g), "max_pool2d_forward_taps: the windows must tile x, under 255 positions each");
  detail::check_same_shape("max_pool2d_forward_taps' taps", taps, y);
  ENGINE_CHECK(taps.dtype() == DType::U8, "max_pool2d_forward_taps: taps must be U8");
  dispatch(y,
           [&] {
             return OpCall{"max_pool2d_forward", dims(x),
                           {window_flops(g), tensor_bytes({&x, &y}) + static_cast<double>(taps.numel())}};
           },
           [&] { cpu::max_pool2d_forward_taps(g, x, y, taps); },
           [&] { ENGINE_CUDA(cuda::max_pool2d_forward_taps(g, x, y, taps)); });
}

void max_pool2d_backward_taps(const Conv2dGeometry& g, const Tensor& taps, const Tensor& dy, Tensor& dx) {
  ENGINE_CHECK(pool_records_taps(g), "max_pool2d_backward_taps: the windows must tile x, under 255 positions each");
  detail::check_same_shape("max_pool2d_backward_taps' taps", taps, dy);
  ENGINE_CHECK(taps.dtype() == DType::U8, "max_pool2d_backward_taps: taps must be U8");
  dispatch(dx,
           [&] {
             return OpCall{"max_pool2d_backward", dims(dx),
                           {0.0, tensor_bytes({&dy, &dx}) + static_cast<double>(taps.numel())}};
           },
           [&] { cpu::max_pool2d_backward_taps(g, taps, dy, dx); },
           [&] { ENGINE_CUDA(cuda::max_pool2d_backward_taps(g, taps, dy, dx)); });
}

}  // namespace raw
}  // namespace engine
