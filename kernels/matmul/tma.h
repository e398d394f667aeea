// Hopper's asynchronous copies and the barriers around them (sm_90a), shared by the kernels
// that feed wgmma from TMA: the ladder's v11 (kernels/matmul/v11_tf32_tma.cu) and the
// convolutions' kernels/conv/tma_wgmma*.cu; the fused MLP's gather takes the mbarriers and the
// plain bulk copy, which sm_90 has too. TMA copies a box of a tensor (described once, on
// the host, by a CUtensorMap) into shared memory and counts its bytes on an mbarrier; elements
// outside the tensor arrive as zeros. The shared-memory tiles it writes, rows of 128 bytes in
// the 128-byte swizzle, are what wgmma reads through sw128_descriptor.
#pragma once
#include <cuda.h>          // CUtensorMap and its enums (types only: nothing links libcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "kernels/matmul/wgmma.h"  // SM90A_ASM

namespace engine::cuda::gemm {

constexpr int SWIZZLE_ALIGN = 1024;  // the 128-byte swizzle's period: 8 rows of 128 bytes

#if defined(__CUDACC__)
// The matrix descriptor of a K-major operand in the 128-byte swizzled layout whose 8-row
// groups start at shared address `addr` (PTX ISA, "matrix descriptor"): start address >> 4
// (bits 0-13), leading byte offset (bits 16-29: unused by the swizzled K-major layouts when
// one wgmma's K fits in a swizzle row, 1 by convention), stride byte offset >> 4 (bits 32-45:
// 1024 bytes between 8-row groups), base offset 0 (bits 49-51: stages are 1024-aligned),
// layout type 1 = 128B swizzle (bits 62-63). Adding 2 to it moves the start 32 bytes along k.
__host__ __device__ constexpr uint64_t sw128_descriptor(uint32_t addr) {
  return uint64_t{(addr & 0x3ffffu) >> 4} | uint64_t{1} << 16 |
         uint64_t{SWIZZLE_ALIGN >> 4} << 32 | uint64_t{1} << 62;
}
constexpr uint64_t DESC_PER_KSTEP = (8 * 4) >> 4;  // 8 tf32 = 32 bytes, in 16-byte units

// Hopper-only instructions go through SM90A_ASM (kernels/matmul/wgmma.h): empty outside the
// sm_90a compile pass, where the kernel traps at once.

// The mbarriers and the plain bulk copy below are sm_90's, not only sm_90a's: they go through
// SM90_ASM, live in every device pass for sm_90 and later (the fused MLP's gather uses them
// there), empty before it and in the host pass.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define SM90_ASM(...) asm volatile(__VA_ARGS__)
#else
#define SM90_ASM(...)
#endif

// -- mbarriers (PTX ISA "mbarrier"). All addresses are 32-bit shared-window addresses. --
__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t arrivals) {
  SM90_ASM("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
// Makes the inits visible to the other threads of the cluster and to the async proxy (TMA's
// complete_tx) before the barrier that follows.
__device__ __forceinline__ void fence_mbarrier_init() {
  SM90_ASM("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// The producer's arrival on a "full" barrier, announcing the bytes TMA will deliver to it
// (its own copies' and, in a cluster, the partner's multicast half of B).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  SM90_ASM("{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.release.cta.shared::cta.b64 state, "
          "[%0], %1;\n}\n" ::"r"(bar),
          "r"(bytes)
          : "memory");
}
// A consumer warp's arrival on an "empty" barrier of its own block (no cluster).
__device__ __forceinline__ void mbarrier_arrive_local(uint32_t bar) {
  SM90A_ASM("{\n.reg .b64 state;\nmbarrier.arrive.release.cta.shared::cta.b64 state, [%0];\n}\n" ::"r"(
              bar)
          : "memory");
}
// The same where `arrive` holds, as one predicated instruction: a warp calls it whole and
// never branches. (A branch between register-operand wgmmas made ptxas serialize them, C7513:
// kernels/conv/tma_wgmma_filter.cu.)
__device__ __forceinline__ void mbarrier_arrive_local_if(uint32_t bar, bool arrive) {
  SM90A_ASM("{\n.reg .pred p;\n.reg .b64 state;\nsetp.ne.b32 p, %1, 0;\n"
            "@p mbarrier.arrive.release.cta.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar),
            "r"(int{arrive})
            : "memory");
}
// The same on the barrier at the same offset in block `rank` of the cluster (mapa turns a
// shared::cta address into that block's shared::cluster address). Release at CTA scope, not
// cluster scope: the arrival only says "my wgmmas have finished reading this stage", an order
// the wgmma wait already established, and .release.cluster compiles to MEMBAR.ALL.GPU (a round
// trip to L2) before each arrival: two per warp and K tile, which halved the speed (see the
// header).
__device__ __forceinline__ void mbarrier_arrive_cluster(uint32_t bar, uint32_t rank) {
  SM90A_ASM("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
          "mbarrier.arrive.release.cta.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
          "r"(rank)
          : "memory");
}
// Whether the phase of parity `parity` has completed (try_wait may also suspend the thread a
// while before saying no). Acquire at CTA scope for the "empty" barriers too, which other
// blocks' consumers arrive on: what the producer then overwrites is only read by the async
// proxy, and .acquire.cluster adds an L1 invalidation (CCTL.IVALL) to every wait.
__device__ __forceinline__ bool mbarrier_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 1;
  SM90_ASM("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
          "selp.u32 %0, 1, 0, p;\n}\n"
          : "=r"(done)
          : "r"(bar), "r"(parity)
          : "memory");
  return done != 0;
}
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}

// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global memory to shared
// address `dst` by the copy engine, counted on mbarrier `bar` (complete_tx) when they land: one
// instruction of one thread for a whole contiguous row (PTX ISA "cp.async.bulk").
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes,
                                          uint32_t bar) {
  SM90_ASM("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
           "[%0], [%1], %2, [%3];\n" ::"r"(dst),
           "l"(src), "r"(bytes), "r"(bar)
           : "memory");
}

// -- TMA (PTX ISA "cp.async.bulk.tensor") --
// The box of `map` whose corner is (k, row) into shared memory at `dst`, counted on the
// mbarrier `bar` (complete_tx); elements outside the tensor arrive as zeros and are counted.
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, int k, int row,
                                         uint32_t bar) {
  SM90A_ASM("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], "
          "[%1, {%2, %3}], [%4];\n" ::"r"(dst),
          "l"(reinterpret_cast<uint64_t>(map)), "r"(k), "r"(row), "r"(bar)
          : "memory");
}
// The same box into `dst` of every block of the cluster in `mask`, each counting it on its own
// mbarrier at offset `bar`.
__device__ __forceinline__ void tma_load_multicast(uint32_t dst, const CUtensorMap* map, int k,
                                                   int row, uint32_t bar, uint16_t mask) {
  SM90A_ASM("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes."
          "multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
          "l"(reinterpret_cast<uint64_t>(map)), "r"(k), "r"(row), "r"(bar), "h"(mask)
          : "memory");
}
__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  SM90A_ASM("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// -- clusters --
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t rank = 0;
  SM90A_ASM("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}
// Every thread of every block of the cluster arrives, then waits for all the others.
__device__ __forceinline__ void cluster_sync() {
  SM90A_ASM("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
// 3-D and 4-D boxes (the convolutions' filters and activations): coordinates innermost first.
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                            int c2, uint32_t bar) {
  SM90A_ASM("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], "
            "[%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
            "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
            : "memory");
}
__device__ __forceinline__ void tma_load_4d(uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                            int c2, int c3, uint32_t bar) {
  SM90A_ASM("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], "
            "[%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
            "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
            : "memory");
}
#endif  // __CUDACC__

// cuTensorMapEncodeTiled, from the driver through the runtime (no -lcuda); nullptr if the
// driver does not have it.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      return PFN_cuTensorMapEncodeTiled_v12000{nullptr};
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// A tensor map over `data` (floats) with these sizes and byte strides, innermost first (the
// first dimension contiguous): boxes of `box` elements, the 128-byte swizzle that wgmma's
// descriptors read, zeros for what lies outside. Built on the host (a few microseconds) and
// passed by value as a __grid_constant__ kernel parameter, so a CUDA graph captures it like
// any other argument. Throws engine::Error naming `what` where the driver refuses it.
template <int RANK>
CUtensorMap swizzled_tensor_map(const float* data, const cuuint64_t (&dims)[RANK],
                                const cuuint64_t (&strides)[RANK - 1], const cuuint32_t (&box)[RANK],
                                const std::string& what) {
  CUtensorMap map;
  cuuint32_t element_strides[RANK];
  for (cuuint32_t& e : element_strides) e = 1;
  const CUresult status = tensor_map_encoder()(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, RANK, const_cast<float*>(data), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  ENGINE_CHECK(status == CUDA_SUCCESS, what, ": cuTensorMapEncodeTiled failed (CUresult ",
               static_cast<int>(status), ")");
  return map;
}

}  // namespace engine::cuda::gemm
