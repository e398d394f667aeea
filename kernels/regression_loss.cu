// Mean squared and mean absolute error per sample (cpu/regression_loss.cpp is the reference):
// pred and target (N, F), or (N,) with F = 1; loss (N,); d = pred - target.
//   forward   loss[n] = (1/F) sum_f d^2   (MAE: |d|)               one warp per row
//   backward  dpred[n, f] = dloss[n] 2 d / F   (MAE: sign(d) / F)   one thread per element
//
// Napkin math: both passes do ~3 FLOPs per element and read pred and target (8 bytes an
// element): memory-bound at any size, and at the sizes regression heads have, launch-bound.
// A (32, 1) head is 256 bytes in and 128 out, nanoseconds of traffic behind a ~2-4 us
// launch; even (1M, 16) is 128 MB in, ~40 us at an H100's ~3 TB/s. One warp per row keeps the
// forward right for any F (the row's sum is reduced with warp shuffles, as kernels/softmax.cu
// does); at F = 1, 31 lanes of each warp idle, which costs nothing a launch-bound op would
// notice. The backward needs no sum, so it is a plain grid-stride loop over N F elements.
//
// Numerics: the forward sums F non-negative terms in float, so its rounding error is at most
// ~F U of the loss itself (no cancellation); the CPU sums in double. The backward divides by
// F rather than multiplying by a rounded 1/F: for MAE, dloss sign(d) / F is then one correctly
// rounded division, the same bits as the CPU's.
#include "core/ops/regression_loss.h"
#include "kernels/launch.h"
#include "kernels/warp_reduce.cuh"

namespace engine::cuda {
namespace {

constexpr int WARPS_PER_BLOCK = 4;
constexpr int ROW_THREADS = 32 * WARPS_PER_BLOCK;
constexpr int THREADS = 256;

// loss[r] = (1/cols) sum_c d^2 (SQUARED) or |d|, d = pred[r, c] - target[r, c]. Warp w of the
// grid owns row w.
template <bool SQUARED>
__global__ void row_mean_error_kernel(const float* __restrict__ pred,
                                      const float* __restrict__ target, float* __restrict__ loss,
                                      int64_t rows, int64_t cols) {
  const int64_t r = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;  // whole warps leave together: the shuffles below stay full-warp
  const float* p = pred + r * cols;
  const float* t = target + r * cols;
  float partial = 0.0f;
  for (int64_t c = lane; c < cols; c += 32) {
    const float d = p[c] - t[c];
    partial += SQUARED ? d * d : fabsf(d);
  }
  const float total = warp_sum(partial);
  if (lane == 0) loss[r] = total / static_cast<float>(cols);
}

// dpred[i] = dloss[row] * 2 d / cols (SQUARED) or dloss[row] * sign(d) / cols, 0 where d = 0.
template <bool SQUARED>
__global__ void row_mean_error_backward_kernel(const float* __restrict__ pred,
                                               const float* __restrict__ target,
                                               const float* __restrict__ dloss,
                                               float* __restrict__ dpred, int64_t rows,
                                               int64_t cols) {
  const int64_t n = rows * cols;
  const float outputs = static_cast<float>(cols);
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float d = pred[i] - target[i];
    const float slope = SQUARED ? 2.0f * d : (d > 0.0f ? 1.0f : (d < 0.0f ? -1.0f : 0.0f));
    dpred[i] = dloss[i / cols] * slope / outputs;
  }
}

unsigned row_blocks(int64_t rows) {
  return static_cast<unsigned>((rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK);
}

template <bool SQUARED>
void forward(const Tensor& pred, const Tensor& target, Tensor& loss) {
  const int64_t rows = loss.numel();
  if (rows == 0) return;
  const int64_t cols = pred.numel() / rows;
  row_mean_error_kernel<SQUARED><<<row_blocks(rows), ROW_THREADS, 0, stream()>>>(
      pred.data<float>(), target.data<float>(), loss.data<float>(), rows, cols);
  CHECK_LAUNCH();
}

template <bool SQUARED>
void backward(const Tensor& pred, const Tensor& target, const Tensor& dloss, Tensor& dpred) {
  const int64_t rows = dloss.numel();
  if (rows == 0 || pred.numel() == 0) return;
  const int64_t cols = pred.numel() / rows;
  const int64_t n = rows * cols;
  row_mean_error_backward_kernel<SQUARED><<<blocks_for(n, THREADS), THREADS, 0, stream()>>>(
      pred.data<float>(), target.data<float>(), dloss.data<float>(), dpred.data<float>(), rows,
      cols);
  CHECK_LAUNCH();
}

}  // namespace

void mean_squared_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss) {
  forward<true>(pred, target, loss);
}

void mean_squared_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                 Tensor& dpred) {
  backward<true>(pred, target, dloss, dpred);
}

void mean_absolute_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss) {
  forward<false>(pred, target, loss);
}

void mean_absolute_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                  Tensor& dpred) {
  backward<false>(pred, target, dloss, dpred);
}

}  // namespace engine::cuda
