// What the convolutions' two Hopper kernels share (kernels/conv/tma_wgmma.cu: the forward and
// backward-data passes; kernels/conv/tma_wgmma_filter.cu: the filter gradient): the shape of
// their pipeline and the TMA map of the activations they gather.
#pragma once
#include <cstdint>

#include "kernels/conv/tma_wgmma.h"
#include "kernels/matmul/tma.h"

namespace engine::cuda::conv::hopper {

constexpr int BOX_CHANNELS = 32;  // channels of a gathered box: one 128-byte swizzle row
constexpr int ROW_BYTES = 128;
constexpr int STAGES = 4;
// The filter gradient's: fewer stages, so that more blocks fit an SM (its k steps are short
// LDS -> wgmma chains, which more warpgroups hide; tma_wgmma_filter.cu).
constexpr int FILTER_STAGES = 3;
constexpr int PRODUCER_THREADS = 32;

// Shared memory of a block whose `stages` hold a_rows + b_rows rows of 128 bytes: the stages,
// 1 KB of alignment slack (the swizzle's period), and the 2 x stages mbarriers.
constexpr int smem_bytes(int a_rows, int b_rows, int stages = STAGES) {
  return gemm::SWIZZLE_ALIGN + stages * (a_rows + b_rows) * ROW_BYTES + 2 * 8 * stages;
}

// The stages' mbarriers, after the stages in shared memory: full(s), on which the producer's
// TMA copies of stage s count their bytes, and empty(s), on which each consumer warp arrives
// once it is done with stage s.
template <int Stages>
struct StageBarriers {
  uint32_t first;  // shared address of full(0)
  __device__ uint32_t full(int s) const { return first + static_cast<uint32_t>(8 * s); }
  __device__ uint32_t empty(int s) const { return first + static_cast<uint32_t>(8 * (Stages + s)); }
  // Thread 0 sets them up; the whole block calls it, and waits until they are.
  __device__ void init(int consumer_warps) const {
    if (threadIdx.x == 0) {
      for (int s = 0; s < Stages; ++s) {
        gemm::mbarrier_init(full(s), 1);
        gemm::mbarrier_init(empty(s), static_cast<uint32_t>(consumer_warps));
      }
      gemm::fence_mbarrier_init();
    }
    __syncthreads();
  }
};

// The map of NHWC activations (batch, height, width, channels) whose box is 32 channels of a
// pixel tile: tile.w columns x tile.h rows x tile.n images, stored pixel after pixel, a
// 128-byte swizzled row each.
CUtensorMap activations_map(const float* src, int channels, int width, int height, int batch,
                            const PixelTile& tile);

}  // namespace engine::cuda::conv::hopper
