// conv2d, NHWC (core/conv_geometry.h): its dispatch points, cost and reverse-mode rules
// (core/ops/conv2d.h). No forward-mode rule (Node's default jvp says so by name); reverse mode
// is what training needs.
#include "core/ops/conv2d.h"

#include <string>

#include "core/autograd.h"
#include "core/batched_rules.h"
#include "core/dispatch.h"
#include "core/op_checks.h"
#include "core/ops/activation.h"

namespace engine {
namespace {

// y = act(x (*) w + bias), the bias and activation optional (conv2d has neither). Backward:
// dz = act'(y) dy, with dbias its column sums over the pixels in the same pass (the Dense
// layer's bias_activation_backward, on the output viewed as rows; without an activation, dz is
// dy and dbias is summed with dw, conv2d_bias_backward_filter); dx is the transposed
// convolution of dz with w; dw correlates x with dz. The filter gradient goes straight into
// the parameter's gradient buffer when it may (gradient_destination), like a Dense kernel's.
class Conv2dNode final : public Node {
 public:
  Conv2dNode(const Tensor& x, const Tensor& w, const Conv2dGeometry& g) : Node({x, w}), g_(g) {}
  Conv2dNode(const Tensor& x, const Tensor& w, const Tensor& bias, Activation act, const Tensor& y,
             const Conv2dGeometry& g)
      : Node({x, w, bias}), g_(g), act_(act), y_(act == Activation::None ? Tensor() : y.detach()) {}
  const char* name() const override { return biased() ? "conv2d_bias_activation" : "conv2d"; }

  std::vector<Tensor> backward(const Tensor& dy) override {
    const Tensor& x = inputs()[0];
    const Tensor& w = inputs()[1];
    Tensor dx, dw, db;
    if (biased() && needs_input_grad(2)) {
      db = gradient_destination(2);
      if (!db.defined()) db = Tensor::empty(inputs()[2].shape(), DType::F32, dy.device());
    }
    if (needs_input_grad(1)) {
      dw = gradient_destination(1);
      if (!dw.defined()) dw = Tensor::empty(w.shape(), DType::F32, dy.device());
    }
    // With an activation, dw and db (and dz, where dx needs it) come from one op: a network's
    // first layer (its x is data: no dx) never writes dz, the filter gradient applies act' as
    // it reads dy; another layer's dz is written by the same pass that sums db (on Hopper, the
    // filter gradient's copy of dy), and the data pass reads it.
    if (act_ != Activation::None && dw.defined() && db.defined()) {
      if (!needs_input_grad(0)) {
        raw::conv2d_activation_backward_filter(g_, act_, y_, x, dy, dw, db);
        return {dx, dw, db};
      }
      Tensor dz = Tensor::empty(dy.shape(), DType::F32, dy.device());
      raw::conv2d_activation_backward_filter(g_, act_, y_, x, dy, dw, db, &dz);
      dx = Tensor::empty(x.shape(), DType::F32, dy.device());
      raw::conv2d_backward_data(g_, dz, w, dx);
      return {dx, dw, db};
    }
    Tensor dz = dy;
    if (act_ != Activation::None) {
      dz = Tensor::empty(dy.shape(), DType::F32, dy.device());
      Tensor dz_rows = rows(dz);
      raw::bias_activation_backward(act_, rows(y_), rows(dy), dz_rows, db);
    } else if (db.defined() && !dw.defined()) {
      raw::sum_rows(rows(dy), db);
    }  // else db is summed with dw below, from the same reads of dy
    if (needs_input_grad(0)) {  // not for a network's first layer, whose x is data
      dx = Tensor::empty(x.shape(), DType::F32, dy.device());
      raw::conv2d_backward_data(g_, dz, w, dx);
    }
    if (dw.defined()) {
      if (db.defined() && act_ == Activation::None)
        raw::conv2d_bias_backward_filter(g_, x, dz, dw, db);
      else
        raw::conv2d_backward_filter(g_, x, dz, dw);
    }
    if (biased()) return {dx, dw, db};
    return {dx, dw};
  }

