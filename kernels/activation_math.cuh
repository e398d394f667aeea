// The elementwise activations on the device, shared by the kernels that apply them: the Dense
// layer's epilogue and its gradient (activation.cu) and the Hopper convolution's epilogue
// (conv/tma_wgmma.cu).
#pragma once
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

}  // namespace engine::cuda
