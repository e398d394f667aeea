// The ladder's index: every SGEMM version in the order a learner should read them, and the
// split-K reduction they share. The engine (kernels/matmul.cu) and apps/kernel_bench call
// versions through this table, so the shipping path and the bench run the same code.
#include <cstring>

#include "core/error.h"
#include "kernels/cuda_check.h"
#include "kernels/device_caps.h"
#include "kernels/matmul/gemm.h"
#include "kernels/vector_io.h"

namespace engine::cuda::gemm {

// Defined one per file, kernels/matmul/v<N>_<name>.cu.
// -- v1..v5 --
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
#if ENGINE_WITH_SM90A  // built for sm_90a only (kernels/CMakeLists.txt)
void v10_tf32_wgmma(const Gemm& g, cudaStream_t stream);
bool v10_tf32_wgmma_available();
void v11_tf32_tma(const Gemm& g, cudaStream_t stream);
bool v11_tf32_tma_available();
#endif

namespace {

// cp.async (v8, v9) and mma.sync TF32 (v9) exist from sm_80 on (device_caps.h).
bool has_cp_async() { return device_caps().kernels.cp_async; }
bool has_tf32_mma() { return device_caps().kernels.tf32_mma && device_caps().kernels.cp_async; }

const Version VERSIONS[] = {
    // -- v1..v5 --
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
     v8_async_bigtile, has_cp_async},
    {"v9_tf32_mma", "TF32 tensor cores (mma.sync m16n8k8), 3-stage cp.async pipeline",
     true, v9_tf32_mma, has_tf32_mma},
#if ENGINE_WITH_SM90A
    {"v10_tf32_wgmma",
     "Hopper wgmma (sm_90a): async 64 x 256 x 8 per warpgroup, one operand read from shared memory",
     true, v10_tf32_wgmma, v10_tf32_wgmma_available},
    {"v11_tf32_tma",
     "TMA producer warp, mbarrier ring, both wgmma operands from swizzled smem, B multicast to "
     "2-CTA clusters; A B^T only (others: v9)",
     true, v11_tf32_tma, v11_tf32_tma_available},
#endif
};

// C = alpha * sum over slices of partial + beta * C, the slices added in a fixed order (the
// same bits every run, no float atomics). A launch takes one sum or two (add_partials' pair:
// a filter gradient's dw and its bias gradient, one launch instead of two); its threads, or
// blocks, go to the first sum's elements, then to the second's. Two kernels, by the size of
// the first:
struct SumPair {
  PartialSums first, second;
  int64_t first_units;  // elements (split_k_reduce_kernel) or blocks (the narrow kernel) of the first
};
__device__ __forceinline__ int64_t elements(const PartialSums& s) { return int64_t{s.M} * s.N; }
__device__ __forceinline__ void store_sum(const PartialSums& s, int64_t i, float total) {
  float* c = s.C + i / s.N * s.ldc + i % s.N;
  *c = s.beta == 0.0f ? s.alpha * total : s.alpha * total + s.beta * *c;
}

// Wide C (>= WIDE_OUTPUTS elements, a deep layer's dw or a large matmul's C): one thread per
// element walks the slices in order; the grid fills the GPU and each thread's chain of loads
// is short next to the number of threads.
__device__ __forceinline__ void sum_element(const PartialSums& s, int64_t i) {
  const float* __restrict__ partial = s.partial;
  const int64_t mn = elements(s);
  float sum = 0.0f;
  for (int z = 0; z < s.slices; ++z) sum += partial[z * mn + i];
  store_sum(s, i, sum);
}
__global__ void split_k_reduce_kernel(const SumPair sums) {
  const int64_t total = sums.first_units + elements(sums.second);
  for (int64_t u = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; u < total;
       u += int64_t{gridDim.x} * blockDim.x) {
    // Each branch reads its sum's fields where they lie, in the kernel's parameters (picking a
    // struct by a runtime flag would copy both to local memory first).
    if (u < sums.first_units) sum_element(sums.first, u);
    else sum_element(sums.second, u - sums.first_units);
  }
}

// Narrow C: a bias gradient is 32-128 sums of ~264 chunk partials (kernels/activation.cu,
// kernels/conv/backward_filter_few_channels.cu) or of one partial per dy copy block (up to 800:
// kernels/conv/tma_wgmma_filter.cu), a first layer's dw 864 of 264, a Hopper filter
// gradient's dw 9,216-36,864 sums of 58-128 slices (kernels/conv/tma_wgmma_filter.cu).
// One thread per element would be one block whose threads each wait on 264 loads from L2 in
// turn, slow whatever the unrolling (measured: docs/HISTORY.md, 2026-11-24,
// the split_k_reduce row). Here a block takes 32 x W consecutive elements (lane l: elements
// W l ..) and its GROUPS warps split the slices: warp w adds slices w, w + GROUPS, ... in
// order, then warp 0 adds the groups' sums in order. The order is fixed, so the bits are.
// Two shapes, by the number of sums (ncu, H200, 2026-11-28: docs/results/cnn.md):
//   - fewer than BROAD_SUMS: W = 1 and 32 warps, many blocks of short chains: a bias
//     gradient's 264 chunks are 9 loads a thread (3.7 us; 8 warps of 16-byte lanes: 6.5);
//   - from BROAD_SUMS on: W = 4 (16-byte loads, where the partials allow) and 8 warps, a
//     quarter of the blocks, each of 256 threads: CIFAR's 16x16x64 -> 64 dw (36,864 sums of
//     58 slices) 12.1 -> 6.5 us, 16x16x32 -> 64's (18,432 of 100) 9.6 -> 7.2 us; its
//     32x32x32 -> 32 dw (9,216 of 128) was slower that way, 5.7 -> 7.2 us.
constexpr int64_t WIDE_OUTPUTS = 65536;
constexpr int64_t BROAD_SUMS = 16384;

template <int W, int GROUPS>
__device__ __forceinline__ void sum_block(const PartialSums& sum, int64_t block, float (&group_sums)[GROUPS][W][32]) {
  const int lane = static_cast<int>(threadIdx.x) % 32, group = static_cast<int>(threadIdx.x) / 32;
  const float* __restrict__ partial = sum.partial;
  const int64_t mn = elements(sum);
  const int64_t i = (block * 32 + lane) * W;  // this lane's first element
  float s[W] = {};
  if (i < mn) {
    // Several slices' loads out at once: a bias gradient summed in the Hopper dy copy has a
    // partial per copy block (800 for CIFAR's 32x32x32 -> 32: 25 slices a warp), and one by
    // one those were 25 round trips to L2 in a single block (ncu, H200: 12.7 us; 4.8 with 8
    // in flight). The sums still run in slice order.
    constexpr int UNROLL = W == 4 ? 4 : 8;
#pragma unroll(UNROLL)
    for (int z = group; z < sum.slices; z += GROUPS) {
      float v[W];
      load_floats<W>(partial + z * mn + i, v);
#pragma unroll
      for (int e = 0; e < W; ++e) s[e] += v[e];
    }
  }
#pragma unroll
  for (int e = 0; e < W; ++e) group_sums[group][e][lane] = s[e];
  __syncthreads();  // every group's sums are in shared memory before warp 0 adds them
  if (group != 0) return;
#pragma unroll
  for (int e = 0; e < W; ++e) {
    if (i + e >= mn) break;
    float total = 0.0f;
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) total += group_sums[g][e][lane];
    store_sum(sum, i + e, total);
  }
}
template <int W, int GROUPS>
__global__ void __launch_bounds__(GROUPS * 32) split_k_reduce_narrow_kernel(const SumPair sums) {
  __shared__ float group_sums[GROUPS][W][32];  // [w][e][lane]: a warp's accesses hit 32 banks
  if (blockIdx.x < sums.first_units) sum_block<W, GROUPS>(sums.first, blockIdx.x, group_sums);
  else sum_block<W, GROUPS>(sums.second, blockIdx.x - sums.first_units, group_sums);
}

