// conv2d on the CPU: im2col in bounded chunks + single-threaded OpenBLAS sgemm per chunk, the
// chunks spread over our OpenMP team (OpenBLAS stays on one thread: cpu/matmul.cpp says why).
//
// The convolution is the GEMM of core/conv_geometry.h: y (M x N) = patches (M x K) @ w (K x N),
// M = batch * out_h * out_w, K = kernel_h * kernel_w * in_c, N = out_c. The patch matrix is
// never built whole (seed 003's second conv would need 100 x 1024 x 288 floats = 118 MB): a
// thread builds CHUNK_FLOATS of it at a time (a chunk of rows, ~1 MB, half an L2 on most
// servers) and multiplies it at once, while it is still in cache.
//   forward          y[rows]  = patches[rows] @ w                  chunks of all M rows
//   backward data    dx      += col2im(dy[rows] @ w^T)             whole images per thread
//   backward filter  dw       = sum over chunks patches[rows]^T @ dy[rows]   one partial dw
//                                per thread, added in thread order at the end
// Backward data scatters each patch element back to the pixel it came from, and windows of
// neighbouring output pixels overlap, so a thread owns whole images (their dx never meet).
// A 1x1 kernel at stride 1 needs no patches at all: x itself is the (M x K) matrix.
//
// Napkin math, seed 003 (CIFAR-10 CNN, batch 100, 3x3 same convs):
//   conv2 (32x32x32 -> 32): M = 102,400, K = 288, N = 32: 2 M K N = 1.9 GFLOP per pass;
//   all six convs 7.7 GFLOP forward, ~23 GFLOP per training step (backward data and filter
//   cost the forward's FLOPs each; the first layer has no backward data). sgemm stays below
//   its peak on these passes: N = 32..128 is narrow, and conv1's K = 27 narrower still
//   (measured per pass: docs/HISTORY.md, 2026-11-23).
//   im2col traffic: each chunk is written once and read once from L2; its K-fold reuse of x
//   costs ~1 byte moved per 8 FLOPs in L2, far below what the cache delivers.
#include "core/ops/conv2d.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "cpu/cpu_device.h"

