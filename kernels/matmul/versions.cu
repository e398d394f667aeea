// The ladder's index: every SGEMM version in the order a learner should read them, and the
// split-K reduction they share. The engine (kernels/matmul.cu) and apps/kernel_bench call
// versions through this table, so the shipping path and the bench run the same code.
#include <cstring>

#include "core/error.h"
#include "kernels/cuda_check.h"
#include "kernels/matmul/gemm.h"

namespace engine::cuda::matmul {

// Defined one per file, kernels/matmul/v<N>_<name>.cu.
// -- v1..v4 --
void v1_naive(const Gemm& g, cudaStream_t stream);
void v2_coalesced(const Gemm& g, cudaStream_t stream);
void v3_smem_tiling(const Gemm& g, cudaStream_t stream);
void v4_blocktile_1d(const Gemm& g, cudaStream_t stream);
void v5_blocktile_2d(const Gemm& g, cudaStream_t stream);
// -- v6.. --
void v6_vectorized(const Gemm& g, cudaStream_t stream);
void v7_warptile(const Gemm& g, cudaStream_t stream);
void v8_async_bigtile(const Gemm& g, cudaStream_t stream);
void v9_tf32_mma(const Gemm& g, cudaStream_t stream);
void v10_tf32_wgmma(const Gemm& g, cudaStream_t stream);
bool v10_tf32_wgmma_available();
void v11_tf32_tma(const Gemm& g, cudaStream_t stream);
bool v11_tf32_tma_available();

namespace {

const Version VERSIONS[] = {
    // -- v1..v4 --
    {"v1_naive", "one thread per output, threadIdx.x -> row: A loads and C stores strided",
     false, v1_naive},
    {"v2_coalesced", "threadIdx.x -> column: B loads and C stores coalesce, A is broadcast",
     false, v2_coalesced},
    {"v3_smem_tiling", "32 x 32 tiles staged in shared memory: each global load serves 32 threads",
     false, v3_smem_tiling},
    {"v4_blocktile_1d", "each thread computes a column of 8 outputs: 8 FMAs per 9 shared loads",
     false, v4_blocktile_1d},
    {"v5_blocktile_2d", "each thread computes a 4 x 4 block of outputs: 16 FMAs per 8 shared loads",
     false, v5_blocktile_2d},
    // -- v6.. --
    {"v6_vectorized", "128 x 128 tiles, 8 x 8 per thread, float4 loads: 16 FMAs per shared load",
     false, v6_vectorized},
    {"v7_warptile", "32 x 64 warp tiles, double buffering: the next tile loads during the FMAs",
     false, v7_warptile},
    {"v8_async_bigtile",
     "128 x 256 tiles, 16 x 8 per thread, 3-stage cp.async: 128 FMAs per 6 shared loads", false,
     v8_async_bigtile},
    {"v9_tf32_mma", "TF32 tensor cores (mma.sync m16n8k8), 3-stage cp.async pipeline",
     true, v9_tf32_mma},
    {"v10_tf32_wgmma",
     "Hopper wgmma (sm_90a): async 64 x 256 x 8 per warpgroup, one operand read from shared memory",
     true, v10_tf32_wgmma, v10_tf32_wgmma_available},
    {"v11_tf32_tma",
     "TMA producer warp, mbarrier ring, both wgmma operands from swizzled smem, B multicast to "
     "2-CTA clusters; A B^T only (others: v9)",
     true, v11_tf32_tma, v11_tf32_tma_available},
};

// C = alpha * sum over slices of partial + beta * C, slices added in order.
// Small outputs make this a chain of loads: a convolution's bias gradient is 32-128 columns of
// ~264 chunk sums (kernels/activation.cu), one block whose threads each add 264 values from L2.
// The adds must stay in order (the same bits every run), but the loads need not wait for them:
// unrolled by 16 (the compiler's default is 4: 13 against 37 global loads in the PTX), each
// thread has 16 loads from L2 in flight, and 264 loads take ~17 round trips instead of ~66
// (ncu, H100, 2026-11-23, before this change: 17 us for the 32-column case, under ncu's clocks).
__global__ void split_k_reduce_kernel(const float* __restrict__ partial, int slices, int M, int N,
                                      float alpha, float beta, float* __restrict__ C, int ldc) {
  const int64_t mn = int64_t{M} * N;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < mn;
       i += int64_t{gridDim.x} * blockDim.x) {
    float s = 0.0f;
#pragma unroll 16
    for (int z = 0; z < slices; ++z) s += partial[z * mn + i];
    float* c = C + (i / N) * ldc + i % N;
    *c = beta == 0.0f ? alpha * s : alpha * s + beta * *c;
  }
}

}  // namespace

const Version* versions(int* count) {
  *count = static_cast<int>(sizeof VERSIONS / sizeof VERSIONS[0]);
  return VERSIONS;
}

const Version& version_named(const char* name) {
  for (const Version& v : VERSIONS) {
    if (std::strcmp(v.name, name) == 0) return v;
  }
  throw Error(detail::concat("no matmul version named '", name, "'"));
}

void split_k_reduce(const Gemm& g, int slices, cudaStream_t stream) {
  const int64_t mn = int64_t{g.M} * g.N;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((mn + 255) / 256, 65535));
  split_k_reduce_kernel<<<blocks, 256, 0, stream>>>(g.partial, slices, g.M, g.N, g.alpha, g.beta,
                                                    g.C, g.ldc);
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::matmul
