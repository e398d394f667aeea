// One copy for every transpose, permutation, diagonal and broadcast.
// Implementations: cpu/strided_copy.cpp, kernels/strided_copy.cu.
#pragma once
#include <array>
#include <cstdint>

#include "core/tensor.h"

namespace engine {

// A 3-D walk over a tensor's elements, counted in elements from the tensor's start: step
// (i, j, k) of the walk is element offset + i * stride[0] + j * stride[1] + k * stride[2].
// Strides may be 0 (every step of that axis visits the same element) and need not describe a
// contiguous layout: transposes, diagonals and broadcasts are all walks.
struct Walk3d {
  int64_t offset = 0;
  std::array<int64_t, 3> stride{};
};

namespace raw {
// y[to(i, j, k)] = x[from(i, j, k)] for every (i, j, k) below `extent`, for tensors of one
// 4-byte dtype on one device that do not share storage: a transpose, a permutation, a scatter
// into a diagonal or a broadcast of one element, in one pass. Checks that both walks stay
// inside their tensors; `to` must visit no element twice (else which write lands is
// unspecified); elements of y that the walk misses keep their values.
void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                  const Walk3d& from, const Walk3d& to);
}  // namespace raw

namespace cpu {
void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                  const Walk3d& from, const Walk3d& to);
}  // namespace cpu

namespace cuda {
void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                  const Walk3d& from, const Walk3d& to);
}  // namespace cuda

}  // namespace engine
