// What the batched rules of core/ops/*.cpp (Node::vjp and Node::jvp) share. Every tensor here
// holds K directions stacked, (K, *shape), contiguous (core/autograd.h).
#pragma once
#include "core/autograd.h"
#include "core/ops/elementwise.h"
#include "core/ops/elementwise_jvp.h"

namespace engine::detail {

// out[k, i] = d(y[i]) * t[k, i]: an elementwise op's rule in either mode (see
// raw::elementwise_jvp; act None multiplies by y itself).
inline Tensor elementwise_rule(Activation act, const Tensor& y, const Tensor& t) {
  Tensor out = Tensor::empty(t.shape(), DType::F32, t.device());
  raw::elementwise_jvp(act, y, t, out);
  return out;
}

// a (op) b over whole stacks of the same shape.
inline Tensor stacked_binary(BinaryOp op, const Tensor& a, const Tensor& b) {
  Tensor out = Tensor::empty(a.shape(), DType::F32, a.device());
  raw::binary(op, a, b, out);
  return out;
}

}  // namespace engine::detail
