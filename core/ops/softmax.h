// Row-wise softmax, and softmax fused with sparse categorical cross-entropy.
// Implementations: cpu/softmax.cpp, kernels/softmax.cu.
#pragma once
#include "core/tensor.h"

namespace engine {

Tensor softmax(const Tensor& x);      // (N, C) -> (N, C)
Tensor log_softmax(const Tensor& x);  // (N, C) -> (N, C)
// Per sample (take mean() for the batch loss): -log softmax(logits)[n, labels[n]] for logits
// (N, C), labels I32 (N,) in [0, C).
Tensor sparse_softmax_cross_entropy(const Tensor& logits, const Tensor& labels);

namespace raw {
// Row-wise softmax (or log-softmax) of x: (N, C); backward uses the output y.
void softmax_forward(const Tensor& x, Tensor& y, bool log);
void softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log);
// Fused softmax + sparse categorical cross-entropy: logits (N, C), labels I32 (N,).
// Writes probs (N, C) for the backward and loss (N,) = -log softmax(logits)[label].
void softmax_cross_entropy_forward(const Tensor& logits, const Tensor& labels, Tensor& probs,
                                   Tensor& loss);
// dlogits[n, c] = dloss[n] * (probs[n, c] - [c == label[n]])
void softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, const Tensor& dloss,
                                    Tensor& dlogits);
}  // namespace raw

namespace cpu {
void softmax_forward(const Tensor& x, Tensor& y, bool log);
void softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log);
void softmax_cross_entropy_forward(const Tensor& logits, const Tensor& labels, Tensor& probs,
                                   Tensor& loss);
void softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, const Tensor& dloss,
                                    Tensor& dlogits);
}  // namespace cpu

namespace cuda {
void softmax_forward(const Tensor& x, Tensor& y, bool log);
void softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log);
void softmax_cross_entropy_forward(const Tensor& logits, const Tensor& labels, Tensor& probs,
                                   Tensor& loss);
void softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, const Tensor& dloss,
                                    Tensor& dlogits);
}  // namespace cuda

}  // namespace engine
