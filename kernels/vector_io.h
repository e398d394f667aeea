// Elementwise kernels that take W consecutive floats a thread: W = 4 where the tensors allow
// one 16-byte load and store (a quarter of the instructions and index computations of W = 1),
// and an Index type of int where every index fits (a 64-bit division or modulo is a software
// routine of dozens of instructions, and decoding an element's column or pixel takes one or
// more). Used by max pooling (kernels/pool.cu), the bias + activation epilogue
// (kernels/activation.cu), the optimizers (kernels/optimizers.cu) and the convolutions'
// alignment checks.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/launch.h"

namespace engine::cuda {

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// A grid-stride loop in Index arithmetic (every term cast first, so that int stays int):
//   for (Index i = grid_first<Index>(); i < count; i += grid_step<Index>())
template <typename Index>
__device__ __forceinline__ Index grid_first() {
  return static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) + static_cast<Index>(threadIdx.x);
}
template <typename Index>
__device__ __forceinline__ Index grid_step() {
  return static_cast<Index>(gridDim.x) * static_cast<Index>(blockDim.x);
}

// W consecutive floats at p: one 16-byte access for W = 4 (p 16-byte aligned), else one float.
template <int W>
__device__ __forceinline__ void load_floats(const float* p, float (&v)[W]) {
  static_assert(W == 1 || W == 4, "one float or one float4");
  if constexpr (W == 4) {
    const float4 q = *reinterpret_cast<const float4*>(p);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else {
    v[0] = *p;
  }
}
template <int W>
__device__ __forceinline__ void store_floats(float* p, const float (&v)[W]) {
  static_assert(W == 1 || W == 4, "one float or one float4");
  if constexpr (W == 4)
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  else
    *p = v[0];
}

// Launches a kernel over `items` items of W floats each (W = 4 when `vec`, else 1), indexed in
// int when `int_index`: calls launch(std::pair<Index, std::integral_constant<int, W>>{},
// blocks, groups), where groups = items / W threads' worth of work and blocks of `threads`
// cover them (grid-stride beyond the cap). The caller follows it with CHECK_LAUNCH(), so that a
// fault names the caller's file and line.
template <class Launch>
void launch_float_groups(int64_t items, bool vec, bool int_index, int threads, const Launch& launch) {
  const int64_t groups = items / (vec ? 4 : 1);
  const unsigned blocks = blocks_for(groups, threads);
  if (vec && int_index)
    launch(std::pair<int, std::integral_constant<int, 4>>{}, blocks, groups);
  else if (vec)
    launch(std::pair<int64_t, std::integral_constant<int, 4>>{}, blocks, groups);
  else if (int_index)
    launch(std::pair<int, std::integral_constant<int, 1>>{}, blocks, groups);
  else
    launch(std::pair<int64_t, std::integral_constant<int, 1>>{}, blocks, groups);
}

}  // namespace engine::cuda
