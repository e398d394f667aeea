// The engine's convolutions (core/ops/conv2d.h): the three passes as implicit GEMMs
// (kernels/conv/), tiled by the engine's choice for the shape and the SM count, in FP32 or,
// with set_tf32(true), on TF32 tensor cores. (cuDNN's, for --device cudnn, are
// kernels/vendor/cudnn_conv.cu: the dispatch point picks them, these never see that setting.)
// In TF32 on Hopper, the passes of stride-1 convolutions run kernels/conv/tma_wgmma.cu
// (forward, backward-data) and conv/tma_wgmma_filter.cu (filter gradient) instead, where
// they apply (conv::hopper_applies); a first layer's forward and filter gradient (1 to 4
// channels, 1 or 3 for the gradient) have kernels of their own (conv/forward_few_channels.cu
// in FP32; conv/backward_filter_few_channels.cu in FP32, or on TF32 tensor cores under TF32).
// Workspaces (split-K partials, the Hopper forward's transposed filters, the Hopper filter
// gradient's copy of dy) come from the caching allocator: no cudaMalloc in a training step,
// and a captured graph finds the same addresses on replay.
#include <utility>
#include <vector>

#include "core/ops/activation.h"
#include "core/ops/conv2d.h"
#include "kernels/conv/backward_filter_few_channels.h"
#include "kernels/conv/transpose_filters.h"
#include "kernels/conv/forward_few_channels.h"
#include "kernels/conv/implicit_gemm.h"
#include "kernels/conv/tma_wgmma.h"
#include "kernels/conv2d.h"
#include "kernels/cuda_device.h"
#include "kernels/device_caps.h"
#include "kernels/launch.h"
#include "kernels/vector_io.h"

namespace engine::cuda {
namespace {

// Runs `pass` on `gpu` with the engine's tiling (FP32 or TF32, as the device is set);
// `launch(tiling, workspace)` calls the pass.
template <typename Launch>
void run_pass(conv::Pass pass, const Conv2dGeometry& g, const CudaDevice& gpu, Launch&& launch) {
  const conv::Tiling t = conv::choose_tiling(pass, g, gpu.tf32(), multiprocessor_count());
  const int64_t floats = conv::workspace_floats(t, conv::gemm_shape(pass, g));
  Tensor workspace;
  if (floats > 0) workspace = Tensor::empty({floats}, DType::F32, gpu.device());
  launch(t, floats > 0 ? workspace.data<float>() : nullptr);
}

// The transposed filters a model's forward pass prepared (prepare_forward_filters), on this
// thread: (w, its transpose) pairs, empty outside such a pass.
thread_local std::vector<std::pair<const float*, const float*>> prepared_filters;

conv::FilterTranspose transpose_of(const Tensor& w, float* filters_t) {
  const auto i32 = [](int64_t v) { return static_cast<int>(v); };
  return {w.data<float>(), filters_t, i32(w.dim(0) * w.dim(1)), i32(w.dim(2)), i32(w.dim(3))};
}

}  // namespace

bool prepare_forward_filters(const std::vector<Tensor>& filters, Tensor& transposed) {
  if (filters.empty() || !device_of(filters[0]).tf32() || !device_caps().kernels.wgmma_tma) return false;
  // The filters a Hopper forward may read: those over a multiple of 32 channels.
  std::vector<const Tensor*> hopper;
  int64_t floats = 0;
  for (const Tensor& w : filters) {
    if (w.dim(2) % 32 != 0) continue;
    hopper.push_back(&w);
    floats += w.numel();  // a multiple of 32: every copy starts 128-byte aligned
  }
  if (hopper.empty()) return false;
  transposed = Tensor::empty({floats}, DType::F32, filters[0].device());
  std::vector<conv::FilterTranspose> layers;
  float* next = transposed.data<float>();
  for (const Tensor* w : hopper) {
    layers.push_back(transpose_of(*w, next));
    next += w->numel();
  }
  conv::transpose_filters(layers, stream());
  for (const conv::FilterTranspose& layer : layers) prepared_filters.emplace_back(layer.w, layer.filters_t);
  return true;
}

void forget_forward_filters() { prepared_filters.clear(); }

bool ran_on_hopper(conv::Pass pass, const Conv2dGeometry& g, const Tensor& gathered, const Tensor& w,
                   Tensor& out, const float* bias, Activation act) {
  const CudaDevice& gpu = device_of(out);
  if (!gpu.tf32() || !conv::hopper_applies(pass, g, gathered.data<float>(), w.data<float>(), out.data<float>()))
    return false;
  const conv::HopperTiles t = conv::choose_hopper_tiles(pass, g, multiprocessor_count());
  if (pass == conv::Pass::BackwardData) {
    conv::hopper_backward_data(g, t, gathered.data<float>(), w.data<float>(), out.data<float>(), stream());
    return true;
  }
  // Each tap's (in_c, out_c) filters transposed to (out_c, in_c): k contiguous, as wgmma reads;
  // made by the model's forward pass for all its layers at once, else here for this one.
  const float* filters_t = nullptr;
  for (const auto& [filters, transpose] : prepared_filters)
    if (filters == w.data<float>()) filters_t = transpose;
  Tensor own;
  if (!filters_t) {
    own = Tensor::empty({w.numel()}, DType::F32, gpu.device());
    conv::transpose_filters({transpose_of(w, own.data<float>())}, stream());
    filters_t = own.data<float>();
  }
  conv::hopper_forward(g, t, gathered.data<float>(), filters_t, bias, act, out.data<float>(), stream());
  return true;
}

bool ran_hopper_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw, float* db,
                       const conv::FilterActivation& activation) {
  const CudaDevice& gpu = device_of(dw);
  if (!gpu.tf32() || (activation.y && !aligned16(activation.y)) || (activation.dz && !aligned16(activation.dz)) ||
      !conv::hopper_applies(conv::Pass::BackwardFilter, g, x.data<float>(), dy.data<float>(), dw.data<float>()))
    return false;
  const conv::HopperFilterPlan plan = conv::plan_hopper_filter(g, multiprocessor_count());
  const Tensor workspace = Tensor::empty({plan.workspace_floats(g)}, DType::F32, gpu.device());
  conv::hopper_backward_filter(g, plan, x.data<float>(), dy.data<float>(), dw.data<float>(), db,
                               workspace.data<float>(), stream(), activation);
  return true;
}

