// Normal random numbers on the device, from the Philox stream of core/rng.h.
// Implementations: cpu/random.cpp, kernels/random.cu.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace engine {

namespace raw {
// y[i] = mean + stddev * z_i, z_i standard normal: Box-Muller on the Philox stream `seed`,
// element i from counter block i / 4 (the rule and its bounds: core/rng.h, box_muller4).
// Both implementations compute the same numbers up to the rounding of their logf, sinf and
// cosf, whatever the thread count or grid. Independent streams need different seeds
// (derive_seed): the words are those of philox_uniform(seed, i).
void random_normal(Tensor& y, float mean, float stddev, uint64_t seed);
}  // namespace raw

namespace cpu {
void random_normal(Tensor& y, float mean, float stddev, uint64_t seed);
}  // namespace cpu

namespace cuda {
void random_normal(Tensor& y, float mean, float stddev, uint64_t seed);
}  // namespace cuda

}  // namespace engine
