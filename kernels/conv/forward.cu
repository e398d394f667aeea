// Convolution forward as an implicit GEMM: y (M x N) = patches (M x K) @ w (K x N), M =
// batch*oh*ow, N = out_c, K = kh*kw*in_c; row m = (n, oh, ow) of patches is gathered from x
// tile by tile (kernels/conv/implicit_gemm.cuh), never written out.
//
// Napkin math, seed 003 (CIFAR-10, batch 100, same padding), FP32 on an H100 (~51 TFLOP/s
// for cuBLAS SGEMM, 3 TB/s):
//   layer                   M x N x K              FLOP    bytes (x + w + y)  FLOP/byte
//   32x32x3 -> 32           102,400 x 32 x 27      0.18 G  1.2 + 0.0 + 13 MB      13
//   32x32x32 -> 32          102,400 x 32 x 288     1.9 G   13 + 0.04 + 13 MB      72
//   16x16x32 -> 64          25,600 x 64 x 288      0.94 G  3.3 + 0.07 + 6.6 MB    95
//   16x16x64 -> 64          25,600 x 64 x 576      1.9 G   6.6 + 0.15 + 6.6 MB   143
//   8x8x64 -> 128           6,400 x 128 x 576      0.94 G  1.6 + 0.3 + 3.3 MB    181
//   8x8x128 -> 128          6,400 x 128 x 1152     1.9 G   3.3 + 0.6 + 3.3 MB    262
// All but the first are compute-bound (an H100's ridge is ~17 FLOP/byte): 7.7 GFLOP per
// forward pass, ~0.19 ms at 40 TFLOP/s; the first is bound by writing y (~5 us). The gather
// reads each x element kh*kw = 9 times, from L1/L2: x's tile rows repeat in neighbouring
// rows of patches. Seed 004 (MNIST, batch 128, valid): 86,528 x 32 x 9 (0.05 GFLOP, y 11 MB)
// and 73,728 x 64 x 288 (2.7 GFLOP).
#include "kernels/conv/implicit_gemm.cuh"

namespace engine::cuda::conv {
namespace {

// A, the patches: row m = (n, oh, ow), column k = (kh, kw, ci), the element
// x[n, oh*stride_h + kh - pad_top, ow*stride_w + kw - pad_left, ci], zero outside x.
// Group (m, k .. k + 3): with in_c % 4 == 0 (VEC) four channels of one pixel, one 16-byte load.
struct Patches {
  static constexpr bool K_CONTIGUOUS = true;
  struct Fixed {
    const float* image;  // x[n], or null for rows past M
    int ih0, iw0;        // the window's top-left corner in x (negative: in the padding)
  };
  struct Walk {
    int k;
    Tap tap;  // k decoded (VEC; the scalar path decodes each element)
  };
  __device__ static Fixed fix(const Args& p, int m) {
    if (m >= p.M) return {nullptr, 0, 0};
    const Pixel o = decode_pixel(m, p.out_h, p.out_w);
    return {p.a + int64_t{o.n} * p.in_h * p.in_w * p.in_c, o.oh * p.stride_h - p.pad_top,
            o.ow * p.stride_w - p.pad_left};
  }
  __device__ static Walk walk(const Args& p, int k) { return {k, decode_tap(k, p.in_c, p.kernel_w)}; }
  __device__ static float element(const Args& p, const Fixed& f, const Tap& t) {
    const int ih = f.ih0 + t.kh, iw = f.iw0 + t.kw;
    return inside(ih, p.in_h) && inside(iw, p.in_w) ? __ldg(f.image + (ih * p.in_w + iw) * p.in_c + t.c)
                                                    : 0.0f;
  }
  // VEC: the group's 16 bytes, or null where it is all zeros (k_end % 4 == 0: whole or absent).
  __device__ static const float* source(const Args& p, const Fixed& f, const Walk& w, int k_end) {
    const int ih = f.ih0 + w.tap.kh, iw = f.iw0 + w.tap.kw;
    if (f.image == nullptr || w.k >= k_end || !inside(ih, p.in_h) || !inside(iw, p.in_w)) return nullptr;
    return f.image + (ih * p.in_w + iw) * p.in_c + w.tap.c;
  }
  template <bool VEC>
  __device__ static float4 fetch(const Args& p, const Fixed& f, const Walk& w, int k_end) {
    float4 v = zero4();
    if (f.image == nullptr) return v;
    if (VEC) {
      if (const float* group = source(p, f, w, k_end)) v = load4(group);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (w.k + e < k_end) component(v, e) = element(p, f, decode_tap(w.k + e, p.in_c, p.kernel_w));
    }
    return v;
  }
  __device__ static void advance(const Args& p, Walk& w) {
    w.k += BK;
    advance_tap(w.tap, BK, p.in_c, p.kernel_w);
  }
};

struct ForwardGather {
  using A = Patches;
  using B = DenseRows;  // w as (kh*kw*in_c, out_c)
};

}  // namespace

void forward(const Conv2dGeometry& g, const Tiling& t, const float* x, const float* w, float* y,
             float* workspace, cudaStream_t stream) {
  run<ForwardGather>(Pass::Forward, g, t, x, w, y, workspace, stream);
}

}  // namespace engine::cuda::conv
