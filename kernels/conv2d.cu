// The engine's convolutions (core/ops/conv2d.h): the three passes as implicit GEMMs
// (kernels/conv/), tiled by the engine's choice for the shape and the SM count, in FP32 or,
// with set_tf32(true), on TF32 tensor cores. (cuDNN's, for --device cudnn, are
// kernels/vendor/cudnn_conv.cu: the dispatch point picks them, these never see that setting.)
// The split-K workspace comes from the caching allocator: no cudaMalloc in a training step,
// and a captured graph finds the same addresses on replay.
#include "core/ops/conv2d.h"
#include "kernels/conv/backward_filter_few_channels.h"
#include "kernels/conv/implicit_gemm.h"
#include "kernels/cuda_device.h"
#include "kernels/launch.h"

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

}  // namespace

void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y) {
  run_pass(conv::Pass::Forward, g, device_of(y), [&](const conv::Tiling& t, float* workspace) {
    conv::forward(g, t, x.data<float>(), w.data<float>(), y.data<float>(), workspace, stream());
  });
}

void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w, Tensor& dx) {
  run_pass(conv::Pass::BackwardData, g, device_of(dx), [&](const conv::Tiling& t, float* workspace) {
    conv::backward_data(g, t, dy.data<float>(), w.data<float>(), dx.data<float>(), workspace, stream());
  });
}

void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw) {
  const CudaDevice& gpu = device_of(dw);
  if (conv::few_channels_filter_fits(g, dy.data<float>())) {  // a first layer: 1 or 3 channels
    const Tensor workspace = Tensor::empty(
        {conv::few_channels_workspace_floats(g, multiprocessor_count())}, DType::F32, gpu.device());
    conv::few_channels_backward_filter(g, x.data<float>(), dy.data<float>(), dw.data<float>(),
                                       workspace.data<float>(), multiprocessor_count(), stream());
    return;
  }
  run_pass(conv::Pass::BackwardFilter, g, gpu, [&](const conv::Tiling& t, float* workspace) {
    conv::backward_filter(g, t, x.data<float>(), dy.data<float>(), dw.data<float>(), workspace, stream());
  });
}

}  // namespace engine::cuda
