// Reductions: the sum of a tensor and its backward, and the count of correct predictions.
// Implementations: cpu/reduce.cpp, kernels/reduce.cu.
#pragma once
#include "core/tensor.h"

namespace engine {

Tensor sum(const Tensor& x);   // -> scalar, shape ()
Tensor mean(const Tensor& x);  // -> scalar, shape ()

namespace raw {
// y[0] = scale * sum(x), or with add_to_y y[0] += scale * sum(x) (a running sum, without a
// second kernel to add); y has one element (stays on the device).
void sum(const Tensor& x, Tensor& y, float scale, bool add_to_y = false);
// y[i] = scale * s[0] for all i: the backward of sum/mean, without a host round trip.
void broadcast_scalar(const Tensor& s, float scale, Tensor& y);
// count[0] += number of rows n with argmax(logits[n, :]) == labels[n]  (count F32), labels
// I32 (N,). With labels F32 (N,) and logits (N, 1) (a sigmoid head's logits): the rows with
// (logits[n] > 0) == (labels[n] > 0.5), Keras' binary accuracy at threshold 0.5.
void count_correct(const Tensor& logits, const Tensor& labels, Tensor& count);
}  // namespace raw

namespace cpu {
void sum(const Tensor& x, Tensor& y, float scale, bool add_to_y);
void broadcast_scalar(const Tensor& s, float scale, Tensor& y);
void count_correct(const Tensor& logits, const Tensor& labels, Tensor& count);
}  // namespace cpu

namespace cuda {
void sum(const Tensor& x, Tensor& y, float scale, bool add_to_y);
void broadcast_scalar(const Tensor& s, float scale, Tensor& y);
void count_correct(const Tensor& logits, const Tensor& labels, Tensor& count);
}  // namespace cuda

}  // namespace engine
