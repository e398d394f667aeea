// What v6, v7 and the later versions share to read an operand 16 bytes at a time: the host-side test that
// says whether every row of A and B starts on a 16-byte boundary, and the device-side load of
// four consecutive elements of one stored row, vector or scalar.
//
// A float4 load (LDG.E.128) needs an address that is a multiple of 16 bytes. A group of four
// elements starting at column 4q of stored row r sits at base + r * ld + 4q, so every such
// group is aligned exactly when the base is aligned and ld is a multiple of 4. Split-K moves
// the base by k0 = z * k_slice elements (gemm.h, slice_of): along a stored row when the
// operand's contiguous dimension is K (A as (M, K), B as (N, K)), by k0 whole rows otherwise;
// k_slice a multiple of 4 keeps both aligned. The engine's slices are multiples of 16.
#pragma once
#include <cstdint>

#include "kernels/matmul/gemm.h"

namespace engine::cuda::gemm {

// True when every 4-element group of A and B that a kernel reads along a stored row (starting
// at a column that is a multiple of 4) is 16-byte aligned, in every K slice.
inline bool rows_allow_float4(const Gemm& g) {
  auto aligned = [](const float* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return aligned(g.A) && aligned(g.B) && g.lda % 4 == 0 && g.ldb % 4 == 0 && g.k_slice % 4 == 0;
}

#if defined(__CUDACC__)  // device helpers; host code sees only rows_allow_float4
// Elements p[0..3] of one stored row, of which only the first n exist (n may be <= 0: none,
// or > 4: all four); the missing ones read as zero and are never dereferenced. VEC: p is
// 16-byte aligned (rows_allow_float4), so a full group is one 16-byte load; a group cut by
// the matrix edge, and every group when VEC is false, is read one element at a time.
// __ldg: the compiler cannot tell that a pointer taken from the Gemm struct points to global
// memory, and would emit generic loads (LD); __ldg makes them global loads (LDG, through the
// read-only path: A and B are never written while a GEMM runs).
template <bool VEC>
__device__ __forceinline__ float4 load_row4(const float* p, int n) {
  if (VEC && n >= 4) return __ldg(reinterpret_cast<const float4*>(p));
  // A whole group without predicates: the common case, and fewer registers (with only the
  // predicated loads below, ptxas spilled in v7's scalar variants).
  if (n >= 4) return make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), __ldg(p + 3));
  float4 v;
  v.x = n > 0 ? __ldg(p) : 0.0f;
  v.y = n > 1 ? __ldg(p + 1) : 0.0f;
  v.z = n > 2 ? __ldg(p + 2) : 0.0f;
  v.w = n > 3 ? __ldg(p + 3) : 0.0f;
  return v;
}
#endif

}  // namespace engine::cuda::gemm