namespace engine::cpu {
namespace {

constexpr int64_t CHUNK_FLOATS = 256 * 1024;  // one patch buffer: 1 MB
constexpr int64_t MIN_FLOPS_PER_THREAD = 2'000'000;  // below this a convolution runs on one thread

bool pointwise(const Conv2dGeometry& g) {
  return g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 &&
         g.pad_top == 0 && g.pad_left == 0;
}

// Rows [0, total) of a patch matrix of K columns cut into `count` chunks of `rows` (the last
// may be shorter): each chunk fits CHUNK_FLOATS, and the count is a multiple of `team` where
// rows allow, so a static schedule gives every thread the same work.
struct Chunks {
  int64_t rows, count;
};

Chunks plan_chunks(int64_t total, int64_t k, int team) {
  const int64_t by_memory = std::max<int64_t>(1, (total * k + CHUNK_FLOATS - 1) / CHUNK_FLOATS);
  int64_t count = std::max<int64_t>(team, by_memory);
  count = (count + team - 1) / team * team;
  count = std::min(count, total);
  const int64_t rows = (total + count - 1) / count;
  return {rows, (total + rows - 1) / rows};
}

// The kernel columns [lo, hi) whose input column ow * stride_w + kw - pad_left lies inside x.
// Columns of consecutive kw sit next to each other both in x and in a patch row, so the whole
// range is one contiguous copy of (hi - lo) * in_c floats.
void kernel_columns(const Conv2dGeometry& g, int64_t ow, int64_t& lo, int64_t& hi) {
  const int64_t iw0 = ow * g.stride_w - g.pad_left;
  lo = std::clamp<int64_t>(-iw0, 0, g.kernel_w);
  hi = std::clamp<int64_t>(g.in_w - iw0, lo, g.kernel_w);
}

// patches (rows x K) = rows [m0, m1) of the patch matrix of x: zeros where a window hangs over
// the padding.
void im2col_rows(const Conv2dGeometry& g, const float* x, int64_t m0, int64_t m1, float* patches) {
  const int64_t k = g.gemm_k(), c = g.in_c, per_image = g.out_h * g.out_w;
  for (int64_t m = m0; m < m1; ++m) {
    const int64_t n = m / per_image, oh = m % per_image / g.out_w, ow = m % g.out_w;
    float* row = patches + (m - m0) * k;
    int64_t lo, hi;
    kernel_columns(g, ow, lo, hi);
    const int64_t iw0 = ow * g.stride_w - g.pad_left;
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      float* dst = row + kh * g.kernel_w * c;
      const int64_t ih = oh * g.stride_h + kh - g.pad_top;
      if (ih < 0 || ih >= g.in_h) {
        std::fill(dst, dst + g.kernel_w * c, 0.0f);
        continue;
      }
      std::fill(dst, dst + lo * c, 0.0f);
      std::memcpy(dst + lo * c, x + ((n * g.in_h + ih) * g.in_w + iw0 + lo) * c,
                  static_cast<size_t>((hi - lo) * c) * sizeof(float));
      std::fill(dst + hi * c, dst + g.kernel_w * c, 0.0f);
    }
  }
}

// The adjoint of im2col_rows: dx += each element of rows [m0, m1) of the patch-matrix gradient
// at the pixel it was copied from (padding positions are dropped).
void col2im_rows(const Conv2dGeometry& g, const float* dpatches, int64_t m0, int64_t m1, float* dx) {
  const int64_t k = g.gemm_k(), c = g.in_c, per_image = g.out_h * g.out_w;
  for (int64_t m = m0; m < m1; ++m) {
    const int64_t n = m / per_image, oh = m % per_image / g.out_w, ow = m % g.out_w;
    const float* row = dpatches + (m - m0) * k;
    int64_t lo, hi;
    kernel_columns(g, ow, lo, hi);
    const int64_t iw0 = ow * g.stride_w - g.pad_left;
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = oh * g.stride_h + kh - g.pad_top;
      if (ih < 0 || ih >= g.in_h) continue;
      const float* src = row + (kh * g.kernel_w + lo) * c;
      float* dst = dx + ((n * g.in_h + ih) * g.in_w + iw0 + lo) * c;
      const int64_t len = (hi - lo) * c;
#pragma omp simd
      for (int64_t i = 0; i < len; ++i) dst[i] += src[i];
    }
  }
}

int conv_team(const Conv2dGeometry& g) {
  return team_size(2 * g.gemm_m() * g.gemm_n() * g.gemm_k(), MIN_FLOPS_PER_THREAD);
}

}  // namespace

// Below, cpu::fill and cpu::matmul, not their raw:: dispatch points: the convolution has passed
// its own (core/dispatch.h), so --profile counts one conv2d op, not its pieces.

void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y) {
  const int64_t m = g.gemm_m(), n = g.gemm_n(), k = g.gemm_k();
  if (m == 0 || n == 0) return;
  if (k == 0) {  // no input channels: an empty sum
    cpu::fill(y, 0.0f);
    return;
  }
  if (pointwise(g)) {
    Tensor rows = y.view({m, n});
    cpu::matmul(x.view({m, k}), false, w.view({k, n}), false, rows, 1.0f, 0.0f);
    return;
  }
  const int team = conv_team(g);
  const Chunks chunks = plan_chunks(m, k, team);
  const Tensor workspace = Tensor::empty({team * chunks.rows * k}, DType::F32, Device::cpu());
  const float* in = x.data<float>();
  const float* filters = w.data<float>();
  float* out = y.data<float>();
#pragma omp parallel num_threads(team) if (parallel : team > 1)
  {
    float* patches = workspace.data<float>() + omp_get_thread_num() * chunks.rows * k;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < chunks.count; ++i) {
      const int64_t m0 = i * chunks.rows, m1 = std::min(m, m0 + chunks.rows);
      im2col_rows(g, in, m0, m1, patches);
      sgemm(false, false, m1 - m0, n, k, 1.0f, patches, k, filters, n, 0.0f, out + m0 * n, n);
    }
  }
}

