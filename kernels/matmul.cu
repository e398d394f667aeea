// C = alpha * op(A) @ op(B) + beta * C, row-major, op = identity or transpose: every form the
// backward of a Dense layer needs, without copying a transposed operand.
//
// Napkin math, the seed-000 shapes (batch 32):
//   small forward  (32 x 784) @ (784 x 128):   6.4 MFLOP, 0.5 MB of operands
//   wide forward   (32 x 1000) @ (1000 x 1000): 64 MFLOP, 4.1 MB
//   wide dW        (1000 x 32) @ (32 x 1000):   64 MFLOP, 4.1 MB written
// At 51 TFLOP/s (cuBLAS FP32 on an H100) the wide GEMMs are ~1.3 us of arithmetic and ~1.4
// us of memory: balanced, small, and so limited by how many SMs get work. A (32 x 1000)
// output is only 16 tiles of 64 x 64 for 132 SMs, hence split-K below.
//
// The kernel: 64 x 64 output tiles, 256 threads, each thread computing a 4 x 4 block of
// outputs in registers (2-D register blocking: each value loaded from shared memory is used
// four times). Tiles of A and B, 16 deep in k, are staged in shared memory, loaded so that
// consecutive threads read consecutive addresses whichever way an operand is stored. Every
// load and store is bounds-checked, so any M, N, K is correct (not only tile multiples).
// The fast ladder (vector loads, warp tiling, tensor cores) is kernels/matmul/ (issue 4).
//
// Split-K: when the output has fewer tiles than the GPU has SMs and K is long, gridDim.z
// slices of K each write a partial product to a workspace, and a second kernel adds the
// slices in a fixed order (deterministic, unlike atomics) and applies alpha and beta.
#include <algorithm>

#include "kernels/cuda_backend.h"
#include "kernels/launch.h"

namespace engine::cuda {
namespace {

constexpr int BM = 64, BN = 64, BK = 16;
constexpr int THREADS = 256;  // 16 x 16 threads, 4 x 4 outputs each
constexpr int TM = 4, TN = 4;

// One slice of K ([k_begin, k_end)) of the product. Element (m, k) of op(A) is at
// A[m * lda + k] when A is stored (M, K), at A[k * lda + m] when stored transposed (K, M).
template <bool TA, bool TB>
__global__ void __launch_bounds__(THREADS)
    sgemm_tiled_kernel(int M, int N, int K, int k_per_slice, float alpha, const float* __restrict__ A,
                       int lda, const float* __restrict__ B, int ldb, float beta,
                       float* __restrict__ C, float* __restrict__ partial) {
  // As[k][m], Bs[k][n]: the inner loop reads a row of each, broadcast or consecutive.
  __shared__ float As[BK][BM + 4];  // +4: the transposing store of A spreads over banks
  __shared__ float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int k_begin = blockIdx.z * k_per_slice;
  const int k_end = min(K, k_begin + k_per_slice);

  float acc[TM][TN] = {};
  for (int k0 = k_begin; k0 < k_end; k0 += BK) {
    // Each thread stages 4 elements of the A tile and 4 of the B tile (64 x 16 each).
    for (int i = 0; i < BM * BK / THREADS; ++i) {
      const int l = tid + i * THREADS;
      // Consecutive threads walk the operand's contiguous dimension: coalesced loads.
      const int am = TA ? l % BM : l / BK, ak = TA ? l / BM : l % BK;
      const int gm = m0 + am, gk = k0 + ak;
      As[ak][am] = gm < M && gk < k_end ? (TA ? A[int64_t{gk} * lda + gm] : A[int64_t{gm} * lda + gk]) : 0.0f;
      const int bn = TB ? l / BK : l % BN, bk = TB ? l % BK : l / BN;
      const int gn = n0 + bn, gk2 = k0 + bk;
      Bs[bk][bn] = gn < N && gk2 < k_end ? (TB ? B[int64_t{gn} * ldb + gk2] : B[int64_t{gk2} * ldb + gn]) : 0.0f;
    }
    __syncthreads();  // the tiles are complete before anyone multiplies
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
      // Rows ty, ty+16, ...: a warp's two ty values broadcast; columns tx, tx+16, ...:
      // consecutive lanes read consecutive banks.
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[k][ty + 16 * i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx + 16 * j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + ty + 16 * i;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + tx + 16 * j;
      if (n >= N) continue;
      const int64_t at = int64_t{m} * N + n;
      if (partial) {
        partial[int64_t{blockIdx.z} * M * N + at] = acc[i][j];
      } else {
        C[at] = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * C[at];
      }
    }
  }
}

// C = alpha * sum over slices of partial + beta * C, slices added in order.
__global__ void split_k_reduce_kernel(const float* __restrict__ partial, int slices, int64_t mn,
                                      float alpha, float beta, float* __restrict__ C) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < mn;
       i += int64_t{gridDim.x} * blockDim.x) {
    float s = 0.0f;
    for (int z = 0; z < slices; ++z) s += partial[z * mn + i];
    C[i] = beta == 0.0f ? alpha * s : alpha * s + beta * C[i];
  }
}

