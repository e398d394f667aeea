// The Hopper convolution kernels' passes over tensors (kernels/conv2d.cu), for callers that
// have a path of their own where those kernels do not apply. Each runs its pass and returns
// true where the Hopper kernel applies (TF32 set, sm_90a code on a 9.0 GPU, the shapes and
// operands it takes), else runs nothing and returns false: the convolutions then run the
// implicit GEMMs, a Dense layer's backward products (kernels/matmul.cu, which are a 1 x 1
// convolution's passes) the matmul ladder.
#pragma once
#include "core/conv_geometry.h"
#include "core/ops/activation.h"
#include "core/tensor.h"
#include "kernels/conv/tma_wgmma.h"

namespace engine::cuda {

// The forward or backward-data pass: `gathered` is x forward, dy backward; `out` y or dx. A
// forward pass may end with a bias (or null) and an activation, applied as y is written.
bool ran_on_hopper(conv::Pass pass, const Conv2dGeometry& g, const Tensor& gathered, const Tensor& w,
                   Tensor& out, const float* bias = nullptr, Activation act = Activation::None);

// The filter gradient: dw, db unless null, both of dz = act'(y) dy where `activation` has one
// (dz written out unless null; y and dz must be 16-byte aligned as dy is).
bool ran_hopper_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy, Tensor& dw, float* db,
                       const conv::FilterActivation& activation = {});

}  // namespace engine::cuda