namespace {

// A first layer's forward (1 to 4 input channels) on its own kernel, the bias and activation
// applied as y is written; false where the shape is not one it takes.
bool ran_few_channels(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y, const float* bias,
                      Activation act) {
  if (!conv::few_channels_forward_fits(g, y.data<float>())) return false;
  conv::few_channels_forward(g, x.data<float>(), w.data<float>(), bias, act, y.data<float>(),
                             multiprocessor_count(), stream());
  return true;
}

// y = act(conv(x, w) + bias), bias null for none (then act is None). The Hopper kernel and the
// few-channels one add the bias and apply the activation as they write y; the implicit GEMMs
// write y, then the Dense layer's bias_activation kernel passes over it in place.
void forward_pass(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, const Tensor* bias, Activation act,
                  Tensor& y) {
  const float* b = bias ? bias->data<float>() : nullptr;
  if (ran_on_hopper(conv::Pass::Forward, g, x, w, y, b, act) || ran_few_channels(g, x, w, y, b, act)) return;
  run_pass(conv::Pass::Forward, g, device_of(y), [&](const conv::Tiling& t, float* workspace) {
    conv::forward(g, t, x.data<float>(), w.data<float>(), y.data<float>(), workspace, stream());
  });
  if (bias) {
    Tensor rows = y.view({g.batch * g.out_h * g.out_w, g.out_c});
    bias_activation_forward(act, rows, *bias, rows);
  }
}

}  // namespace

void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y) {
  forward_pass(g, x, w, nullptr, Activation::None, y);
}

void conv2d_bias_activation_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                    const Tensor& bias, Activation act, Tensor& y) {
  forward_pass(g, x, w, &bias, act, y);
}

