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
//   sector: ~8x the bytes of a coalesced copy. Predicted ~4 ms for all of J; ncu found these
//   copies most of the mode's time (docs/results/jacobian.md, "On the GPU"). So that
//   case, a 2-D transpose, has its own kernel: 32 x 32 tiles staged in shared memory, read
//   along x's contiguous axis and written along y's, both coalesced: 2 x 1.6 GB at ~2.5
//   TB/s, ~1.3 ms.
// Every other walk: one thread per element of the index space, grid-stride; (i, j, k) from
// the flat index with two 64-bit divisions, cheap next to the memory access they address.
#include "core/ops/strided_copy.h"
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

// The transpose case: extent (n0, n1, 1), x contiguous along axis 1 (from.s1 == 1), y along
// axis 0 (to.s0 == 1). A block of 32 x 8 threads moves one 32 x 32 tile at a time.
constexpr int TILE = 32;
constexpr int TILE_ROWS = 8;

__global__ void transpose_tiles_kernel(const uint32_t* __restrict__ x, uint32_t* __restrict__ y,
                                       int64_t n0, int64_t n1, Walk from, Walk to) {
  __shared__ uint32_t tile[TILE][TILE + 1];  // +1 column: the column-wise reads hit 32 banks
  for (int64_t i0 = blockIdx.y * int64_t{TILE}; i0 < n0; i0 += int64_t{gridDim.y} * TILE) {
    for (int64_t j0 = blockIdx.x * int64_t{TILE}; j0 < n1; j0 += int64_t{gridDim.x} * TILE) {
      const int64_t j = j0 + threadIdx.x;  // a warp reads 32 consecutive floats of x
      for (int r = threadIdx.y; r < TILE; r += TILE_ROWS) {
        const int64_t i = i0 + r;
        if (i < n0 && j < n1) tile[r][threadIdx.x] = x[from.offset + i * from.s0 + j];
      }
      __syncthreads();
      const int64_t i = i0 + threadIdx.x;  // ... and writes 32 consecutive floats of y
      for (int c = threadIdx.y; c < TILE; c += TILE_ROWS) {
        const int64_t jj = j0 + c;
        if (i < n0 && jj < n1) y[to.offset + i + jj * to.s1] = tile[threadIdx.x][c];
      }
      __syncthreads();  // the tile is refilled by the next iteration
    }
  }
}

}  // namespace

void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                  const Walk3d& from, const Walk3d& to) {
  const int64_t total = extent[0] * extent[1] * extent[2];
  if (total == 0) return;
  const bool transpose = extent[2] == 1 && extent[0] > 1 && extent[1] > 1 &&
                         from.stride[1] == 1 && to.stride[0] == 1;
  if (transpose) {
    const dim3 grid(blocks_for(extent[1], TILE), blocks_for(extent[0], TILE));
    transpose_tiles_kernel<<<grid, dim3(TILE, TILE_ROWS), 0, stream()>>>(
        static_cast<const uint32_t*>(x.raw_data()), static_cast<uint32_t*>(y.raw_data()), extent[0],
        extent[1], device_walk(from), device_walk(to));
    CHECK_LAUNCH_NAMED("transpose_tiles_kernel");
    return;
  }
  strided_copy_kernel<<<blocks_for(total, THREADS), THREADS, 0, stream()>>>(
      static_cast<const uint32_t*>(x.raw_data()), static_cast<uint32_t*>(y.raw_data()), extent[1],
      extent[2], total, device_walk(from), device_walk(to));
  CHECK_LAUNCH_NAMED("strided_copy_kernel");
}

}  // namespace engine::cuda