int multiprocessor_count() {
  static const int count = [] {
    int device = 0, sms = 0;
    CHECK_CUDA(cudaGetDevice(&device));
    CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
  }();
  return count;
}

// How many slices of K: enough to give every SM a block, each slice at least 32 deep.
// Short slices matter even when SMs are not short: a block walks its K tiles one after the
// other, each waiting ~1 us for global memory, so a lone (32 x 10 x 128) block took 15 us
// (ncu, H200, 2026-11-22) where four slices of 32 take a quarter of the chain.
int split_k_slices(int M, int N, int K) {
  const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
  const int by_sms = (multiprocessor_count() + tiles - 1) / tiles;
  const int by_depth = K / 32;
  return std::max(1, std::min({by_sms, by_depth, 16}));
}

}  // namespace

void CudaBackend::matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b,
                         Tensor& c, float alpha, float beta) {
  const int64_t M = c.dim(0), N = c.dim(1);
  const int64_t K = transpose_a ? a.dim(0) : a.dim(1);
  ENGINE_CHECK(M < (int64_t{1} << 31) && N < (int64_t{1} << 31) && K < (int64_t{1} << 31),
               "matmul: dimensions beyond 2^31 are not supported");
  if (M == 0 || N == 0) return;
  if (K == 0) {  // an empty sum: C = beta * C
    axpby(0.0f, c, beta, c);
    return;
  }
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  const int lda = static_cast<int>(a.dim(1)), ldb = static_cast<int>(b.dim(1));
  const int slices = split_k_slices(m, n, k);
  const int k_per_slice = ((k + slices - 1) / slices + BK - 1) / BK * BK;
  const int used_slices = (k + k_per_slice - 1) / k_per_slice;
  Tensor workspace;
  if (used_slices > 1) workspace = Tensor::empty({used_slices, M, N}, DType::F32, device());
  float* partial = used_slices > 1 ? workspace.data<float>() : nullptr;

  const dim3 grid(static_cast<unsigned>((n + BN - 1) / BN), static_cast<unsigned>((m + BM - 1) / BM),
                  static_cast<unsigned>(used_slices));
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* pc = c.data<float>();
  if (!transpose_a && !transpose_b) {
    sgemm_tiled_kernel<false, false><<<grid, THREADS, 0, stream()>>>(m, n, k, k_per_slice, alpha, pa, lda, pb, ldb, beta, pc, partial);
  } else if (!transpose_a && transpose_b) {
    sgemm_tiled_kernel<false, true><<<grid, THREADS, 0, stream()>>>(m, n, k, k_per_slice, alpha, pa, lda, pb, ldb, beta, pc, partial);
  } else if (transpose_a && !transpose_b) {
    sgemm_tiled_kernel<true, false><<<grid, THREADS, 0, stream()>>>(m, n, k, k_per_slice, alpha, pa, lda, pb, ldb, beta, pc, partial);
  } else {
    sgemm_tiled_kernel<true, true><<<grid, THREADS, 0, stream()>>>(m, n, k, k_per_slice, alpha, pa, lda, pb, ldb, beta, pc, partial);
  }
  CHECK_LAUNCH();
  if (partial) {
    const int64_t mn = M * N;
    split_k_reduce_kernel<<<blocks_for(mn, 256), 256, 0, stream()>>>(partial, used_slices, mn,
                                                                     alpha, beta, pc);
    CHECK_LAUNCH();
  }
}

}  // namespace engine::cuda
