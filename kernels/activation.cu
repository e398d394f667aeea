// The Dense layer's epilogue and its gradient: y = act(x + bias), and dx = act'(y) * dy with
// dbias = column sums of dx in the same pass; plain activations; GELU; sum_rows.
//
// Napkin math, seed-000 hidden layer, (32, 128) floats:
//   forward: 4,096 elements, one add and one max each; reads x (16 KB) + bias, writes y
//   (16 KB): 32 KB moved, ~10 ns at 3 TB/s. A launch costs ~2-4 us: launch-bound by 100x,
//   which is why the bias and the activation are one kernel instead of two.
//   backward: reads y and dy, writes dx (48 KB) and 128 column sums.
// All are memory-bound (about 1 flop per 8 bytes) wherever they are not launch-bound.
//
// Convolutions use the same backward on (batch * height * width, channels): the MNIST CNN's
// first layer is (128 * 26 * 26, 32) = 86,528 rows of 32 columns, 22 MB to read and 11 MB to
// write, ~11 us at 3 TB/s. One block per 32 columns walking every row is a single block there,
// 86,528 / 8 dependent loads per thread, and took far longer than that (measured:
// docs/results/cnn.md, "What made the difference: one kernel was 75% of the step"). So tall
// inputs split their rows over blocks too (row chunks), each chunk's column sums land in a
// workspace, and gemm::split_k_reduce adds the chunks in order.
#include <algorithm>

#include "core/ops/activation.h"
#include "kernels/activation_math.cuh"
#include "kernels/launch.h"
#include "kernels/matmul/gemm.h"
#include "kernels/vector_io.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;

// x, y: (rows, cols); bias: (cols,) or null. Thread i takes elements i W .. i W + W - 1 (W = 4
// with cols % 4 == 0: one column group, 16-byte loads and stores), grid-stride, `groups` =
// elements / W. Index: int where the tensor allows, since each group's column is a modulo
// (kernels/vector_io.h). A convolution's output, (100 * 32 * 32, 32) floats, moves 26 MB, ~9 us
// at 3 TB/s; one thread per element with 64-bit indices took much longer (measured:
// docs/HISTORY.md, 2026-11-24, the bias + activation kernel).
template <Activation ACT, typename Index, int W>
__global__ void bias_activation_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                       float* __restrict__ y, Index groups, Index cols) {
  for (Index i = grid_first<Index>(); i < groups; i += grid_step<Index>()) {
    float v[W];
    load_floats<W>(x + i * W, v);
    if (bias) {
      const Index col = i * W % cols;
#pragma unroll
      for (int l = 0; l < W; ++l) v[l] += bias[col + l];
    }
#pragma unroll
    for (int l = 0; l < W; ++l) v[l] = activate<ACT>(v[l]);
    store_floats<W>(y + i * W, v);
  }
}

// Column tiles: block (32, 8) owns 32 columns and walks the rows of its chunk (blockIdx.y;
// all rows when there is one chunk), 8 at a time, so loads along a row are coalesced.
// dx = act'(y) * dy is written as it goes (skipped when dx is null: sum_rows), and each
// thread's partial column sum is reduced in shared memory, into dbias directly (one chunk)
// or into row chunk_sums[blockIdx.y] (several). Summation order is fixed by the shapes: the
// same result on every run.
constexpr int COL_TILE = 32;
constexpr int ROW_THREADS = 8;
constexpr int64_t MIN_CHUNK_ROWS = 256;  // 32 rows per thread: enough loads in flight to pay

template <Activation ACT>
__global__ void activation_backward_columns_kernel(const float* __restrict__ y,
                                                   const float* __restrict__ dy,
                                                   float* __restrict__ dx,
                                                   float* __restrict__ dbias,
                                                   float* __restrict__ chunk_sums, int64_t rows,
                                                   int64_t cols, int64_t chunk_rows) {
  __shared__ float partial[ROW_THREADS][COL_TILE];
  const int64_t col = blockIdx.x * int64_t{COL_TILE} + threadIdx.x;
  const int64_t first = blockIdx.y * chunk_rows;
  const int64_t end = first + chunk_rows < rows ? first + chunk_rows : rows;
  float sum = 0.0f;
  if (col < cols) {
    for (int64_t r = first + threadIdx.y; r < end; r += ROW_THREADS) {
      const int64_t i = r * cols + col;
      const float g = ACT == Activation::None ? dy[i] : derivative_from_output<ACT>(y[i]) * dy[i];
      if (dx) dx[i] = g;
      sum += g;
    }
  }
  if (dbias == nullptr) return;  // uniform across the block: no thread waits at the barrier
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();  // every row-group's partial is in shared memory
  if (threadIdx.y == 0 && col < cols) {
    float total = 0.0f;
    for (int k = 0; k < ROW_THREADS; ++k) total += partial[k][threadIdx.x];
    if (chunk_sums) {
      chunk_sums[blockIdx.y * cols + col] = total;
    } else {
      dbias[col] = total;
    }
  }
}

// Elementwise backward from the output: dx = act'(y) * dy.
template <Activation ACT>
__global__ void activation_backward_kernel(const float* __restrict__ y, const float* __restrict__ dy,
                                           float* __restrict__ dx, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    dx[i] = derivative_from_output<ACT>(y[i]) * dy[i];
  }
}

