// The elementwise activations on the device, shared by the kernels that apply them: the Dense
// layer's epilogue and its gradient (activation.cu), the Hopper convolution's epilogue
// (conv/tma_wgmma.cu) and its filter gradient's dy copy (conv/tma_wgmma_filter.cu).
#pragma once
#include <type_traits>

#include "core/error.h"
#include "core/ops/activation.h"

namespace engine::cuda {

template <Activation ACT>
__device__ __forceinline__ float activate(float z) {
  if constexpr (ACT == Activation::Relu) return z > 0.0f ? z : 0.0f;
  if constexpr (ACT == Activation::Tanh) return tanhf(z);
  if constexpr (ACT == Activation::Sigmoid) return 1.0f / (1.0f + __expf(-z));
  return z;
}

// The same with the activation chosen at run time (an epilogue's few stores a thread, where
// a template argument per activation would multiply the kernel's instantiations).
__device__ __forceinline__ float activate(Activation act, float z) {
  switch (act) {
    case Activation::Relu: return activate<Activation::Relu>(z);
    case Activation::Tanh: return activate<Activation::Tanh>(z);
    case Activation::Sigmoid: return activate<Activation::Sigmoid>(z);
    default: return z;
  }
}

// d act / dz written in terms of the output y, which is all the backward keeps.
template <Activation ACT>
__device__ __forceinline__ float derivative_from_output(float y) {
  if constexpr (ACT == Activation::Relu) return y > 0.0f ? 1.0f : 0.0f;
  if constexpr (ACT == Activation::Tanh) return 1.0f - y * y;
  if constexpr (ACT == Activation::Sigmoid) return y * (1.0f - y);
  return 1.0f;
}

// Host side: turns a run-time activation into the template argument of a kernel launch,
// launch(std::integral_constant<Activation, ACT>{}); softmax, not elementwise, is refused.
template <typename F>
void with_activation(Activation act, const char* op, F&& launch) {
  switch (act) {
    case Activation::None: launch(std::integral_constant<Activation, Activation::None>{}); return;
    case Activation::Relu: launch(std::integral_constant<Activation, Activation::Relu>{}); return;
    case Activation::Tanh: launch(std::integral_constant<Activation, Activation::Tanh>{}); return;
    case Activation::Sigmoid:
      launch(std::integral_constant<Activation, Activation::Sigmoid>{});
      return;
    case Activation::Softmax: break;
  }
  throw Error(detail::concat(op, ": not an elementwise activation"));
}

}  // namespace engine::cuda
