// random_normal: its dispatch point and cost (core/ops/random.h).
#include "core/ops/random.h"

#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {
namespace raw {

void random_normal(Tensor& y, float mean, float stddev, uint64_t seed) {
  // Box-Muller: a Philox block, a log, a square root, a sine and a cosine per pair: ~20 FLOPs.
  dispatch(y, [&] { return OpCall{"random_normal", dims(y), elementwise_cost(y.numel(), 20.0, 1)}; },
           [&] { cpu::random_normal(y, mean, stddev, seed); },
           [&] { ENGINE_CUDA(cuda::random_normal(y, mean, stddev, seed)); });
}

}  // namespace raw
}  // namespace engine
