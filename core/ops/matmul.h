// Matrix multiplication. Implementations: cpu/matmul.cpp (OpenBLAS sgemm), kernels/matmul.cu
// (the engine's kernels, chosen per shape from the ladder in kernels/matmul/), and
// kernels/vendor/cublas_gemm.cu (cuBLAS, under --device cudnn).
#pragma once
#include "core/tensor.h"

namespace engine {

// op(a) @ op(b) for 2-D tensors, op = transpose when the flag is set.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);

// The GPU's choice of kernel family (kernels/matmul.cu): from GPU_MATMUL_LARGE rows and columns
// of the output on, the large kernels (v7's GPU_MATMUL_LARGE_TILE-square tiles, each K slice at
// least GPU_MATMUL_LARGE_MIN_SLICE deep) win; below, the small-output kernel.
constexpr int GPU_MATMUL_LARGE = 512;
constexpr int GPU_MATMUL_LARGE_TILE = 128, GPU_MATMUL_LARGE_MIN_SLICE = 128;
// Whether an M x N output over depth K takes the small-output kernel on a GPU of `sms` SMs:
// either side under GPU_MATMUL_LARGE, or the large kernel's tiles too few to fill the SMs with
// K too shallow to split them.
bool gpu_matmul_small_output(int64_t M, int64_t N, int64_t K, int64_t sms);
// When a small output's product is long enough for its FMAs to matter: from this depth on
// (each block walks a long chain of K tiles: CIFAR's Dense(8192 -> 128) forward, Dogs vs
// Cats' Dense(18496 -> 64)), or from this many multiply-adds on however shallow (CIFAR's
// Dense(8192 -> 128) at batch 100 is 105 M each way, forward, dx and dW: ~5 us of FP32 FMA
// on an H100 at full rate, more than its loads).
constexpr int GPU_MATMUL_SMALL_TF32_MIN_K = 2048;
constexpr int64_t GPU_MATMUL_SMALL_TF32_MIN_FMA = int64_t{1} << 26;
// Whether the GPU computes an M x N x K product in FP32 even under --tf32: a small output
// shallower than GPU_MATMUL_SMALL_TF32_MIN_K and of fewer than GPU_MATMUL_SMALL_TF32_MIN_FMA
// multiply-adds, where the time is latency, not arithmetic, and FP32 is exact. The other
// small outputs and the large ones use TF32 tensor cores under --tf32.
bool gpu_matmul_stays_fp32(int64_t M, int64_t N, int64_t K, int64_t sms);
// Whether a small output of a few rows (64 to GPU_MATMUL_LARGE) takes the large TF32 kernel,
// v9's 128 x 128 tiles (split-K where K is deep), under --tf32 instead of small_splitk: where
// it has many columns (from 8 x GPU_MATMUL_LARGE) or is deep (from GPU_MATMUL_SMALL_TF32_MIN_K),
// on the tensor cores. The CNNs' Dense layers: their input gradients (100 x 8192 and 128 x 9216
// over 128), where small_splitk's 32-row tiles read B, the whole weight, once per 32 rows of C
// (4 times at M = 100: 17 MB) and v9's once (4 MB), and their forward passes (100 x 128 over
// 8192, 128 x 128 over 9216: 64 K slices, of 128 and 144, and split_k_reduce, where
// small_splitk's slices of 512 add themselves). kernel_bench, H200, 2026-11-28, small_splitk -> v9:
// dx 17.2 -> 9.2 and 19.8 -> 11.3 us, forward 17.4 -> 12.5 and 19.2 -> 14.5 us (cuBLAS TF32:
// 5.3, 6.4, 7.8, 8.3). The weight gradients, many rows and few columns (8192 x 128 over 100),
// stay: v9 took 11.0 us there against small_splitk's 9.9. Fewer than 64 rows would leave most
// of v9's 128-row tiles empty (Dogs vs Cats' 32: not measured). On Hopper the input and weight
// gradients go to the convolution kernels first (gpu_matmul_dense_backward_as_conv).
bool gpu_matmul_few_rows_tf32(int64_t M, int64_t N, int64_t K, int64_t sms);
// Whether a product is one of a wide Dense layer's backward products at a batch of 64 to
// GPU_MATMUL_LARGE rows, under --tf32: the input gradient dX = dY W^T (A B^T: M the batch, N
// the layer's inputs, from 8 x GPU_MATMUL_LARGE) or the weight gradient dW = X^T dY (A^T B: K
// the batch, M the inputs). Both are passes of a 1 x 1 convolution over 1 x 1 images (batch
// the batch, in_c the inputs, out_c the outputs, w = W as stored): dX its backward-data pass,
// dW its filter gradient, which on Hopper run the convolutions' TMA + wgmma kernels
// (kernels/conv/tma_wgmma.h) in tiles sized for the SMs, where they apply (kernels/matmul.cu).
// The CNNs' Dense(8192 -> 128) and Dense(9216 -> 128); kernel_bench, H200, 2026-11-28, against
// v9 and small_splitk: dX 9.2 -> 4.6 and 12.1 -> 5.3 us (cuBLAS TF32 5.3, 6.5), dW 9.9 -> 8.8
// and 11.2 -> 9.4 us (cuBLAS 5.5, 6.7). Their forward passes (A B, W stored (in, out)) are not
// such a pass without a copy of W or X transposed: they stay on v9.
bool gpu_matmul_dense_backward_as_conv(int64_t M, int64_t N, int64_t K, bool transpose_a, bool transpose_b,
                                       int64_t sms);

namespace raw {
// c = alpha * op(a) @ op(b) + beta * c, op(t) = t or t^T; a, b, c 2-D.
void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta);
}  // namespace raw

namespace cpu {
void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta);
}  // namespace cpu

namespace cuda {
void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta);
}  // namespace cuda

namespace vendor {
void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta);
}  // namespace vendor

}  // namespace engine
