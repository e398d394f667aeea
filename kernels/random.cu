// random_normal on the GPU: y[i] = mean + stddev * z_i, z_i from Box-Muller on the Philox
// stream `seed`, element i from counter block i / 4 (the rule: core/rng.h, box_muller4). The
// same code as cpu/random.cpp: the two implementations differ only where CUDA's logf (1 ulp),
// sincosf (2 ulp) and glibc's round differently.
//
// Napkin math, n = 10^8 (the seed-002 sweep's largest vector): 400 MB written, ~0.13 ms at
// 3 TB/s. Arithmetic: per four elements one Philox call (10 rounds, ~100 integer
// instructions) and two logf + sqrtf + sincosf (~40 instructions each), ~50 instructions
// per element, 5e9 in all: ~0.1-0.2 ms over 132 SMs. The two are of the same order, so the
// kernel runs near the write bandwidth only if every element's numbers are computed once:
// each thread handles the four elements of one Philox block and stores them as one float4.
#include "core/ops/random.h"
#include "core/rng.h"
#include "kernels/launch.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;

// VEC: y is 16-byte aligned, so block j's four elements are one float4 store (the last,
// partial block is written element by element). Without VEC (a view at an odd offset),
// every element is a scalar store.
template <bool VEC>
__global__ void random_normal_kernel(float* __restrict__ y, int64_t n, float mean, float stddev,
                                     uint64_t seed) {
  const int64_t blocks = (n + 3) / 4;
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < blocks;
       j += int64_t{gridDim.x} * blockDim.x) {
    const Normal4 z = box_muller4(philox4x32(static_cast<uint64_t>(j), 0, seed));
    float v[4];
    for (int w = 0; w < 4; ++w) v[w] = scale_normal(z.z[w], mean, stddev);
    if (VEC && 4 * j + 3 < n) {
      reinterpret_cast<float4*>(y)[j] = make_float4(v[0], v[1], v[2], v[3]);
    } else {
      for (int w = 0; w < 4; ++w) {
        if (4 * j + w < n) y[4 * j + w] = v[w];
      }
    }
  }
}

}  // namespace

void random_normal(Tensor& y, float mean, float stddev, uint64_t seed) {
  const int64_t n = y.numel();
  if (n == 0) return;
  float* out = y.data<float>();
  // Up to 65535 blocks of 256 threads, one Philox block each, and a grid-stride loop for the
  // rest (n = 10^8: ~1.5 blocks per thread): plenty of warps to hide the store latency.
  const unsigned grid = blocks_for((n + 3) / 4, THREADS);
  if (reinterpret_cast<uintptr_t>(out) % 16 == 0) {
    random_normal_kernel<true><<<grid, THREADS, 0, stream()>>>(out, n, mean, stddev, seed);
  } else {
    random_normal_kernel<false><<<grid, THREADS, 0, stream()>>>(out, n, mean, stddev, seed);
  }
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
