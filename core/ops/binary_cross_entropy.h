// Binary cross-entropy, from probabilities or (fused with the sigmoid) from logits.
// Implementations: cpu/binary_cross_entropy.cpp, kernels/binary_cross_entropy.cu.
#pragma once
#include "core/tensor.h"

namespace engine {

// Per element (take mean() for the batch loss): -(t log p + (1 - t) log(1 - p)), p clipped to
// [1e-7, 1 - 1e-7] like Keras.
Tensor binary_cross_entropy(const Tensor& p, const Tensor& target);
// The same loss from a sigmoid head's logits, fused with the sigmoid and numerically stable
// (raw::sigmoid_cross_entropy_forward): what training uses for a sigmoid head.
Tensor sigmoid_binary_cross_entropy(const Tensor& logits, const Tensor& target);

namespace raw {
// Binary cross-entropy of probabilities p against targets t in [0, 1], elementwise,
// with p clipped to [eps, 1 - eps] as Keras does (eps = 1e-7).
void binary_cross_entropy_forward(const Tensor& p, const Tensor& target, Tensor& loss);
void binary_cross_entropy_backward(const Tensor& p, const Tensor& target, const Tensor& dloss,
                                   Tensor& dp);
// The same loss from the logits z of a sigmoid head, fused and numerically stable:
//   loss = max(z, 0) - z t + log(1 + exp(-|z|))   (never exp of a large positive number)
//   dz   = dloss (sigmoid(z) - t)
// Unlike the clipped form above, the gradient never vanishes at a confidently wrong output.
void sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& target, Tensor& loss);
void sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& target,
                                    const Tensor& dloss, Tensor& dlogits);
}  // namespace raw

namespace cpu {
void binary_cross_entropy_forward(const Tensor& p, const Tensor& target, Tensor& loss);
void binary_cross_entropy_backward(const Tensor& p, const Tensor& target, const Tensor& dloss,
                                   Tensor& dp);
void sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& target, Tensor& loss);
void sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& target,
                                    const Tensor& dloss, Tensor& dlogits);
}  // namespace cpu

namespace cuda {
void binary_cross_entropy_forward(const Tensor& p, const Tensor& target, Tensor& loss);
void binary_cross_entropy_backward(const Tensor& p, const Tensor& target, const Tensor& dloss,
                                   Tensor& dp);
void sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& target, Tensor& loss);
void sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& target,
                                    const Tensor& dloss, Tensor& dlogits);
}  // namespace cuda

}  // namespace engine
