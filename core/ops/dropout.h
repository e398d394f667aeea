// Inverted dropout with a counter-based mask. Implementations: cpu/dropout.cpp,
// kernels/dropout.cu.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace engine {

// Where a dropout call's mask comes from: its own seed, and the training step read from an
// I32 scalar on x's device (raw::dropout_forward says why it lives there). Same seed and step,
// same mask.
struct DropoutStream {
  uint64_t seed = 0;
  Tensor step;
};
// Inverted dropout when training, identity otherwise.
Tensor dropout(const Tensor& x, float rate, bool training, const DropoutStream& stream);

namespace raw {
// Inverted dropout: element i is kept when uniform(philox(key = seed, counter = (i, s)))
// >= rate, s = step[0], and then scaled by 1 / (1 - rate). `step` is an I32 scalar on the
// device (the model's count of training steps): reading it there instead of taking a
// number from the host is what lets a replayed CUDA graph draw a fresh mask every step.
// The mask is recomputed in backward, never stored.
void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed, const Tensor& step);
void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed, const Tensor& step);
}  // namespace raw

namespace cpu {
void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed, const Tensor& step);
void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed, const Tensor& step);
}  // namespace cpu

namespace cuda {
void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed, const Tensor& step);
void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed, const Tensor& step);
}  // namespace cuda

}  // namespace engine
