// random_normal on the CPU: y[i] = mean + stddev * z_i, z_i from Box-Muller on the Philox
// stream `seed`, element i from counter block i / 4 (the rule: core/rng.h, box_muller4). The
// same rule as kernels/random.cu, so both implementations draw the same numbers up to the
// rounding of logf, sinf and cosf.
//
// Napkin math, n = 10^8 (the seed-002 sweep's largest vector): 400 MB written, 2.5e7 Philox
// calls (~20 integer ops per element) and 5e7 logf + sincosf pairs (~40 flops per element
// in glibc's scalar code: nothing vectorises them without -ffast-math). About 6e9
// operations: compute-bound, ~0.2 s on 16 cores, against ~40 ms to write 400 MB.
#include "core/ops/random.h"

#include "core/rng.h"
#include "cpu/cpu_device.h"

namespace engine::cpu {

void random_normal(Tensor& y, float mean, float stddev, uint64_t seed) {
  float* out = y.data<float>();
  const int64_t n = y.numel();
  // Walk whole Philox blocks: block j gives the four numbers of elements 4j .. 4j+3, so no
  // Philox call or logarithm is computed twice and any thread count gives the same numbers.
  const int64_t blocks = (n + 3) / 4;
  // Each element costs ~60 operations, far more than an elementwise add: a smaller grain.
  const int team = team_size(n, PARALLEL_GRAIN / 8);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t block = 0; block < blocks; ++block) {
    const Normal4 z = box_muller4(philox4x32(static_cast<uint64_t>(block), 0, seed));
    for (int64_t w = 0; w < 4; ++w) {
      const int64_t i = block * 4 + w;
      if (i < n) out[i] = scale_normal(z.z[w], mean, stddev);
    }
  }
}

}  // namespace engine::cpu
