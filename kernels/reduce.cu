// Reductions (core/ops/reduce.h): sum (and so mean) to a device scalar, its backward (the
// scalar broadcast back over a tensor), and the count of correct predictions.
//
// Napkin math: the seed models reduce a batch's 32-128 per-sample losses, far below one
// launch's cost (~2-4 us), so sum is one block of 1024 threads with a fixed summation
// order (the same result every run); a 1M-element sum reads 4 MB, ~2 us of bandwidth on
// one SM's share... about 10 us here, acceptable for what it is used for (losses, tests).
// count_correct: one warp per row finds the argmax with shuffles; the block adds its
// rows' hits in shared memory and does one atomicAdd. Counts are whole numbers below 2^24,
// so float atomics add them exactly in any order. A sigmoid head's rows are counted at
// threshold 0.5 by one thread each. broadcast_scalar is an elementwise write (a fill whose
// value is read on the device): memory-bound above ~100k elements, launch-bound below.
#include "core/ops/reduce.h"
#include "kernels/launch.h"
#include "kernels/warp_reduce.cuh"

namespace engine::cuda {
namespace {

constexpr int SUM_THREADS = 1024;
constexpr int WARPS_PER_BLOCK = 8;
constexpr int BROADCAST_THREADS = 256;

__global__ void sum_kernel(const float* __restrict__ x, int64_t n, float scale, bool add_to_y,
                           float* __restrict__ y) {
  __shared__ float warp_totals[SUM_THREADS / 32];
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += SUM_THREADS) s += x[i];
  s = warp_sum(s);
  if (threadIdx.x % 32 == 0) warp_totals[threadIdx.x / 32] = s;
  __syncthreads();  // all warp totals written before warp 0 adds them
  if (threadIdx.x < 32) {
    float t = warp_totals[threadIdx.x];
    t = warp_sum(t);
    if (threadIdx.x == 0) y[0] = add_to_y ? y[0] + t * scale : t * scale;
  }
}

// y[i] = scale * s[0]: the scalar is read on the device, so no host round trip.
__global__ void broadcast_scalar_kernel(const float* __restrict__ s, float scale,
                                        float* __restrict__ y, int64_t n) {
  const float value = s[0] * scale;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    y[i] = value;
  }
}

// logits (rows, cols), labels (rows,); count[0] += rows whose first argmax is the label.
__global__ void count_correct_kernel(const float* __restrict__ logits,
                                     const int32_t* __restrict__ labels, int64_t rows,
                                     int64_t cols, float* __restrict__ count) {
  __shared__ int hits;
  if (threadIdx.x == 0) hits = 0;
  __syncthreads();  // hits is zero before any warp adds to it
  const int64_t r = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (r < rows) {
    const float* row = logits + r * cols;
    float best = -INFINITY;
    int64_t best_col = cols;  // "none yet": loses every tie-break below
    for (int64_t c = lane; c < cols; c += 32) {
      if (row[c] > best) {  // strict: a lane keeps its first maximum
        best = row[c];
        best_col = c;
      }
    }
    warp_first_maximum(best, best_col);
    if (lane == 0 && best_col == labels[r]) atomicAdd(&hits, 1);
  }
  __syncthreads();  // every warp's hit is in before the block reports
  if (threadIdx.x == 0 && hits > 0) atomicAdd(count, static_cast<float>(hits));
}

// logits (rows, 1) of a sigmoid head, targets (rows,) in {0, 1}: count[0] += rows whose
// prediction at threshold 0.5 (logit > 0) matches. One thread per row, one atomic per block.
__global__ void count_binary_correct_kernel(const float* __restrict__ logits,
                                            const float* __restrict__ targets, int64_t rows,
                                            float* __restrict__ count) {
  __shared__ int hits;
  if (threadIdx.x == 0) hits = 0;
  __syncthreads();  // hits is zero before any thread adds to it
  const int64_t r = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (r < rows && (logits[r] > 0.0f) == (targets[r] > 0.5f)) atomicAdd(&hits, 1);
  __syncthreads();  // every row's hit is in before the block reports
  if (threadIdx.x == 0 && hits > 0) atomicAdd(count, static_cast<float>(hits));
}

}  // namespace

void sum(const Tensor& x, Tensor& y, float scale, bool add_to_y) {
  sum_kernel<<<1, SUM_THREADS, 0, stream()>>>(x.data<float>(), x.numel(), scale, add_to_y,
                                              y.data<float>());
  CHECK_LAUNCH();
}

void broadcast_scalar(const Tensor& s, float scale, Tensor& y) {
  const int64_t n = y.numel();
  if (n == 0) return;
  broadcast_scalar_kernel<<<blocks_for(n, BROADCAST_THREADS), BROADCAST_THREADS, 0, stream()>>>(
      s.data<float>(), scale, y.data<float>(), n);
  CHECK_LAUNCH();
}

void count_correct(const Tensor& logits, const Tensor& labels, Tensor& count) {
  const int64_t rows = logits.dim(0), cols = logits.dim(1);
  if (rows == 0 || cols == 0) return;
  if (labels.dtype() == DType::F32) {
    constexpr int THREADS = 256;
    count_binary_correct_kernel<<<blocks_for(rows, THREADS), THREADS, 0, stream()>>>(
        logits.data<float>(), labels.data<float>(), rows, count.data<float>());
    CHECK_LAUNCH();
    return;
  }
  const auto grid = static_cast<unsigned>((rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK);
  count_correct_kernel<<<grid, 32 * WARPS_PER_BLOCK, 0, stream()>>>(
      logits.data<float>(), labels.data<int32_t>(), rows, cols, count.data<float>());
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