  // K directions, one call per direction and input, each written into its slot of the
  // stacked result: never into a parameter's gradient buffer (Node::vjp's contract).
  std::vector<Tensor> vjp(int64_t K, const Tensor& dy, const std::vector<bool>& wanted) override {
    const Tensor& x = inputs()[0];
    const Tensor& w = inputs()[1];
    const Tensor dz = act_ == Activation::None ? dy : detail::elementwise_rule(act_, y_, dy);
    Tensor dx, dw, db;
    if (wanted[0]) dx = Tensor::empty(stacked_shape(K, x.shape()), DType::F32, dy.device());
    if (wanted[1]) dw = Tensor::empty(stacked_shape(K, w.shape()), DType::F32, dy.device());
    if (biased() && wanted[2])
      db = Tensor::empty(stacked_shape(K, inputs()[2].shape()), DType::F32, dy.device());
    for (int64_t k = 0; k < K; ++k) {
      const Tensor dz_k = direction(dz, k, output_shape());
      if (dx.defined()) {
        Tensor slot = direction(dx, k, x.shape());
        raw::conv2d_backward_data(g_, dz_k, w, slot);
      }
      if (dw.defined()) {
        Tensor slot = direction(dw, k, w.shape());
        raw::conv2d_backward_filter(g_, x, dz_k, slot);
      }
      if (db.defined()) {
        Tensor slot = direction(db, k, inputs()[2].shape());
        raw::sum_rows(rows(dz_k), slot);
      }
    }
    if (biased()) return {dx, dw, db};
    return {dx, dw};
  }

 private:
  bool biased() const { return inputs().size() == 3; }  // conv2d_bias_activation's node
  // An output-shaped tensor as (N * out_h * out_w, out_c) rows: the bias is per column.
  Tensor rows(const Tensor& t) const { return t.view({g_.batch * g_.out_h * g_.out_w, g_.out_c}); }

