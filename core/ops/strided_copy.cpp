// strided_copy: the checks that keep both walks inside their tensors, and the dispatch
// point (core/ops/strided_copy.h).
#include "core/ops/strided_copy.h"

#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {

namespace {
// The last element a walk visits must lie inside `t`.
void check_walk(const char* what, const Tensor& t, const std::array<int64_t, 3>& extent,
                const Walk3d& walk) {
  int64_t last = walk.offset;
  for (size_t d = 0; d < 3; ++d) {
    ENGINE_CHECK(walk.stride[d] >= 0, "strided_copy: negative stride in the ", what, " walk");
    last += (extent[d] - 1) * walk.stride[d];
  }
  ENGINE_CHECK(walk.offset >= 0 && last < t.numel(), "strided_copy: the ", what,
               " walk reaches element ", last, " of a tensor of ", t.numel());
}
}  // namespace

namespace raw {

void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                  const Walk3d& from, const Walk3d& to) {
  ENGINE_CHECK(x.defined() && y.defined(), "strided_copy: undefined tensor");
  ENGINE_CHECK(x.dtype() == y.dtype(), "strided_copy: dtypes differ (", to_string(x.dtype()),
               " and ", to_string(y.dtype()), ")");
  ENGINE_CHECK(element_size(x.dtype()) == 4, "strided_copy: ", to_string(x.dtype()),
               " is not supported (the walks move 4-byte elements)");
  detail::check_same_device("strided_copy", x, y);
  ENGINE_CHECK(!x.same_storage(y), "strided_copy: source and destination share storage");
  for (int64_t e : extent) ENGINE_CHECK(e >= 0, "strided_copy: negative extent ", e);
  if (extent[0] == 0 || extent[1] == 0 || extent[2] == 0) return;
  check_walk("source", x, extent, from);
  check_walk("destination", y, extent, to);
  const double moved = 2.0 * 4.0 * static_cast<double>(extent[0] * extent[1] * extent[2]);
  dispatch(y, [&] { return OpCall{"strided_copy", dims(y), {0.0, moved}}; },
           [&] { cpu::strided_copy(x, y, extent, from, to); },
           [&] { ENGINE_CUDA(cuda::strided_copy(x, y, extent, from, to)); });
}

}  // namespace raw

}  // namespace engine
