// Inverted dropout with a counter-based mask (core/rng.h, dropout_uniform): element i at
// training step s is kept when uniform(philox(key = seed, counter = (g / 4, s)))[g % 4] >=
// rate, g = first + i its place in the whole batch (core/ops/dropout.h). The same rule as cpu/dropout.cpp, bit for bit, so the CPU and the GPU drop the same
// elements. The step is read on the device: a replayed CUDA graph draws a new mask each step.
//
// Napkin math, seed-000 hidden layer (32, 128): 4,096 elements = 1,024 Philox calls of 10
// rounds (~20 integer ops each), ~0.2 MOP, plus 32 KB moved: launch-bound. Each thread
// handles the four elements of one Philox call, so no random number is computed twice.
#include "core/ops/dropout.h"
#include "core/rng.h"
#include "kernels/launch.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;

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
    const Philox4x32 r = philox4x32(static_cast<uint64_t>(block), s, seed);
    for (int w = 0; w < 4; ++w) {
      const int64_t i = block * 4 + w - static_cast<int64_t>(first);
      if (i >= 0 && i < n) out[i] = uniform_from_bits(r.v[w]) >= rate ? in[i] * keep_scale : 0.0f;
    }
  }
}

void launch_dropout(const Tensor& in, Tensor& out, float rate, uint64_t seed, const Tensor& step,
                    uint64_t first) {
  const int64_t n = out.numel();
  if (n == 0) return;
  dropout_kernel<<<blocks_for((n + 3) / 4 + 1, THREADS), THREADS, 0, stream()>>>(
      in.data<float>(), out.data<float>(), n, rate, seed, step.data<int32_t>(), first);
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
