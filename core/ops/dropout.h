// Inverted dropout with a counter-based mask. Implementations: cpu/dropout.cpp,
// kernels/dropout.cu.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace engine {

// Where a dropout call's mask comes from: its own seed, and the training step read from an
// I32 scalar on x's device (raw::dropout_forward says why it lives there). Same seed and step,
// same mask. `first_element`: where x starts in the batch the mask is drawn for, so that a
// rank of a data-parallel run, holding rows r*B .. r*B + B - 1 of the global batch, draws the
// same mask for them as one GPU running the whole batch (core/data_parallel.h).
struct DropoutStream {
  uint64_t seed = 0;
  Tensor step;
  uint64_t first_element = 0;
};
// Inverted dropout when training, identity otherwise.
Tensor dropout(const Tensor& x, float rate, bool training, const DropoutStream& stream);

namespace raw {
// Inverted dropout: element i is kept when uniform(philox(key = seed, counter = (g, s)))
// >= rate, g = first + i, s = step[0], and then scaled by 1 / (1 - rate). `step` is an I32
// scalar on the device (the model's count of training steps): reading it there instead of
// taking a number from the host is what lets a replayed CUDA graph draw a fresh mask every step.
// The mask is recomputed in backward, never stored.
void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed, const Tensor& step,
                     uint64_t first);
void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed,
                      const Tensor& step, uint64_t first);
}  // namespace raw

namespace cpu {
void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed, const Tensor& step,
                     uint64_t first);
void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed,
                      const Tensor& step, uint64_t first);
}  // namespace cpu

namespace cuda {
void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed, const Tensor& step,
                     uint64_t first);
void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed,
                      const Tensor& step, uint64_t first);
}  // namespace cuda

}  // namespace engine
