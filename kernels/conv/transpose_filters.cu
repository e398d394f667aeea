// The Hopper forward reads each tap's filters as (out_c, in_c), k = in_c contiguous (wgmma
// takes TF32 operands K-major only), while a Conv2D stores them (in_c, out_c): each forward
// pass needs the transpose of its filters, written again every step since the optimizer has
// just changed them.
//
// Napkin math, the CIFAR-10 CNN (four Hopper forwards, 32->32 ... 128->128 channels, 3x3):
// ~0.3 M floats, 2.4 MB read and written, under 1 us of bandwidth. Copied a layer at a time
// (a strided copy each, five launches) they took 11.3 us of the 452 us step (kernel_trace,
// H200, 2026-11-28): launches and small grids, not bytes. So every layer's transpose goes in
// one launch, a block per 32 x 32 tile of one tap of one layer, staged in shared memory so
// that both the read along out_c and the write along in_c are coalesced.
#include "kernels/conv/transpose_filters.h"

#include <algorithm>

#include "kernels/cuda_check.h"

namespace engine::cuda::conv {
namespace {

constexpr int TILE = 32;
constexpr int TILE_ROWS = 8;       // a block of 32 x 8 threads moves a tile in four rows each
constexpr int LAYERS_A_LAUNCH = 16;

struct Batch {
  FilterTranspose layer[LAYERS_A_LAUNCH];
  int first_tile[LAYERS_A_LAUNCH + 1];  // the layers' tiles, one after another
  int layers;
};

__host__ __device__ int tiles_across(int n) { return (n + TILE - 1) / TILE; }

__global__ void __launch_bounds__(TILE * TILE_ROWS) transpose_filters_kernel(const __grid_constant__ Batch b) {
  __shared__ float tile[TILE][TILE + 1];  // +1 column: the column-wise reads hit 32 banks
  const int block = static_cast<int>(blockIdx.x);
  int l = 0;
  while (block >= b.first_tile[l + 1]) ++l;  // a few layers: a scan beats a search
  const FilterTranspose f = b.layer[l];
  const int in_tiles = tiles_across(f.in_c), out_tiles = tiles_across(f.out_c);
  const int t = block - b.first_tile[l];
  const int tap = t / (in_tiles * out_tiles);
  const int ci0 = t / out_tiles % in_tiles * TILE, co0 = t % out_tiles * TILE;
  const float* w = f.w + int64_t{tap} * f.in_c * f.out_c;
  float* wt = f.filters_t + int64_t{tap} * f.out_c * f.in_c;
  const int x = static_cast<int>(threadIdx.x);
  for (int r = static_cast<int>(threadIdx.y); r < TILE; r += TILE_ROWS) {  // rows of in_c
    if (ci0 + r < f.in_c && co0 + x < f.out_c) tile[r][x] = w[int64_t{ci0 + r} * f.out_c + co0 + x];
  }
  __syncthreads();  // the tile is whole before it is read across
  for (int r = static_cast<int>(threadIdx.y); r < TILE; r += TILE_ROWS) {  // rows of out_c
    if (co0 + r < f.out_c && ci0 + x < f.in_c) wt[int64_t{co0 + r} * f.in_c + ci0 + x] = tile[x][r];
  }
}

}  // namespace

void transpose_filters(const std::vector<FilterTranspose>& layers, cudaStream_t stream) {
  for (size_t start = 0; start < layers.size(); start += LAYERS_A_LAUNCH) {
    Batch b{};
    b.layers = static_cast<int>(std::min<size_t>(LAYERS_A_LAUNCH, layers.size() - start));
    for (int l = 0; l < b.layers; ++l) {
      const FilterTranspose& f = layers[start + static_cast<size_t>(l)];
      b.layer[l] = f;
      b.first_tile[l + 1] = b.first_tile[l] + f.taps * tiles_across(f.in_c) * tiles_across(f.out_c);
    }
    for (int l = b.layers + 1; l <= LAYERS_A_LAUNCH; ++l) b.first_tile[l] = b.first_tile[b.layers];
    if (b.first_tile[b.layers] == 0) continue;
    transpose_filters_kernel<<<b.first_tile[b.layers], dim3(TILE, TILE_ROWS), 0, stream>>>(b);
    CHECK_LAUNCH_NAMED("transpose_filters_kernel");
  }
}

}  // namespace engine::cuda::conv
