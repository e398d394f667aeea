// Reductions across the 32 lanes of a warp with shuffles (no shared memory, no barrier).
#pragma once
#include <cuda_runtime.h>

namespace engine::cuda {

// The first maximum: every lane offers (value, index); every lane ends with the largest value
// and, among equal ones, the lowest index (numpy's argmax). A NaN never wins a comparison.
// LANES < 32: each group of LANES neighbouring lanes finds its own.
template <int LANES = 32, typename Index>
__device__ __forceinline__ void warp_first_maximum(float& value, Index& index) {
  static_assert(LANES >= 1 && LANES <= 32 && (LANES & (LANES - 1)) == 0, "a power of two");
  for (int offset = LANES / 2; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, value, offset);
    const Index other_index = __shfl_xor_sync(0xffffffffu, index, offset);
    if (other > value || (other == value && other_index < index)) {
      value = other;
      index = other_index;
    }
  }
}

// The sum over each group of LANES neighbouring lanes, in every lane of it (a tree of
// shuffles: the same order, so the same bits, every run).
template <int LANES = 32>
__device__ __forceinline__ float warp_sum(float value) {
  static_assert(LANES >= 1 && LANES <= 32 && (LANES & (LANES - 1)) == 0, "a power of two");
  for (int offset = LANES / 2; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;
}

// One round of warp_transposed_sums: lanes `width` apart swap half of v[0 .. 2 width).
// A lane with this bit keeps v[i + width] and sends v[i]; the other, the reverse. The choice
// is a mask on the bits, not `upper ? v[i] : v[i + width]`, which the compiler may turn into a
// choice of address, and so the array into local memory.
template <int width>
__device__ __forceinline__ void transposed_sums_round(float (&v)[32], int lane) {
  const unsigned upper = (lane & width) != 0 ? 0xffffffffu : 0u;
#pragma unroll
  for (int i = 0; i < width; ++i) {
    const unsigned low = __float_as_uint(v[i]), high = __float_as_uint(v[i + width]);
    const float send = __uint_as_float((low & upper) | (high & ~upper));
    const float keep = __uint_as_float((high & upper) | (low & ~upper));
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, width);
  }
}

// 32 sums at once: every lane holds v[0..31]; lane i returns the sum over the warp's lanes of
// v[i]. Each round halves the values a lane keeps and swaps the other half with its partner,
// so it takes 16 + 8 + 4 + 2 + 1 = 31 shuffles instead of the 32 x 5 of 32 separate sums.
// v is left scrambled.
__device__ __forceinline__ float warp_transposed_sums(float (&v)[32]) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  transposed_sums_round<16>(v, lane);
  transposed_sums_round<8>(v, lane);
  transposed_sums_round<4>(v, lane);
  transposed_sums_round<2>(v, lane);
  transposed_sums_round<1>(v, lane);
  return v[0];
}

}  // namespace engine::cuda
