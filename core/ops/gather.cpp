// gather_rows: how batches are cut from a dataset on its device (core/ops/gather.h).
#include "core/ops/gather.h"

#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {

Tensor gather_rows(const Tensor& x, const Tensor& index) {
  ENGINE_CHECK(x.defined() && x.ndim() >= 1, "gather_rows: x needs a row dimension");
  ENGINE_CHECK(index.defined() && index.dtype() == DType::I32 && index.ndim() == 1,
               "gather_rows: index must be a 1-D int32 tensor");
  detail::check_same_device("gather_rows", x, index);
  Shape shape = x.shape();
  shape[0] = index.dim(0);
  Tensor y = Tensor::empty(shape, x.dtype(), x.device());
  raw::gather_rows(x, index, y);
  return y;
}

namespace raw {

void gather_rows(const Tensor& x, const Tensor& index, Tensor& y) {
  dispatch(y,
           [&] { return OpCall{"gather_rows", dims(y), {0.0, 2.0 * tensor_bytes({&y}) + tensor_bytes({&index})}}; },
           [&] { cpu::gather_rows(x, index, y); },
           [&] { ENGINE_CUDA(cuda::gather_rows(x, index, y)); });
}

}  // namespace raw
}  // namespace engine
