// The host side of the implicit-GEMM convolutions (implicit_gemm.h): the GEMM each pass is,
// the engine's choice of tiles and K slices, the checks and the arguments every launch shares;
// and the Hopper kernels' choices (tma_wgmma.h): where they apply, their tiles, pixel tiles and
// the filter gradient's plan, host code that every build has.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "kernels/conv/implicit_gemm.cuh"
#include "kernels/conv/tma_wgmma.h"
#include "kernels/conv/tma_wgmma_pipeline.cuh"  // smem_bytes
#include "kernels/device_caps.h"
#include "kernels/matmul/gemm.h"
#include "kernels/matmul/tma.h"  // tensor_map_encoder
#include "kernels/vector_io.h"

namespace engine::cuda::conv {
namespace {

// Split-K only when the output tiles leave SMs without a block; then about BLOCKS_PER_SM
// blocks per SM (two fit: 128 registers x 256 threads, <= 39 KB of shared memory each), with
// slices at least MIN_SLICE_TILES K tiles deep (each block's loads must have a few tiles to
// overlap with), at most MAX_SLICES of them and at most MAX_WORKSPACE floats of partials.
constexpr int BLOCKS_PER_SM = 2;
constexpr int MIN_SLICE_TILES = 4;
constexpr int MAX_SLICES = 128;
constexpr int64_t MAX_WORKSPACE = int64_t{16} << 20;  // 64 MB

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t tiles_of(const Tiling& t, const GemmShape& s) {
  return ceil_div(s.M, t.block_rows()) * ceil_div(s.N, t.bn);
}

}  // namespace

int to_int(int64_t v, const char* what) {
  ENGINE_CHECK(v >= 0 && v <= std::numeric_limits<int>::max(), "conv2d on the GPU: ", what, " = ", v,
               " is beyond 2^31 - 1");
  return static_cast<int>(v);
}

const char* to_string(Pass pass) {
  switch (pass) {
    case Pass::Forward: return "forward";
    case Pass::BackwardData: return "backward_data";
    case Pass::BackwardFilter: return "backward_filter";
  }
  return "?";
}

GemmShape gemm_shape(Pass pass, const Conv2dGeometry& g) {
  const int64_t taps = g.kernel_h * g.kernel_w;
  switch (pass) {
    case Pass::Forward: return {g.gemm_m(), g.out_c, taps * g.in_c};
    case Pass::BackwardData: return {g.batch * g.in_h * g.in_w, g.in_c, taps * g.out_c};
    case Pass::BackwardFilter: return {taps * g.in_c, g.out_c, g.gemm_m()};
  }
  return {};
}

int tf32_stages_setting(const char* text, int chosen) {
  if (text == nullptr || *text == '\0') return chosen;
  const std::string value(text);
  ENGINE_CHECK(value == "2" || value == "3" || value == "4", "ENGINE_CONV_TF32_STAGES=", value,
               ": 2, 3 or 4");
  return value[0] - '0';
}

// Columns: the narrowest tile that holds N (out_c or in_c: 32, 64, 128 in the seed models).
// Rows: 8 per thread where that still gives every SM a block, else 4 (twice the blocks).
// K: split when even then some SMs would idle (the backward-filter pass, always; the deep
// layers' passes at small batches).
Tiling choose_tiling(Pass pass, const Conv2dGeometry& g, bool tf32, int sms) {
  const GemmShape s = gemm_shape(pass, g);
  Tiling t;
  t.tf32 = tf32;
  t.stages = device_caps().kernels.conv_tf32_stages;
  t.bn = s.N <= 32 ? 32 : s.N <= 64 ? 64 : 128;
  t.tm = 8;
  if (tiles_of(t, s) < sms) t.tm = 4;
  const int64_t tiles = tiles_of(t, s);
  if (tiles < sms && s.M * s.N > 0) {
    const int64_t k_tiles = ceil_div(s.K, BK);
    const int64_t slices = std::min({ceil_div(int64_t{BLOCKS_PER_SM} * sms, tiles),
                                     k_tiles / MIN_SLICE_TILES, int64_t{MAX_SLICES},
                                     MAX_WORKSPACE / (s.M * s.N)});
    if (slices > 1) t.k_slice = static_cast<int>(ceil_div(k_tiles, slices) * BK);
  }
  return t;
}

bool hopper_applies(Pass pass, const Conv2dGeometry& g, const float* gathered, const float* other,
                    const float* out) {
  if (!device_caps().kernels.wgmma_tma) return false;
  static const bool encoder = gemm::tensor_map_encoder() != nullptr;
  const int64_t channels = pass == Pass::BackwardData ? g.out_c : g.in_c;
  return encoder && g.stride_h == 1 && g.stride_w == 1 && channels > 0 && channels % 32 == 0 &&
         g.pad_top < g.kernel_h && g.pad_left < g.kernel_w && aligned16(gathered) &&
         aligned16(other) && aligned16(out);
}

PixelTile choose_pixel_tile(int pixels, int64_t batch, int64_t height, int64_t width) {
  PixelTile best;
  int64_t best_rows = -1;
  for (int w = 1; w <= pixels; w *= 2) {
    for (int h = 1; w * h <= pixels; h *= 2) {
      const int n = pixels / (w * h);
      const int64_t rows = ceil_div(width, w) * ceil_div(height, h) * ceil_div(batch, n) * pixels;
      if (best_rows < 0 || rows < best_rows) {
        best_rows = rows;
        best.w = w;
        best.h = h;
        best.n = n;
      }
    }
  }
  best.across = ceil_div(width, best.w);
  best.down = ceil_div(height, best.h);
  best.count = best.across * best.down * ceil_div(batch, best.n);
  return best;
}

namespace {
// The filter gradient's pixel tiles: 32 output pixels, one k step of TF32 wgmma's 128-byte rows.
constexpr int FILTER_PIXEL_TILE = 32;
// Its blocks' tiles of dw are 64 rows (kernels/conv/tma_wgmma_filter.cu).
constexpr int FILTER_TILE_ROWS = 64;
// Shared memory an SM gives its blocks on compute capability 9.0, the only GPUs the kernel runs on.
constexpr int64_t SM_SHARED_BYTES = 227 * 1024;
}  // namespace

HopperFilterPlan plan_hopper_filter(const Conv2dGeometry& g, int sms, int slices) {
  HopperFilterPlan plan;
  const int64_t rows = g.kernel_h * g.kernel_w * g.in_c;
  plan.bn = g.out_c <= 32 ? 32 : g.out_c <= 64 ? 64 : 128;
  plan.pixels = choose_pixel_tile(FILTER_PIXEL_TILE, g.batch, g.out_h, g.out_w);
  const int64_t k_tiles = std::max<int64_t>(plan.pixels.count, 1);
  const int64_t blocks = ceil_div(rows, FILTER_TILE_ROWS) * ceil_div(g.out_c, plan.bn);
  // As many blocks as fit the SMs at once (up to 8 an SM: its k steps are latency-bound, and
  // more warpgroups hide more of it), slices at least MIN_SLICE_TILES deep, the partials at
  // most MAX_WORKSPACE floats.
  const int64_t per_sm = std::clamp<int64_t>(
      SM_SHARED_BYTES / hopper::smem_bytes(FILTER_TILE_ROWS, plan.bn, hopper::FILTER_STAGES), 1, 8);
  int64_t wanted = slices > 0 ? slices
                              : std::min({ceil_div(per_sm * sms, std::max<int64_t>(blocks, 1)),
                                          k_tiles / MIN_SLICE_TILES, int64_t{MAX_SLICES},
                                          MAX_WORKSPACE / std::max<int64_t>(rows * g.out_c, 1)});
  wanted = std::clamp<int64_t>(wanted, 1, k_tiles);
  plan.slice_tiles = to_int(ceil_div(k_tiles, wanted), "the filter gradient's pixel tiles a slice");
  plan.slices = to_int(ceil_div(k_tiles, plan.slice_tiles), "the filter gradient's slices");
  to_int(k_tiles * FILTER_PIXEL_TILE, "the filter gradient's padded pixels");  // the kernel's k offsets
  return plan;
}

int64_t HopperFilterPlan::workspace_floats(const Conv2dGeometry& g) const {
  const int64_t partials = slices > 1 ? int64_t{slices} * g.kernel_h * g.kernel_w * g.in_c * g.out_c : 0;
  return g.out_c * pixels.count * FILTER_PIXEL_TILE + partials + copy_blocks() * g.out_c;
}

std::optional<HopperTiles> hopper_tiles_setting(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  const std::string value(text);
  for (const int bm : {64, 128})
    for (const int bn : {32, 64, 128})
      if (value == std::to_string(bm) + "x" + std::to_string(bn)) return HopperTiles{bm, bn};
  throw Error("ENGINE_CONV_HOPPER_TILES=" + value +
              ": BMxBN with BM 64 or 128 and BN 32, 64 or 128 (e.g. 64x32)");
}

// Tiles of 128 x (the narrowest bn that holds N) where they give every SM a block; else 64
// rows, then narrower columns, down to 64 x 32.
HopperTiles choose_hopper_tiles(Pass pass, const Conv2dGeometry& g, int sms) {
  static const std::optional<HopperTiles> forced =
      hopper_tiles_setting(std::getenv("ENGINE_CONV_HOPPER_TILES"));
  if (forced) return *forced;
  const GemmShape s = gemm_shape(pass, g);
  HopperTiles t;
  t.bn = s.N <= 32 ? 32 : s.N <= 64 ? 64 : 128;
  auto blocks = [&] { return ceil_div(s.M, t.bm) * ceil_div(s.N, t.bn); };
  if (blocks() < sms) t.bm = 64;
  while (blocks() < sms && t.bn > 32) t.bn /= 2;
  return t;
}

#if !ENGINE_WITH_SM90A
// A build without sm_90a code has no Hopper kernel (hopper_applies is false there).
void hopper_forward(const Conv2dGeometry&, const HopperTiles&, const float*, const float*, const float*,
                    Activation, float*, cudaStream_t) {
  throw Error("conv2d: this build has no sm_90a code for the Hopper kernel");
}
void hopper_backward_data(const Conv2dGeometry&, const HopperTiles&, const float*, const float*, float*,
                          cudaStream_t) {
  throw Error("conv2d: this build has no sm_90a code for the Hopper kernel");
}
void hopper_backward_filter(const Conv2dGeometry&, const HopperFilterPlan&, const float*, const float*, float*,
                            float*, float*, cudaStream_t, const FilterActivation&) {
  throw Error("conv2d: this build has no sm_90a code for the Hopper kernel");
}
#endif

int slices_of(const Tiling& t, const GemmShape& s) {
  return t.k_slice > 0 ? static_cast<int>(std::max<int64_t>(1, ceil_div(s.K, t.k_slice))) : 1;
}

int64_t workspace_floats(const Tiling& t, const GemmShape& s) {
  const int slices = slices_of(t, s);
  return slices > 1 ? slices * s.M * s.N : 0;
}

// Groups of 4 run along: forward, in_c (A) and out_c (B); backward_data, out_c in both;
// backward_filter, in_c (A) and out_c (B). The strides between groups are then multiples of
// 4 floats, so 16-byte aligned operands keep every group aligned.
bool vectorized(Pass pass, const Conv2dGeometry& g, const float* a, const float* b) {
  const bool channels = pass == Pass::BackwardData ? g.out_c % 4 == 0 : g.in_c % 4 == 0 && g.out_c % 4 == 0;
  return channels && aligned16(a) && aligned16(b);
}

int prepare(Pass pass, const Conv2dGeometry& g, const Tiling& t, const float* a, const float* b,
            float* c, float* workspace, cudaStream_t stream, Args& p) {
  ENGINE_CHECK((t.bn == 32 || t.bn == 64 || t.bn == 128) && (t.tm == 4 || t.tm == 8) &&
                   t.k_slice >= 0 && t.k_slice % BK == 0 && t.stages >= 2 && t.stages <= 4,
               "conv2d on the GPU: no kernel for tiles of ", t.block_rows(), " x ", t.bn,
               " with K slices of ", t.k_slice, " in ", t.stages, " stages");
  const GemmShape s = gemm_shape(pass, g);
  if (s.M == 0 || s.N == 0) return 0;
  if (s.K == 0) {  // an empty batch's dw: a sum of nothing
    CHECK_CUDA(cudaMemsetAsync(c, 0, sizeof(float) * static_cast<size_t>(s.M * s.N), stream));
    return 0;
  }
  p.in_h = to_int(g.in_h, "in_h");
  p.in_w = to_int(g.in_w, "in_w");
  p.in_c = to_int(g.in_c, "in_c");
  p.kernel_h = to_int(g.kernel_h, "kernel_h");
  p.kernel_w = to_int(g.kernel_w, "kernel_w");
  p.out_c = to_int(g.out_c, "out_c");
  p.stride_h = to_int(g.stride_h, "stride_h");
  p.stride_w = to_int(g.stride_w, "stride_w");
  p.pad_top = to_int(g.pad_top, "pad_top");
  p.pad_left = to_int(g.pad_left, "pad_left");
  p.out_h = to_int(g.out_h, "out_h");
  p.out_w = to_int(g.out_w, "out_w");
  // Offsets within one image, and along K and M, are computed in int; only the image index
  // and the row of a (K x N) operand go to 64 bits.
  to_int(g.in_h * g.in_w * g.in_c, "one input image's elements");
  to_int(g.out_h * g.out_w * g.out_c, "one output image's elements");
  to_int(g.kernel_h * g.kernel_w * g.in_c * g.out_c, "the filters' elements");
  p.M = to_int(s.M, "the GEMM's M");
  p.N = to_int(s.N, "the GEMM's N");
  p.K = to_int(s.K, "the GEMM's K");
  to_int(ceil_div(s.M, t.block_rows()), "the grid's row tiles");
  const int slices = slices_of(t, s);
  ENGINE_CHECK(ceil_div(s.N, t.bn) <= 65535 && slices <= 65535, "conv2d on the GPU: ", s.N,
               " channels in ", slices, " K slices do not fit a grid");
  p.k_slice = slices > 1 ? t.k_slice : 0;
  p.a = a;
  p.b = b;
  p.c = c;
  if (slices > 1) {
    ENGINE_CHECK(workspace != nullptr && aligned16(workspace),
                 "conv2d on the GPU: split-K needs a 16-byte aligned workspace");
    p.c = workspace;
  }
  p.c_vec = s.N % 4 == 0 && aligned16(p.c);
  return slices;
}

void reduce_slices(const Args& p, int slices, float* c, cudaStream_t stream) {
  gemm::Gemm g;
  g.M = p.M;
  g.N = p.N;
  g.C = c;
  g.ldc = p.N;
  g.partial = p.c;  // the workspace the slices wrote
  gemm::split_k_reduce(g, slices, stream);
}

}  // namespace engine::cuda::conv