// A chain of loads a lane longer than this costs more than the launch it would save: the
// second sum then gets a launch of its own (H200, 2026-11-29: a bias gradient of 576 copy
// blocks over 8 warps, 72 loads a lane, took 15.5 us inside the filter gradient's reduction
// against ~3 alone; 25 loads a lane, or 50 in one thread of the wide kernel, cost about what
// the launch does).
constexpr int MAX_RIDING_LOADS = 32;

}  // namespace

const Version* versions(int* count) {
  *count = static_cast<int>(sizeof VERSIONS / sizeof VERSIONS[0]);
  return VERSIONS;
}

const Version* find_version(const char* name) {
  for (const Version& v : VERSIONS) {
    if (std::strcmp(v.name, name) == 0) return &v;
  }
  return nullptr;
}

const Version& version_named(const char* name) {
  if (const Version* v = find_version(name)) return *v;
  throw Error(detail::concat("no matmul version named '", name, "'"));
}

// One launch for `first` and `second` (second.M = 0: none). The kernel is the one that suits
// the first sum; the second rides along where that kernel can take it (the 16-byte loads need
// its partials aligned) and gives each lane a chain of at most MAX_RIDING_LOADS, else it gets
// a launch of its own.
void add_partials(const PartialSums& first, const PartialSums& second, cudaStream_t stream) {
  const int64_t mn = int64_t{first.M} * first.N, mn2 = int64_t{second.M} * second.N;
  if (mn == 0) {
    if (mn2 > 0) add_partials(second, PartialSums{}, stream);
    return;
  }
  const bool wide = mn >= WIDE_OUTPUTS;
  const bool broad = !wide && mn >= BROAD_SUMS && mn % 4 == 0 && aligned16(first.partial);
  const int warps_a_sum = wide ? 1 : broad ? 8 : 32;  // the kernels' GROUPS
  if (mn2 > 0 && ((broad && (mn2 % 4 != 0 || !aligned16(second.partial))) ||
                  (second.slices + warps_a_sum - 1) / warps_a_sum > MAX_RIDING_LOADS)) {
    add_partials(first, PartialSums{}, stream);
    add_partials(second, PartialSums{}, stream);
    return;
  }
  if (wide) {
    const auto blocks = static_cast<unsigned>(std::min<int64_t>((mn + mn2 + 255) / 256, 65535));
    split_k_reduce_kernel<<<blocks, 256, 0, stream>>>(SumPair{first, second, mn});
  } else if (broad) {
    // Every slice's run of mn floats starts 16-byte aligned where the first does and mn % 4 == 0.
    const int64_t blocks = (mn + 127) / 128;
    split_k_reduce_narrow_kernel<4, 8><<<static_cast<unsigned>(blocks + (mn2 + 127) / 128), 8 * 32, 0, stream>>>(
        SumPair{first, second, blocks});
  } else {
    const int64_t blocks = (mn + 31) / 32;
    split_k_reduce_narrow_kernel<1, 32><<<static_cast<unsigned>(blocks + (mn2 + 31) / 32), 32 * 32, 0, stream>>>(
        SumPair{first, second, blocks});
  }
  CHECK_LAUNCH();
}

void split_k_reduce(const Gemm& g, int slices, cudaStream_t stream) {
  add_partials(PartialSums{g.partial, slices, g.M, g.N, g.C, g.ldc, g.alpha, g.beta},
               PartialSums{}, stream);
}

void add_partials(const float* partial, int slices, int rows, int cols, float* out, cudaStream_t stream) {
  add_partials(PartialSums{partial, slices, rows, cols, out, cols}, PartialSums{}, stream);
}

}  // namespace engine::cuda::gemm
