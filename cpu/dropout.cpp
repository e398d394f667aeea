// Inverted dropout with a counter-based mask: element i of the call with (seed, step s) and
// first element f is kept when dropout_uniform(seed, s, f + i) >= rate (core/rng.h). Backward recomputes the same
// mask, so nothing is stored between the passes, and any thread count gives the same mask.
//
// Cost: one Philox call (10 rounds of two 32x32->64-bit multiplies) serves four elements,
// ~20 integer ops per element: compute-bound on the CPU, hence the vector clones.
#include "core/ops/dropout.h"

#include "core/rng.h"
#include "cpu/cpu_device.h"
#include "cpu/simd.h"

namespace engine::cpu {
namespace {

ENGINE_VECTOR_CLONES
void apply_mask(const float* in, float* out, int64_t n, float rate, uint64_t seed,
                uint32_t step, uint64_t first) {
  const float keep_scale = 1.0f / (1.0f - rate);
  // Walk whole Philox blocks: block j holds the numbers of elements 4j .. 4j+3, counted from
  // the start of the batch (element g = first + i).
  const auto first_block = static_cast<int64_t>(first / 4);
  const int64_t blocks = static_cast<int64_t>((first + static_cast<uint64_t>(n) + 3) / 4) - first_block;
  const int team = team_size(n, PARALLEL_GRAIN / 8);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t block = first_block + b;
    const Philox4x32 r = philox4x32(static_cast<uint64_t>(block), step, seed);
    for (int64_t w = 0; w < 4; ++w) {
      const int64_t i = block * 4 + w - static_cast<int64_t>(first);
      if (i < 0 || i >= n) continue;
      const bool keep = uniform_from_bits(r.v[w]) >= rate;
      out[i] = keep ? in[i] * keep_scale : 0.0f;
    }
  }
}

}  // namespace

void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed, const Tensor& step,
                     uint64_t first) {
  apply_mask(x.data<float>(), y.data<float>(), y.numel(), rate, seed,
             static_cast<uint32_t>(step.data<int32_t>()[0]), first);
}

// d(x * mask * scale)/dx = mask * scale: the same transform applied to dy.
void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed,
                      const Tensor& step, uint64_t first) {
  apply_mask(dy.data<float>(), dx.data<float>(), dx.numel(), rate, seed,
             static_cast<uint32_t>(step.data<int32_t>()[0]), first);
}

}  // namespace engine::cpu
