// strided_copy: y[to(i, j, k)] = x[from(i, j, k)] over a 3-D index space, any 4-byte dtype.
// Jacobians use it to build one-hot bases (from a single 1.0 with stride 0), to transpose a
// chunk of forward-mode tangents into columns of J, and to scatter per-sample blocks onto the
// block diagonal of a dense J (nn/jacobian.cpp).
//
// Napkin math, the seed-001 MLP at val=1000 (J is (1000, 400, 1000, 1), 1.6 GB):
//   per-sample scatter: 400k elements, 1.6 MB read + 400k scattered 4-byte writes (one 32-byte
//   sector each: 12.8 MB of traffic), ~5 us at 3 TB/s. The zero fill of J before it is
//   the real cost: 1.6 GB written, ~0.5 ms.
//   dense forward mode: a chunk of K tangents (K, 400000) lands in K columns of J: reads are
//   coalesced, writes are strided by 1000 floats, so each 4-byte write costs a 32-byte
//   sector: ~8x the bytes of a coalesced copy, ~4 ms for all of J. A shared-memory tiled
//   transpose would save that; the dense forward mode is not the fast path for this model
//   (per-sample is), so the simple kernel stays.
// One thread per element of the index space, grid-stride; (i, j, k) from the flat index
// with two 64-bit divisions, cheap next to the memory access they address.
#include "kernels/cuda_backend.h"
#include "kernels/launch.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;

// Walk3d without std::array, for the kernel's parameter list.
struct Walk {
  int64_t offset, s0, s1, s2;
};

Walk device_walk(const Walk3d& w) { return {w.offset, w.stride[0], w.stride[1], w.stride[2]}; }

__global__ void strided_copy_kernel(const uint32_t* __restrict__ x, uint32_t* __restrict__ y,
                                    int64_t n1, int64_t n2, int64_t total, Walk from, Walk to) {
  for (int64_t flat = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; flat < total;
       flat += int64_t{gridDim.x} * blockDim.x) {
    const int64_t k = flat % n2;
    const int64_t ij = flat / n2;
    const int64_t j = ij % n1;
    const int64_t i = ij / n1;
    y[to.offset + i * to.s0 + j * to.s1 + k * to.s2] =
        x[from.offset + i * from.s0 + j * from.s1 + k * from.s2];
  }
}

}  // namespace

void CudaBackend::strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                               const Walk3d& from, const Walk3d& to) {
  const int64_t total = extent[0] * extent[1] * extent[2];
  if (total == 0) return;
  strided_copy_kernel<<<blocks_for(total, THREADS), THREADS, 0, stream()>>>(
      static_cast<const uint32_t*>(x.raw_data()), static_cast<uint32_t*>(y.raw_data()), extent[1],
      extent[2], total, device_walk(from), device_walk(to));
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
