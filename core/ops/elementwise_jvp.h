// The Jacobian's batched rule for elementwise ops (core/linearize.h, nn/jacobian.h).
// Implementations: cpu/elementwise_jvp.cpp, kernels/elementwise_jvp.cu.
#pragma once
#include "core/ops/activation.h"
#include "core/tensor.h"

namespace engine {

namespace raw {
// The forward-mode rule of an elementwise op, for K directions at once: t and out hold K
// stacked copies of y's shape, (K, *y.shape), and out[k, i] = d[i] * t[k, i] with
//   d = act'(x) written through the forward output y (relu: [y > 0], tanh: 1 - y^2,
//       sigmoid: y (1 - y)) for Relu, Tanh, Sigmoid;
//   d = y itself for None: the rule of a product, y holding the other factor.
// An elementwise op's Jacobian is diagonal, so the same call is its batched reverse-mode
// rule. out may be t (in place).
void elementwise_jvp(Activation act, const Tensor& y, const Tensor& t, Tensor& out);
}  // namespace raw

namespace cpu {
void elementwise_jvp(Activation act, const Tensor& y, const Tensor& t, Tensor& out);
}  // namespace cpu

namespace cuda {
void elementwise_jvp(Activation act, const Tensor& y, const Tensor& t, Tensor& out);
}  // namespace cuda

}  // namespace engine
