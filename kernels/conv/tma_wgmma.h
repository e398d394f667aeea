// The convolutions' Hopper kernel (kernels/conv/tma_wgmma.cu): what the host sees. It runs the
// forward and backward-data passes of stride-1 convolutions in TF32 on compute capability 9.0,
// as one kernel: both passes are "a gather of the activations, tap by tap, times one (rows, k)
// matrix of filters per tap" (the backward-data pass is the forward pass of dy with the taps
// flipped and the filters' two channel axes swapped, which the filters' stored layout already
// gives). Everything else runs the implicit GEMMs of implicit_gemm.h.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/conv_geometry.h"
#include "core/ops/activation.h"  // Activation
#include "kernels/conv/implicit_gemm.h"  // Pass

namespace engine::cuda::conv {

// One block's tile of the output: bm pixels (64 or 128) by bn channels (32, 64 or 128).
struct HopperTiles {
  int bm = 128;
  int bn = 128;
};

// Whether the Hopper kernel can run `pass` (forward or backward-data) of g with these operands:
// a build with sm_90a code on a 9.0 GPU (device_caps: wgmma_tma), stride 1, the channels it
// gathers (in_c forward, out_c backward) a multiple of 32 (one 128-byte row of a TMA box), and
// the gathered activations, filters and output 16-byte aligned. TF32 is the caller's choice.
bool hopper_applies(Pass pass, const Conv2dGeometry& g, const float* gathered, const float* filters,
                    const float* out);
// The engine's tile for a pass on a GPU of `sms` SMs: the widest bn that the output channels
// need, then the largest tiles that still give every SM a block.
HopperTiles choose_hopper_tiles(Pass pass, const Conv2dGeometry& g, int sms);
// y = act(conv(x, w) + bias), with w's taps already transposed (filters_t, (kernel_h *
// kernel_w, out_c, in_c): k = in_c contiguous, as wgmma reads it); bias (out_c,) or null (then
// act must be None); act elementwise. Backward-data reads w as stored.
// On `stream`; outputs overwritten; no allocation, no sync.
void hopper_forward(const Conv2dGeometry& g, const HopperTiles& t, const float* x, const float* filters_t,
                    const float* bias, Activation act, float* y, cudaStream_t stream);
void hopper_backward_data(const Conv2dGeometry& g, const HopperTiles& t, const float* dy, const float* w,
                          float* dx, cudaStream_t stream);

}  // namespace engine::cuda::conv
