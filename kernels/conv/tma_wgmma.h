// The convolutions' Hopper kernels: what the host sees. They run the three passes of stride-1
// convolutions in TF32 on compute capability 9.0. kernels/conv/tma_wgmma.cu runs the forward
// and backward-data passes as one kernel: both are "a gather of the activations, tap by tap,
// times one (rows, k) matrix of filters per tap" (the backward-data pass is the forward pass of
// dy with the taps flipped and the filters' two channel axes swapped, which the filters' stored
// layout already gives). kernels/conv/tma_wgmma_filter.cu runs the filter gradient, the same
// gather of x against a copy of dy. Everything else runs the implicit GEMMs of implicit_gemm.h.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>

#include "core/conv_geometry.h"
#include "core/ops/activation.h"  // Activation
#include "kernels/conv/implicit_gemm.h"  // Pass

namespace engine::cuda::conv {

// One block's tile of the output: bm pixels (64 or 128) by bn channels (32, 64 or 128).
struct HopperTiles {
  int bm = 128;
  int bn = 128;
};

// Whether a Hopper kernel can run `pass` of g with these operands: a build with sm_90a code on
// a 9.0 GPU (device_caps: wgmma_tma), stride 1, the channels it gathers (in_c forward and
// filter gradient, out_c backward-data) a multiple of 32 (one 128-byte row of a TMA box), and
// the gathered activations, the other operand (filters; dy for the filter gradient) and the
// output 16-byte aligned. TF32 is the caller's choice.
bool hopper_applies(Pass pass, const Conv2dGeometry& g, const float* gathered, const float* other,
                    const float* out);
// The engine's tile for a pass on a GPU of `sms` SMs: the widest bn that the output channels
// need, then the largest tiles that still give every SM a block.
// ENGINE_CONV_HOPPER_TILES=BMxBN (BM 64 or 128, BN 32, 64 or 128) makes that the tile of every
// Hopper forward and backward-data pass instead: a knob for testing the choice with
// kernel_bench --conv-only and the CNN apps, as ENGINE_CONV_TF32_STAGES is for the stages.
HopperTiles choose_hopper_tiles(Pass pass, const Conv2dGeometry& g, int sms);
// The knob's value: none when unset or empty, the tile when valid; anything else refused.
std::optional<HopperTiles> hopper_tiles_setting(const char* text);
// y = act(conv(x, w) + bias), with w's taps already transposed (filters_t, (kernel_h *
// kernel_w, out_c, in_c): k = in_c contiguous, as wgmma reads it); bias (out_c,) or null (then
// act must be None); act elementwise. Backward-data reads w as stored.
// On `stream`; outputs overwritten; no allocation, no sync.
void hopper_forward(const Conv2dGeometry& g, const HopperTiles& t, const float* x, const float* filters_t,
                    const float* bias, Activation act, float* y, cudaStream_t stream);
void hopper_backward_data(const Conv2dGeometry& g, const HopperTiles& t, const float* dy, const float* w,
                          float* dx, cudaStream_t stream);

// A block's output pixels: w columns x h rows x n images (powers of two whose product is the
// tile's pixel count), and how many such tiles cover (batch, height, width): across one image
// row, down one image, and in all. TMA gathers such a block as one box.
struct PixelTile {
  int w = 1, h = 1, n = 1;
  int64_t across = 0, down = 0, count = 0;
};
// The tile of `pixels` that wastes the fewest pixels past the edges of the images and the
// batch; among equals the narrowest (H200, 2026-11-28: 2-4% faster than the widest on the seed
// layers' forward and backward-data passes, the same on their filter gradients).
PixelTile choose_pixel_tile(int pixels, int64_t batch, int64_t height, int64_t width);

// How the filter gradient runs on Hopper: dw (taps x in_c rows, out_c columns) in tiles of
// 64 x bn, the output pixels in tiles of 32 (the reduction's k steps), split into `slices`
// runs of `slice_tiles` pixel tiles each (blockIdx.z), whose partial dw gemm::split_k_reduce
// adds in order.
// dy is first copied K-major in blocks of DY_COPY_TILES pixel tiles, which can also sum dy's
// columns (the bias gradient) as they go.
constexpr int DY_COPY_TILES = 4;
struct HopperFilterPlan {
  int bn = 128;  // 32, 64 or 128
  PixelTile pixels;
  int slices = 1, slice_tiles = 0;
  // The dy copy's blocks along the pixels.
  int64_t copy_blocks() const { return (pixels.count + DY_COPY_TILES - 1) / DY_COPY_TILES; }
  // The workspace: dy copied as (out_c, pixel tiles x 32), the slices' partials if split, then
  // the copy blocks' column sums of dy (copy_blocks x out_c).
  int64_t workspace_floats(const Conv2dGeometry& g) const;
};
// The engine's plan on a GPU of `sms` SMs: the narrowest bn that holds out_c, and slices for
// as many blocks as fit the SMs at once (`slices` > 0: about that many, for the tests).
HopperFilterPlan plan_hopper_filter(const Conv2dGeometry& g, int sms, int slices = 0);
// A layer's activation, applied to dy as the copy reads it: dz = act'(y) dy, and dz written
// out (for the data pass) unless null. The default: dz is dy.
struct FilterActivation {
  Activation act = Activation::None;
  const float* y = nullptr;
  float* dz = nullptr;
};
// dw = the filter gradient of x and dz, in TF32, and db = dz's column sums unless db is null,
// where dz = act'(y) dy (`activation`), dy itself without one. `workspace`:
// plan.workspace_floats(g) floats.
void hopper_backward_filter(const Conv2dGeometry& g, const HopperFilterPlan& plan, const float* x,
                            const float* dy, float* dw, float* db, float* workspace, cudaStream_t stream,
                            const FilterActivation& activation = {});

}  // namespace engine::cuda::conv
