// Row-wise softmax / log-softmax and the fused softmax + sparse cross-entropy.
//
// Napkin math, seed-000 head: logits (32, 10): 320 elements, ~3 exps each row... a few
// hundred nanoseconds of work behind a ~2-4 us launch. One warp per row: the row's max and
// sum are reduced with warp shuffles (no shared memory, no __syncthreads), and for the
// seed models' 10 classes one pass of 32 lanes covers the row. Wide rows loop over the
// columns 32 at a time, so any C works.
//
// Numerics: every row subtracts its max before exp(), so no logit overflows; the loss is
// log-sum-exp minus the label's logit, never log(p) of a rounded p.
// A label outside [0, C) cannot throw from a kernel: its loss is NaN (cpu/softmax.cpp
// throws), which the running loss then shows; datasets are checked when they are loaded.
#include <cmath>

#include "core/ops/softmax.h"
#include "kernels/launch.h"
#include "kernels/warp_reduce.cuh"

namespace engine::cuda {
namespace {

constexpr int WARPS_PER_BLOCK = 4;
constexpr int THREADS = 32 * WARPS_PER_BLOCK;

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// max + log(sum(exp(row - max))) of one row, the same value in every lane.
__device__ __forceinline__ float row_log_sum_exp(const float* row, int64_t cols, int lane) {
  float max = -INFINITY;
  for (int64_t c = lane; c < cols; c += 32) max = fmaxf(max, row[c]);
  max = warp_max(max);
  float total = 0.0f;
  for (int64_t c = lane; c < cols; c += 32) total += expf(row[c] - max);
  return max + logf(warp_sum(total));
}

// x, y: (rows, cols). Warp w of the grid owns row w.
__global__ void softmax_forward_kernel(const float* __restrict__ x, float* __restrict__ y,
                                       int64_t rows, int64_t cols, bool log) {
  const int64_t r = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;  // whole warps leave together: the shuffles below stay full-warp
  const float* row = x + r * cols;
  const float lse = row_log_sum_exp(row, cols, lane);
  for (int64_t c = lane; c < cols; c += 32) {
    const float log_p = row[c] - lse;
    y[r * cols + c] = log ? log_p : expf(log_p);
  }
}

// softmax:     dx = y * (dy - sum(dy * y))
// log-softmax: dx = dy - exp(y) * sum(dy)
__global__ void softmax_backward_kernel(const float* __restrict__ y, const float* __restrict__ dy,
                                        float* __restrict__ dx, int64_t rows, int64_t cols,
                                        bool log) {
  const int64_t r = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const float* yr = y + r * cols;
  const float* gr = dy + r * cols;
  float partial = 0.0f;
  for (int64_t c = lane; c < cols; c += 32) partial += log ? gr[c] : gr[c] * yr[c];
  const float total = warp_sum(partial);
  for (int64_t c = lane; c < cols; c += 32) {
    dx[r * cols + c] = log ? gr[c] - expf(yr[c]) * total : yr[c] * (gr[c] - total);
  }
}

// probs = softmax(logits) (kept for the backward), loss[r] = lse - logits[r, label[r]].
__global__ void softmax_cross_entropy_kernel(const float* __restrict__ logits,
                                             const int32_t* __restrict__ labels,
                                             float* __restrict__ probs, float* __restrict__ loss,
                                             int64_t rows, int64_t cols) {
  const int64_t r = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const float* row = logits + r * cols;
  const float lse = row_log_sum_exp(row, cols, lane);
  for (int64_t c = lane; c < cols; c += 32) probs[r * cols + c] = expf(row[c] - lse);
  if (lane == 0) {
    const int32_t label = labels[r];
    loss[r] = label >= 0 && label < cols ? lse - row[label] : NAN;
  }
}

// dlogits[r, c] = dloss[r] * (probs[r, c] - [c == label[r]]); one thread per element.
__global__ void softmax_cross_entropy_backward_kernel(const float* __restrict__ probs,
                                                      const int32_t* __restrict__ labels,
                                                      const float* __restrict__ dloss,
                                                      float* __restrict__ dlogits, int64_t rows,
                                                      int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / cols, c = i - r * cols;
    dlogits[i] = dloss[r] * (probs[i] - (c == labels[r] ? 1.0f : 0.0f));
  }
}

unsigned row_blocks(int64_t rows) {
  return static_cast<unsigned>((rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK);
}

}  // namespace

void softmax_forward(const Tensor& x, Tensor& y, bool log) {
  const int64_t rows = x.dim(0), cols = x.dim(1);
  if (rows == 0 || cols == 0) return;
  softmax_forward_kernel<<<row_blocks(rows), THREADS, 0, stream()>>>(x.data<float>(),
                                                                      y.data<float>(), rows, cols, log);
  CHECK_LAUNCH();
}

void softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log) {
  const int64_t rows = y.dim(0), cols = y.dim(1);
  if (rows == 0 || cols == 0) return;
  softmax_backward_kernel<<<row_blocks(rows), THREADS, 0, stream()>>>(
      y.data<float>(), dy.data<float>(), dx.data<float>(), rows, cols, log);
  CHECK_LAUNCH();
}

void softmax_cross_entropy_forward(const Tensor& logits, const Tensor& labels, Tensor& probs,
                                   Tensor& loss) {
  const int64_t rows = logits.dim(0), cols = logits.dim(1);
  if (rows == 0 || cols == 0) return;
  softmax_cross_entropy_kernel<<<row_blocks(rows), THREADS, 0, stream()>>>(
      logits.data<float>(), labels.data<int32_t>(), probs.data<float>(), loss.data<float>(), rows,
      cols);
  CHECK_LAUNCH();
}

void softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, const Tensor& dloss,
                                    Tensor& dlogits) {
  const int64_t rows = probs.dim(0), cols = probs.dim(1);
  if (rows == 0 || cols == 0) return;
  softmax_cross_entropy_backward_kernel<<<blocks_for(rows * cols, 256), 256, 0, stream()>>>(
      probs.data<float>(), labels.data<int32_t>(), dloss.data<float>(), dlogits.data<float>(), rows,
      cols);
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
