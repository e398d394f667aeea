// Convolution backward-data as an implicit GEMM: dx (M x N) = A (M x K) @ B (K x N), M =
// batch*ih*iw (x's pixels), N = in_c, K = kh*kw*out_c, where
//   A[(n, ih, iw)][(kh, kw, co)] = dy[n, oh, ow, co] for the output pixel whose window puts tap
//     (kh, kw) on (ih, iw): oh * stride_h = ih + pad_top - kh (likewise ow), zero when that
//     has no solution on the output grid (off-stride, or outside it);
//   B[(kh, kw, co)][ci] = w[kh, kw, ci, co]: each tap's (in_c x out_c) block, transposed.
// This is the direct gather dx[n, ih, iw, ci] = sum over (kh, kw, co) of dy[...] w[...], written
// as a GEMM so that the tiles and the multiply are the forward pass's (implicit_gemm.cuh).
// With stride 1 it is the forward convolution of dy with the flipped filters; with stride s
// only one tap in s^2 meets an output pixel, and the other A elements are zeros that are
// multiplied anyway (the seed models have stride 1; stride 2 is correct, not fast).
//
// Napkin math, seed 003 (batch 100): the same FLOPs as the forward of each layer but the first
// (whose dx is not needed): 2 x 102,400 x 32 x 288 = 1.9 GFLOP for the 32x32x32 layer, and
// 25,600 x 32 x 576, 25,600 x 64 x 576, 6,400 x 64 x 1152, 6,400 x 128 x 1152 for the others:
// 7.5 GFLOP in all, ~0.19 ms at 40 TFLOP/s; compute-bound (72-262 FLOP per byte of dy, w, dx).
// Groups of 4 run along out_c in both operands (dy's channels, w's last axis).
#include "kernels/conv/implicit_gemm.cuh"

namespace engine::cuda::conv {
namespace {

// The output pixel o with o * stride = num, if there is one on a grid of `extent`.
__device__ __forceinline__ bool on_grid(int num, int stride, int extent, int& o) {
  if (stride == 1) {  // the seed models: no division
    o = num;
    return inside(num, extent);
  }
  o = num / stride;
  return num >= 0 && o * stride == num && o < extent;
}

// Both operands walk k = (kh, kw, co), the same way (group_of gives A's and B's k-contiguous
// loads the same columns).
struct TapWalk {
  int k;
  Tap tap;  // k decoded over (kh, kw, out_c) (VEC; the scalar path decodes each element)
  __device__ static TapWalk at(const Args& p, int k) { return {k, decode_tap(k, p.out_c, p.kernel_w)}; }
  __device__ void advance(const Args& p) {
    k += BK;
    advance_tap(tap, BK, p.out_c, p.kernel_w);
  }
};

// A: row m = (n, ih, iw) of dx, column k = (kh, kw, co), read from dy. Group (m, k .. k + 3):
// with out_c % 4 == 0 (VEC) four channels of one dy pixel, one 16-byte load.
struct OutputGradientWindows {
  static constexpr bool K_CONTIGUOUS = true;
  struct Fixed {
    const float* image;  // dy[n], or null for rows past M
    int ihp, iwp;        // ih + pad_top, iw + pad_left
  };
  using Walk = TapWalk;
  __device__ static Fixed fix(const Args& p, int m) {
    if (m >= p.M) return {nullptr, 0, 0};
    const Pixel i = decode_pixel(m, p.in_h, p.in_w);
    return {p.a + int64_t{i.n} * p.out_h * p.out_w * p.out_c, i.oh + p.pad_top, i.ow + p.pad_left};
  }
  __device__ static Walk walk(const Args& p, int k) { return TapWalk::at(p, k); }
  __device__ static void advance(const Args& p, Walk& w) { w.advance(p); }
  // dy's element for tap t within the image, or -1 when the tap meets no output pixel.
  __device__ static int offset(const Args& p, const Fixed& f, const Tap& t) {
    int oh, ow;
    if (!on_grid(f.ihp - t.kh, p.stride_h, p.out_h, oh) || !on_grid(f.iwp - t.kw, p.stride_w, p.out_w, ow))
      return -1;
    return (oh * p.out_w + ow) * p.out_c + t.c;
  }
  // VEC: the group's 16 bytes, or null where it is all zeros (k_end % 4 == 0: whole or absent).
  __device__ static const float* source(const Args& p, const Fixed& f, const Walk& w, int k_end) {
    const int at = f.image != nullptr && w.k < k_end ? offset(p, f, w.tap) : -1;
    return at >= 0 ? f.image + at : nullptr;
  }
  template <bool VEC>
  __device__ static float4 fetch(const Args& p, const Fixed& f, const Walk& w, int k_end) {
    float4 v = zero4();
    if (f.image == nullptr) return v;
    if (VEC) {
      if (const float* group = source(p, f, w, k_end)) v = load4(group);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int at = w.k + e < k_end ? offset(p, f, decode_tap(w.k + e, p.out_c, p.kernel_w)) : -1;
        if (at >= 0) component(v, e) = __ldg(f.image + at);
      }
    }
    return v;
  }
};

// B: row k = (kh, kw, co), column ci: w[kh, kw, ci, co]. Stored with k contiguous within a
// tap (co is w's last axis), so groups run along k: (ci, k .. k + 3).
struct TransposedTaps {
  static constexpr bool K_CONTIGUOUS = true;
  struct Fixed {
    int ci;
  };
  using Walk = TapWalk;
  __device__ static Fixed fix(const Args&, int n) { return {n}; }
  __device__ static Walk walk(const Args& p, int k) { return TapWalk::at(p, k); }
  __device__ static void advance(const Args& p, Walk& w) { w.advance(p); }
  __device__ static const float* address(const Args& p, const Fixed& f, const Tap& t) {
    return p.b + (int64_t{t.kh * p.kernel_w + t.kw} * p.in_c + f.ci) * p.out_c + t.c;
  }
  // VEC: the group's 16 bytes, or null where it is all zeros.
  __device__ static const float* source(const Args& p, const Fixed& f, const Walk& w, int k_end) {
    return f.ci < p.N && w.k < k_end ? address(p, f, w.tap) : nullptr;
  }
  template <bool VEC>
  __device__ static float4 fetch(const Args& p, const Fixed& f, const Walk& w, int k_end) {
    float4 v = zero4();
    if (f.ci >= p.N) return v;
    if (VEC) {
      if (const float* group = source(p, f, w, k_end)) v = load4(group);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (w.k + e < k_end) component(v, e) = __ldg(address(p, f, decode_tap(w.k + e, p.out_c, p.kernel_w)));
    }
    return v;
  }
};

struct BackwardDataGather {
  using A = OutputGradientWindows;
  using B = TransposedTaps;
};

}  // namespace

void backward_data(const Conv2dGeometry& g, const Tiling& t, const float* dy, const float* w,
                   float* dx, float* workspace, cudaStream_t stream) {
  run<BackwardDataGather>(Pass::BackwardData, g, t, dy, w, dx, workspace, stream);
}

}  // namespace engine::cuda::conv
