// What every kernel file needs: the GPU's stream and grid-size helpers.
#pragma once
#include <cstdint>

#include "kernels/cuda_check.h"

namespace engine::cuda {

// The one stream all of the GPU's work runs on, in order: every op's kernels, and the copies,
// fences and timers of its device services (kernels/cuda_device.h). A non-default stream,
// since the legacy default stream cannot be recorded into a CUDA graph.
cudaStream_t stream();

// The device's number of SMs (asked once): how many blocks it takes to fill the GPU.
int multiprocessor_count();

// Blocks of `threads` threads covering `n` items, at least one block, capped so that a
// grid-stride loop finishes the rest (the cap is far above what the seed models need).
inline unsigned blocks_for(int64_t n, int threads, int64_t max_blocks = 65535) {
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks < 1) blocks = 1;
  if (blocks > max_blocks) blocks = max_blocks;
  return static_cast<unsigned>(blocks);
}

}  // namespace engine::cuda