// GELU, y = x Phi(x), and dx = dy (Phi(x) + x phi(x)): one grid-stride pass each. erff and
// expf are a few dozen instructions, still far below the ~8 bytes per element a pass moves at
// 3 TB/s, so both stay memory-bound. The CPU computes in double (cpu/activation.cpp); these
// float versions differ from it by a few ulp.
__global__ void gelu_forward_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));  // 0.7071 = 1 / sqrt(2)
  }
}

__global__ void gelu_backward_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                     float* __restrict__ dx, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float v = x[i];
    const float cdf = 0.5f * (1.0f + erff(v * 0.70710678f));
    const float pdf = 0.39894228f * expf(-0.5f * v * v);  // 0.3989 = 1 / sqrt(2 pi)
    dx[i] = dy[i] * (cdf + v * pdf);
  }
}

void launch_bias_activation(Activation act, const Tensor& x, const float* bias, Tensor& y,
                            int64_t cols) {
  const int64_t n = y.numel();
  if (n == 0) return;
  // Groups of 4 stay in one row where there is a bias (cols % 4 == 0); without one, anywhere.
  const bool vec = (bias ? cols : n) % 4 == 0 && aligned16(x.data<float>()) && aligned16(y.data<float>());
  with_activation(act, "bias_activation_forward", [&](auto a) {
    launch_float_groups(n, vec, n < (int64_t{1} << 30), THREADS, [&](auto types, unsigned blocks, int64_t groups) {
      using Index = typename decltype(types)::first_type;
      constexpr int W = decltype(types)::second_type::value;
      bias_activation_kernel<decltype(a)::value, Index, W><<<blocks, THREADS, 0, stream()>>>(
          x.data<float>(), bias, y.data<float>(), static_cast<Index>(groups), static_cast<Index>(cols));
    });
  });
  CHECK_LAUNCH();
}

void launch_columns(Activation act, const float* y, const Tensor& dy, float* dx, float* dbias) {
  const int64_t rows = dy.dim(0), cols = dy.dim(1);
  if (cols == 0) return;
  const dim3 block(COL_TILE, ROW_THREADS);
  const int64_t col_tiles = (cols + COL_TILE - 1) / COL_TILE;
  // Row chunks: about two blocks per SM in all, none shorter than MIN_CHUNK_ROWS.
  const int64_t by_sms = (2 * multiprocessor_count() + col_tiles - 1) / col_tiles;
  const int64_t chunks = std::max<int64_t>(1, std::min(by_sms, rows / MIN_CHUNK_ROWS));
  const int64_t chunk_rows = (rows + chunks - 1) / chunks;
  Tensor chunk_sums;
  if (chunks > 1 && dbias) chunk_sums = Tensor::empty({chunks, cols}, DType::F32, dy.device());
  const dim3 grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(chunks));
  with_activation(act, "bias_activation_backward", [&](auto a) {
    activation_backward_columns_kernel<decltype(a)::value><<<grid, block, 0, stream()>>>(
        y, dy.data<float>(), dx, dbias, chunk_sums.defined() ? chunk_sums.data<float>() : nullptr,
        rows, cols, chunk_rows);
  });
  CHECK_LAUNCH();
  if (chunk_sums.defined()) {  // dbias = the chunks' sums added in order: a 1 x cols split-K
    gemm::add_partials(chunk_sums.data<float>(), static_cast<int>(chunks), 1, static_cast<int>(cols), dbias,
                       stream());
  }
}

}  // namespace

void bias_activation_forward(Activation act, const Tensor& x, const Tensor& bias, Tensor& y) {
  launch_bias_activation(act, x, bias.data<float>(), y, x.dim(1));
}

void bias_activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx,
                              Tensor& dbias) {
  ENGINE_CHECK(act != Activation::None, "bias_activation_backward: act None is sum_rows");
  launch_columns(act, y.data<float>(), dy, dx.data<float>(),
                 dbias.defined() ? dbias.data<float>() : nullptr);
}

void sum_rows(const Tensor& dy, Tensor& db) {
  launch_columns(Activation::None, nullptr, dy, nullptr, db.data<float>());
}

void activation_forward(Activation act, const Tensor& x, Tensor& y) {
  ENGINE_CHECK(act != Activation::None, "activation_forward: not an elementwise activation");
  launch_bias_activation(act, x, nullptr, y, 1);
}

void activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx) {
  ENGINE_CHECK(act != Activation::None, "activation_backward: not an elementwise activation");
  const int64_t n = dx.numel();
  if (n == 0) return;
  with_activation(act, "activation_backward", [&](auto a) {
    activation_backward_kernel<decltype(a)::value><<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
        y.data<float>(), dy.data<float>(), dx.data<float>(), n);
  });
  CHECK_LAUNCH();
}

void gelu_forward(const Tensor& x, Tensor& y) {
  const int64_t n = y.numel();
  if (n == 0) return;
  gelu_forward_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(x.data<float>(),
                                                                        y.data<float>(), n);
  CHECK_LAUNCH();
}

void gelu_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
  const int64_t n = dx.numel();
  if (n == 0) return;
  gelu_backward_kernel<<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
      x.data<float>(), dy.data<float>(), dx.data<float>(), n);
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
