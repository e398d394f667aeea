// strided_copy on the CPU: y[to(i, j, k)] = x[from(i, j, k)] over a 3-D index space, for any
// 4-byte dtype. How Jacobians build one-hot bases, transpose tangents into columns and scatter
// per-sample blocks onto a diagonal (nn/jacobian.cpp). The walks' bounds are checked by the
// dispatch point (raw::strided_copy).
#include "core/ops/strided_copy.h"

#include <cstdint>

#include "cpu/cpu_device.h"

namespace engine::cpu {

void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                  const Walk3d& from, const Walk3d& to) {
  const int64_t n0 = extent[0], n1 = extent[1], n2 = extent[2];
  if (n0 == 0 || n1 == 0 || n2 == 0) return;
  const auto* src = static_cast<const uint32_t*>(x.raw_data()) + from.offset;
  auto* dst = static_cast<uint32_t*>(y.raw_data()) + to.offset;
  const auto& fs = from.stride;
  const auto& ts = to.stride;
  const int team = team_size(n0 * n1 * n2, PARALLEL_GRAIN);
  // The two outer axes are split over the team; the inner one runs in order.
#pragma omp parallel for collapse(2) num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n0; ++i) {
    for (int64_t j = 0; j < n1; ++j) {
      const uint32_t* s = src + i * fs[0] + j * fs[1];
      uint32_t* d = dst + i * ts[0] + j * ts[1];
      for (int64_t k = 0; k < n2; ++k) d[k * ts[2]] = s[k * fs[2]];
    }
  }
}

}  // namespace engine::cpu