void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w, Tensor& dx) {
  const int64_t m = g.gemm_m(), n = g.gemm_n(), k = g.gemm_k();
  if (dx.numel() == 0) return;
  if (m == 0 || n == 0) {  // no output (or no filters): nothing flows back
    cpu::fill(dx, 0.0f);
    return;
  }
  if (pointwise(g)) {
    Tensor rows = dx.view({m, k});
    cpu::matmul(dy.view({m, n}), false, w.view({k, n}), true, rows, 1.0f, 0.0f);
    return;
  }
  cpu::fill(dx, 0.0f);  // col2im adds
  const int team = conv_team(g);
  const int64_t per_image = g.out_h * g.out_w;
  const Chunks chunks = plan_chunks(per_image, k, 1);  // a thread walks one image at a time
  const Tensor workspace = Tensor::empty({team * chunks.rows * k}, DType::F32, Device::cpu());
  const float* grad_out = dy.data<float>();
  const float* filters = w.data<float>();
  float* grad_in = dx.data<float>();
#pragma omp parallel num_threads(team) if (parallel : team > 1)
  {
    float* dpatches = workspace.data<float>() + omp_get_thread_num() * chunks.rows * k;
#pragma omp for schedule(static)
    for (int64_t image = 0; image < g.batch; ++image) {
      for (int64_t i = 0; i < chunks.count; ++i) {
        const int64_t m0 = image * per_image + i * chunks.rows;
        const int64_t m1 = std::min((image + 1) * per_image, m0 + chunks.rows);
        // dpatches (rows x K) = dy[rows] (rows x N) @ w^T (N x K)
        sgemm(false, true, m1 - m0, k, n, 1.0f, grad_out + m0 * n, n, filters, n, 0.0f, dpatches,
              k);
        col2im_rows(g, dpatches, m0, m1, grad_in);
      }
    }
  }
}

void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                            Tensor& dw) {
  const int64_t m = g.gemm_m(), n = g.gemm_n(), k = g.gemm_k();
  if (dw.numel() == 0) return;
  if (m == 0) {  // an empty batch: an empty sum
    cpu::fill(dw, 0.0f);
    return;
  }
  if (pointwise(g)) {
    Tensor rows = dw.view({k, n});
    cpu::matmul(x.view({m, k}), true, dy.view({m, n}), false, rows, 1.0f, 0.0f);
    return;
  }
  const int team = conv_team(g);
  const Chunks chunks = plan_chunks(m, k, team);
  // Per thread: its patch buffer, and (threads 1..team-1) its partial dw; thread 0 sums into
  // dw itself. Partials are added in thread order: the same result on every run with the same
  // --threads.
  const int64_t patch_floats = chunks.rows * k, partial_floats = k * n;
  const Tensor workspace = Tensor::empty({team * patch_floats + (team - 1) * partial_floats},
                                         DType::F32, Device::cpu());
  float* partials = workspace.data<float>() + team * patch_floats;
  const float* in = x.data<float>();
  const float* grad_out = dy.data<float>();
  float* grad_w = dw.data<float>();
#pragma omp parallel num_threads(team) if (parallel : team > 1)
  {
    const int t = omp_get_thread_num();
    float* patches = workspace.data<float>() + t * patch_floats;
    float* acc = t == 0 ? grad_w : partials + (t - 1) * partial_floats;
    bool first = true;
#pragma omp for schedule(static) nowait
    for (int64_t i = 0; i < chunks.count; ++i) {
      const int64_t m0 = i * chunks.rows, m1 = std::min(m, m0 + chunks.rows);
      im2col_rows(g, in, m0, m1, patches);
      // acc (K x N) (+)= patches^T (K x rows) @ dy[rows] (rows x N)
      sgemm(true, false, k, n, m1 - m0, 1.0f, patches, k, grad_out + m0 * n, n, first ? 0.0f : 1.0f,
            acc, n);
      first = false;
    }
    if (first) std::fill(acc, acc + partial_floats, 0.0f);  // this thread got no chunk
#pragma omp barrier  // every partial is complete
#pragma omp for schedule(static)
    for (int64_t i = 0; i < partial_floats; ++i) {
      float total = grad_w[i];
      for (int p = 0; p + 1 < team; ++p) total += partials[p * partial_floats + i];
      grad_w[i] = total;
    }
  }
}

}  // namespace engine::cpu
