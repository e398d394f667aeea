// elementwise_jvp: the Jacobian's batched elementwise rule, its dispatch point and cost
// (core/ops/elementwise_jvp.h).
#include "core/ops/elementwise_jvp.h"

#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {
namespace raw {

void elementwise_jvp(Activation act, const Tensor& y, const Tensor& t, Tensor& out) {
  dispatch(out, [&] { return OpCall{"elementwise_jvp", dims(t), elementwise_cost(t.numel(), 2.0, 3)}; },
           [&] { cpu::elementwise_jvp(act, y, t, out); },
           [&] { ENGINE_CUDA(cuda::elementwise_jvp(act, y, t, out)); });
}

}  // namespace raw
}  // namespace engine
