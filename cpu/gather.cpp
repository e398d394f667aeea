// gather_rows on the CPU: copies whole rows as bytes, so it works for any dtype.
#include "core/ops/gather.h"

#include <cstring>

#include "core/error.h"
#include "cpu/cpu_device.h"

namespace engine::cpu {

void gather_rows(const Tensor& x, const Tensor& index, Tensor& y) {
  const int64_t rows = index.dim(0);
  const int64_t source_rows = x.dim(0);
  const size_t row_bytes = x.dim(0) == 0 ? 0 : x.nbytes() / static_cast<size_t>(source_rows);
  const int32_t* idx = index.data<int32_t>();
  for (int64_t r = 0; r < rows; ++r) {
    ENGINE_CHECK(idx[r] >= 0 && idx[r] < source_rows, "gather_rows: index ", idx[r],
                 " outside [0, ", source_rows, ")");
  }
  const char* in = static_cast<const char*>(x.raw_data());
  char* out = static_cast<char*>(y.raw_data());
  const int team = team_size(static_cast<int64_t>(rows * row_bytes), PARALLEL_GRAIN * 16);
#pragma omp parallel for num_threads(team) if (parallel : team > 1)
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(out + static_cast<size_t>(r) * row_bytes,
                in + static_cast<size_t>(idx[r]) * row_bytes, row_bytes);
  }
}

}  // namespace engine::cpu
