// Inverted dropout with a counter-based mask (core/rng.h, dropout_uniform): element i at
// training step s is kept when uniform(philox(key = seed, counter = (g / 4, s)))[g % 4] >=
// rate, g = first + i its place in the whole batch (core/ops/dropout.h). The same rule as cpu/dropout.cpp, bit for bit, so the CPU and the GPU drop the same
// elements. The step is read on the device: a replayed CUDA graph draws a new mask each step.
//
// Napkin math, seed-000 hidden layer (32, 128): 4,096 elements = 1,024 Philox calls of 10
// rounds (~20 integer ops each), ~0.2 MOP, plus 32 KB moved: launch-bound. CIFAR's flattened
// (100, 8192): 204,800 calls (~40 M integer ops, ~0.2 us on 132 SMs) and 6.6 MB moved, ~2 us
// from L2: what remains is each thread's latency, so a thread loads its four inputs first (one
// 16-byte load where the tensors allow) and computes the mask while they arrive.
// Each thread handles the four elements of one Philox call, so no random number is computed
// twice.
#include "core/ops/dropout.h"
#include "core/rng.h"
#include "kernels/launch.h"
#include "kernels/vector_io.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;

// VEC: the whole call is Philox blocks of four elements on 16-byte boundaries (first and n
// multiples of 4, in and out aligned), so a thread's four elements are one float4.
template <bool VEC>
__global__ void dropout_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t n,
                               float rate, uint64_t seed, const int32_t* __restrict__ step,
                               uint64_t first) {
  const float keep_scale = 1.0f / (1.0f - rate);
  const auto s = static_cast<uint32_t>(*step);
  const auto first_block = static_cast<int64_t>(first / 4);
  const int64_t blocks = static_cast<int64_t>((first + static_cast<uint64_t>(n) + 3) / 4) - first_block;
  for (int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; b < blocks;
       b += int64_t{gridDim.x} * blockDim.x) {
    const int64_t block = first_block + b;
    const int64_t i0 = block * 4 - static_cast<int64_t>(first);  // element of word 0 (< 0: before the call's)
    float v[4];
    if constexpr (VEC) {
      load_floats<4>(in + i0, v);
    } else {
      for (int w = 0; w < 4; ++w) v[w] = i0 + w >= 0 && i0 + w < n ? in[i0 + w] : 0.0f;
    }
    const Philox4x32 r = philox4x32(static_cast<uint64_t>(block), s, seed);
    for (int w = 0; w < 4; ++w) v[w] = uniform_from_bits(r.v[w]) >= rate ? v[w] * keep_scale : 0.0f;
    if constexpr (VEC) {
      store_floats<4>(out + i0, v);
    } else {
      for (int w = 0; w < 4; ++w)
        if (i0 + w >= 0 && i0 + w < n) out[i0 + w] = v[w];
    }
  }
}

void launch_dropout(const Tensor& in, Tensor& out, float rate, uint64_t seed, const Tensor& step,
                    uint64_t first) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const unsigned blocks = blocks_for((n + 3) / 4 + 1, THREADS);
  const float* x = in.data<float>();
  float* y = out.data<float>();
  if (first % 4 == 0 && n % 4 == 0 && aligned16(x) && aligned16(y)) {
    dropout_kernel<true><<<blocks, THREADS, 0, stream()>>>(x, y, n, rate, seed, step.data<int32_t>(), first);
  } else {
    dropout_kernel<false><<<blocks, THREADS, 0, stream()>>>(x, y, n, rate, seed, step.data<int32_t>(), first);
  }
  CHECK_LAUNCH();
}

}  // namespace

void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed, const Tensor& step,
                     uint64_t first) {
  launch_dropout(x, y, rate, seed, step, first);
}

// d(x * mask * scale)/dx = mask * scale: the same transform applied to dy.
void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed,
                      const Tensor& step, uint64_t first) {
  launch_dropout(dy, dx, rate, seed, step, first);
}

}  // namespace engine::cuda
