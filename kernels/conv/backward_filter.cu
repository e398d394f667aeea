// Convolution backward-filter as an implicit GEMM: dw (M x N) = patches^T (M x K) @ dy (K x N),
// M = kh*kw*in_c (w's rows), N = out_c, K = batch*oh*ow: the patches of the forward pass,
// transposed, gathered from x tile by tile (implicit_gemm.cuh), against dy read as it lies.
//
// The shape is the forward's turned around: a small output (288 x 32 for the 32x32x32 layer of
// seed 003) and a long reduction (102,400 at batch 100). 288 x 32 is three 128 x 32 tiles for
// 132 SMs, so K is split: choose_tiling gives about two blocks per SM (88 slices of 1,168 for
// that layer), each slice writes its partial dw to a workspace, and gemm::split_k_reduce adds
// the slices in order: deterministic, run to run, unlike float atomics.
//
// Napkin math, seed 003 (batch 100), FP32 on an H100: the forward's FLOPs, 7.7 GFLOP in all
// (1.9 G for the 32x32x32 layer), ~0.19 ms at 40 TFLOP/s; reads x and dy once each per column
// tile of dw (13 + 13 MB for that layer, ~9 us at 3 TB/s: compute-bound), and the workspace
// (88 x 288 x 32 floats, 3.2 MB) is written and read back once, ~2 us. First layers (3x3
// filters over 1 or 3 channels, such as seed 004's 9 x 32 x 86,528) do not come here: they run
// backward_filter_few_channels.cu, which suits their 9- or 27-row output.
#include "kernels/conv/implicit_gemm.cuh"

namespace engine::cuda::conv {
namespace {

// A: row m = (kh, kw, ci) of dw, column k = (n, oh, ow): x at tap (kh, kw) of output pixel
// (n, oh, ow)'s window, zero outside x. Stored with m contiguous (ci is x's last axis), so
// groups run along m: (m .. m + 3, k), with in_c % 4 == 0 (VEC) four channels of one pixel.
struct TransposedPatches {
  static constexpr bool K_CONTIGUOUS = false;
  struct Fixed {
    int m;
    Tap tap;  // m decoded over (kh, kw, in_c): the whole group's with VEC
  };
  struct Walk {
    int k;
    Pixel out;  // k decoded over (batch, out_h, out_w)
  };
  __device__ static Fixed fix(const Args& p, int m) { return {m, decode_tap(m, p.in_c, p.kernel_w)}; }
  __device__ static Walk walk(const Args& p, int k) { return {k, decode_pixel(k, p.out_h, p.out_w)}; }
  __device__ static void advance(const Args& p, Walk& w) {
    w.k += BK;
    advance_pixel(w.out, BK, p.out_h, p.out_w);
  }
  __device__ static float element(const Args& p, const Pixel& o, const Tap& t) {
    const int ih = o.oh * p.stride_h + t.kh - p.pad_top, iw = o.ow * p.stride_w + t.kw - p.pad_left;
    if (!inside(ih, p.in_h) || !inside(iw, p.in_w)) return 0.0f;
    return __ldg(p.a + ((int64_t{o.n} * p.in_h + ih) * p.in_w + iw) * p.in_c + t.c);
  }
  // VEC: the group's 16 bytes, or null where it is all zeros (M % 4 == 0: whole or absent).
  __device__ static const float* source(const Args& p, const Fixed& f, const Walk& w, int k_end) {
    const int ih = w.out.oh * p.stride_h + f.tap.kh - p.pad_top;
    const int iw = w.out.ow * p.stride_w + f.tap.kw - p.pad_left;
    if (w.k >= k_end || f.m >= p.M || !inside(ih, p.in_h) || !inside(iw, p.in_w)) return nullptr;
    return p.a + ((int64_t{w.out.n} * p.in_h + ih) * p.in_w + iw) * p.in_c + f.tap.c;
  }
  template <bool VEC>
  __device__ static float4 fetch(const Args& p, const Fixed& f, const Walk& w, int k_end) {
    float4 v = zero4();
    if (w.k >= k_end) return v;
    if (VEC) {
      if (const float* group = source(p, f, w, k_end)) v = load4(group);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (f.m + e < p.M) component(v, e) = element(p, w.out, decode_tap(f.m + e, p.in_c, p.kernel_w));
    }
    return v;
  }
};

struct BackwardFilterGather {
  using A = TransposedPatches;
  using B = DenseRows;  // dy as (batch*oh*ow, out_c)
};

}  // namespace

void backward_filter(const Conv2dGeometry& g, const Tiling& t, const float* x, const float* dy,
                     float* dw, float* workspace, cudaStream_t stream) {
  run<BackwardFilterGather>(Pass::BackwardFilter, g, t, x, dy, dw, workspace, stream);
}

}  // namespace engine::cuda::conv