  Conv2dGeometry g_;
  Activation act_ = Activation::None;
  Tensor y_;  // the output, for act' (kept only with an activation)
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

Tensor conv2d_bias_activation(const Tensor& x, const Tensor& w, const Tensor& bias, Activation act,
                              int64_t stride, Padding padding) {
  const char* name = "conv2d_bias_activation";
  ENGINE_CHECK(act != Activation::Softmax, name, ": softmax is not elementwise (use softmax())");
  detail::check_defined_float(name, x, "x");
  detail::check_defined_float(name, w, "filters");
  detail::check_defined_float(name, bias, "bias");
  detail::check_same_device(name, x, w);
  detail::check_same_device(name, x, bias);
  const Conv2dGeometry g = conv2d_geometry(x.shape(), w.shape(), stride, stride, padding);
  ENGINE_CHECK(bias.shape() == Shape{g.out_c}, name, ": bias of shape ", to_string(bias.shape()),
               " for ", g.out_c, " filters (expected (", g.out_c, ",))");
  Tensor y = Tensor::empty(g.y_shape(), DType::F32, x.device());
  raw::conv2d_bias_activation_forward(g, x, w, bias, act, y);
  return record(y, std::make_shared<Conv2dNode>(x, w, bias, act, y, g));
}

PreparedConvFilters::PreparedConvFilters(const std::vector<Tensor>& filters) {
  if (filters.empty() || filters[0].device().is_cpu() || filters[0].services().vendor_libraries()) return;
  int64_t floats = 0;
  for (const Tensor& w : filters) {
    detail::check_defined_float("PreparedConvFilters", w, "filters");
    detail::check_same_device("PreparedConvFilters", filters[0], w);
    ENGINE_CHECK(w.ndim() == 4, "PreparedConvFilters: filters of shape ", to_string(w.shape()),
                 " (expected (kernel_h, kernel_w, in_c, out_c))");
    floats += w.numel();
  }
  const auto describe = [&] {
    return OpCall{"transpose_filters", std::to_string(filters.size()) + " layers' filters",
                  elementwise_cost(floats, 0.0, 2)};
  };
  run_op(filters[0].device(), describe,
         [&] { ENGINE_CUDA(cuda::prepare_forward_filters(filters, transposed_)); });
}

PreparedConvFilters::~PreparedConvFilters() {
  if (transposed_.defined()) ENGINE_CUDA(cuda::forget_forward_filters());
}

namespace raw {

void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y) {
  dispatch(y, [&] { return OpCall{"conv2d_forward", conv_shape(g), conv2d_cost(g)}; },
           [&] { cpu::conv2d_forward(g, x, w, y); },
           [&] { ENGINE_CUDA(cuda::conv2d_forward(g, x, w, y)); },
           [&] { ENGINE_CUDA(vendor::conv2d_forward(g, x, w, y)); });
}

void conv2d_bias_activation_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                    const Tensor& bias, Activation act, Tensor& y) {
  // Where the backend has no fused form: the bias and activation over the output's rows.
  Tensor rows = y.view({g.batch * g.out_h * g.out_w, g.out_c});
  const auto describe = [&] {
    const std::string epilogue = act == Activation::None ? " + bias" : std::string(" + bias, ") + activation_name(act);
    return OpCall{"conv2d_forward", conv_shape(g) + epilogue, conv2d_cost(g)};
  };
  dispatch(y, describe,
           [&] {
             cpu::conv2d_forward(g, x, w, y);
             cpu::bias_activation_forward(act, rows, bias, rows);
           },
           [&] { ENGINE_CUDA(cuda::conv2d_bias_activation_forward(g, x, w, bias, act, y)); },
           [&] {
             ENGINE_CUDA(vendor::conv2d_forward(g, x, w, y));
             ENGINE_CUDA(cuda::bias_activation_forward(act, rows, bias, rows));
           });
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

void conv2d_bias_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw,
                                 Tensor& db) {
  const Tensor rows = dy.view({g.batch * g.out_h * g.out_w, g.out_c});
  dispatch(dw, [&] { return OpCall{"conv2d_bias_backward_filter", conv_shape(g), conv2d_cost(g)}; },
           [&] {
             cpu::conv2d_backward_filter(g, x, dy, dw);
             cpu::sum_rows(rows, db);
           },
           [&] { ENGINE_CUDA(cuda::conv2d_bias_backward_filter(g, x, dy, dw, db)); },
           [&] {
             ENGINE_CUDA(vendor::conv2d_backward_filter(g, x, dy, dw));
             ENGINE_CUDA(cuda::sum_rows(rows, db));
           });
}

void conv2d_activation_backward_filter(const Conv2dGeometry& g, Activation act, const Tensor& y, const Tensor& x,
                                       const Tensor& dy, Tensor& dw, Tensor& db, Tensor* dz) {
  const Shape rows{g.batch * g.out_h * g.out_w, g.out_c};
  if (dz) detail::check_same_shape("conv2d_activation_backward_filter's dz", *dz, dy);
  // Where the backend has no fused kernel: dz first (into `dz` when given), as
  // bias_activation_backward writes it.
  Tensor dz_out, dz_rows;
  const auto new_dz = [&] {
    dz_out = dz ? *dz : Tensor::empty(dy.shape(), DType::F32, dy.device());
    dz_rows = dz_out.view(rows);
  };
  dispatch(dw, [&] { return OpCall{"conv2d_activation_backward_filter", conv_shape(g), conv2d_cost(g)}; },
           [&] {
             new_dz();
             cpu::bias_activation_backward(act, y.view(rows), dy.view(rows), dz_rows, db);
             cpu::conv2d_backward_filter(g, x, dz_out, dw);
           },
           [&] { ENGINE_CUDA(cuda::conv2d_activation_backward_filter(g, act, y, x, dy, dw, db, dz)); },
           [&] {
             new_dz();
             ENGINE_CUDA(cuda::bias_activation_backward(act, y.view(rows), dy.view(rows), dz_rows, db));
             ENGINE_CUDA(vendor::conv2d_backward_filter(g, x, dz_out, dw));
           });
}

}  // namespace raw
}  // namespace engine
