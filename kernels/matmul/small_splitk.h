// The engine's GEMM for small and skinny outputs (kernels/matmul/small_splitk.cu): 32 x 32
// output tiles, split-K with the slices added inside the same launch. Not a rung of the
// ladder (versions.cu): besides the Gemm it needs a buffer of counters that outlives the call,
// which the device owns (kernels/cuda_device.h: CudaDevice::splitk_counters).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/matmul/gemm.h"

namespace engine::cuda::gemm {

// One block's output tile and the depth of one K tile. A split call's slices are whole K
// tiles deep (small_splitk_k_slice), except for the last.
constexpr int SMALL_BM = 32, SMALL_BN = 32, SMALL_BK = 32;
// Counters a split call needs: one per output tile (so at most this many tiles when split).
constexpr int SMALL_SPLITK_COUNTERS = 1024;

// The g.k_slice the engine uses for an M x N x K product on a GPU of `sms` SMs: 0 (one block
// per output tile walks all of K), or a multiple of SMALL_BK smaller than K.
int small_splitk_k_slice(int M, int N, int K, int sms);

// Floats of workspace (g.partial) a call with g's shape and g.k_slice needs: 0 without a
// split, else (tiles, slices, SMALL_BM, SMALL_BN), each tile's partial products contiguous.
int64_t small_splitk_workspace(const Gemm& g);

// C = alpha * op(A) @ op(B) + beta * C in one launch, any M, N, K, transposes and alignment;
// with `tf32`, the products on TF32 tensor cores (mma.sync m16n8k8, sm_80 on), else FP32 FMA.
// With g.k_slice > 0 (any value; the engine's are multiples of SMALL_BK), each slice of K
// writes its partial tile to g.partial (16-byte aligned, small_splitk_workspace floats), and
// the last slice of each tile to finish adds them all in slice order (deterministic) and
// writes C. `counters`: SMALL_SPLITK_COUNTERS unsigned ints on the device, zero before the
// call and zero again when it has run (so one zeroed buffer serves every call, and every
// replay of a captured graph, on one stream); unused without a split.
void small_splitk(const Gemm& g, bool tf32, unsigned* counters, cudaStream_t stream);

}  // namespace engine::cuda::gemm
