// Picking rows by index: how batches are cut from a dataset on its device.
// Implementations: cpu/gather.cpp, kernels/gather.cu.
#pragma once
#include "core/tensor.h"

namespace engine {

// Rows of x picked by index (I32), into a new tensor. Not differentiable.
Tensor gather_rows(const Tensor& x, const Tensor& index);

namespace raw {
// y[i, ...] = x[index[i], ...]; any dtype; index I32 (B,).
void gather_rows(const Tensor& x, const Tensor& index, Tensor& y);
}  // namespace raw

namespace cpu {
void gather_rows(const Tensor& x, const Tensor& index, Tensor& y);
}  // namespace cpu

namespace cuda {
void gather_rows(const Tensor& x, const Tensor& index, Tensor& y);
}  // namespace cuda

}  // namespace engine
