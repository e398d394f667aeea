// Inverted dropout with a counter-based mask: element i of the call with (seed, offset) is
// kept when philox_uniform(seed, offset + i) >= rate. Backward recomputes the same mask,
// so nothing is stored between the passes, and any thread count gives the same mask.
#include "core/rng.h"
#include "cpu/cpu_backend.h"

namespace engine::cpu {
namespace {

void apply_mask(const float* in, float* out, int64_t n, float rate, uint64_t seed,
                uint64_t offset) {
  const float keep_scale = 1.0f / (1.0f - rate);
#pragma omp parallel for if (n >= PARALLEL_GRAIN / 8) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const bool keep = philox_uniform(seed, offset + static_cast<uint64_t>(i)) >= rate;
    out[i] = keep ? in[i] * keep_scale : 0.0f;
  }
}

}  // namespace

void CpuBackend::dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed,
                                 uint64_t offset) {
  apply_mask(x.data<float>(), y.data<float>(), y.numel(), rate, seed, offset);
}

// d(x * mask * scale)/dx = mask * scale: the same transform applied to dy.
void CpuBackend::dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed,
                                  uint64_t offset) {
  apply_mask(dy.data<float>(), dx.data<float>(), dx.numel(), rate, seed, offset);
}

}  // namespace engine::cpu