void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w, Tensor& dx) {
  if (ran_on_hopper(conv::Pass::BackwardData, g, dy, w, dx)) return;
  run_pass(conv::Pass::BackwardData, g, device_of(dx), [&](const conv::Tiling& t, float* workspace) {
    conv::backward_data(g, t, dy.data<float>(), w.data<float>(), dx.data<float>(), workspace, stream());
  });
}

namespace {

// The few-channels filter gradient's partials, from the caching allocator.
Tensor few_channels_workspace(const Conv2dGeometry& g, const CudaDevice& gpu) {
  return Tensor::empty({conv::few_channels_workspace_floats(g, multiprocessor_count())}, DType::F32, gpu.device());
}


// dw, and db = dy's column sums when db is given: the Hopper filter gradient sums them while
// it copies dy; elsewhere sum_rows does, a pass over dy of its own.
void filter_gradient(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw, Tensor* db) {
  const CudaDevice& gpu = device_of(dw);
  const auto sum_columns = [&] {
    if (db) sum_rows(dy.view({g.batch * g.out_h * g.out_w, g.out_c}), *db);
  };
  if (conv::few_channels_filter_fits(g, dy.data<float>())) {  // a first layer: 1 or 3 channels
    const Tensor workspace = few_channels_workspace(g, gpu);
    if (db && gpu.tf32() && conv::few_channels_fused_fits(g, Activation::None)) {  // db as dy is read
      conv::few_channels_fused_backward_filter(g, Activation::None, nullptr, x.data<float>(), dy.data<float>(),
                                               dw.data<float>(), db->data<float>(), workspace.data<float>(),
                                               multiprocessor_count(), stream());
      return;
    }
    conv::few_channels_backward_filter(g, x.data<float>(), dy.data<float>(), dw.data<float>(),
                                       workspace.data<float>(), multiprocessor_count(), gpu.tf32(), stream());
    sum_columns();
    return;
  }
  if (ran_hopper_filter(g, x, dy, dw, db ? db->data<float>() : nullptr)) return;
  run_pass(conv::Pass::BackwardFilter, g, gpu, [&](const conv::Tiling& t, float* workspace) {
    conv::backward_filter(g, t, x.data<float>(), dy.data<float>(), dw.data<float>(), workspace, stream());
  });
  sum_columns();
}

}  // namespace

void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw) {
  filter_gradient(g, x, dy, dw, nullptr);
}

void conv2d_bias_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw,
                                 Tensor& db) {
  filter_gradient(g, x, dy, dw, &db);
}

void conv2d_activation_backward_filter(const Conv2dGeometry& g, Activation act, const Tensor& y, const Tensor& x,
                                       const Tensor& dy, Tensor& dw, Tensor& db, Tensor* dz) {
  const CudaDevice& gpu = device_of(dw);
  if (!dz && gpu.tf32() && conv::few_channels_filter_fits(g, dy.data<float>()) &&
      conv::few_channels_fused_fits(g, act)) {
    const Tensor workspace = few_channels_workspace(g, gpu);
    conv::few_channels_fused_backward_filter(g, act, y.data<float>(), x.data<float>(), dy.data<float>(),
                                             dw.data<float>(), db.data<float>(), workspace.data<float>(),
                                             multiprocessor_count(), stream());
    return;
  }
  // On Hopper the copy of dy reads y beside it, and writes dz for the data pass.
  const bool elementwise = act == Activation::Relu || act == Activation::Tanh || act == Activation::Sigmoid;
  if (elementwise &&
      ran_hopper_filter(g, x, dy, dw, db.data<float>(), {act, y.data<float>(), dz ? dz->data<float>() : nullptr}))
    return;
  // Elsewhere dz is written first (into `dz` when given), as the layer's backward would
  // without this op.
  const Shape rows{g.batch * g.out_h * g.out_w, g.out_c};
  Tensor scratch;
  if (!dz) scratch = Tensor::empty(dy.shape(), DType::F32, gpu.device());
  Tensor& out = dz ? *dz : scratch;
  Tensor dz_rows = out.view(rows);
  bias_activation_backward(act, y.view(rows), dy.view(rows), dz_rows, db);
  filter_gradient(g, x, out, dw, nullptr);
}

}  // namespace engine::cuda
