// cp.async (sm_80+): asynchronous global -> shared memory copies that bypass registers, for the
// ladder's pipelined versions (v8, v9, v10) and the pipelined TF32 convolution
// (kernels/conv/implicit_gemm.cuh). A thread issues copies, closes them into a group with
// cp_async_commit(), and later waits until at most N of its groups are still in flight; the
// copies of other threads become visible only after a barrier that follows their wait.
#pragma once

#if defined(__CUDACC__)
namespace engine::cuda::gemm {

// Builds for Turing (sm_75) compile the kernels that use these too, since templates are
// instantiated for every architecture in the list; there the asm would not assemble. Such a
// kernel is never launched below sm_80 (device_caps.h: KernelChoice::cp_async), so its
// copies become a trap there instead.
#if __CUDA_ARCH__ >= 800 || !defined(__CUDA_ARCH__)
#define ENGINE_SM80(...) __VA_ARGS__
#else
#define ENGINE_SM80(...) __trap()
#endif

// src_bytes below the copy size zero-fills the rest of the destination, and 0 reads nothing:
// the zero-fill of edge tiles is free. .cg (16-byte copies, the default) caches in L2 only: a
// GEMM's tile is reused from shared memory, not L1. CACHE_L1 (.ca) keeps the line in L1 too,
// for gathers whose neighbouring rows read the same elements again (a convolution's patches
// read each pixel kh * kw times); .ca is also the only form for 4-byte copies.
template <bool CACHE_L1 = false>
__device__ __forceinline__ void cp_async_16(float* dst, const float* src, int src_bytes) {
  const auto d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (CACHE_L1) {
    ENGINE_SM80(asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(d),
                 "l"(__cvta_generic_to_global(src)), "r"(src_bytes)
                 : "memory"));
  } else {
    ENGINE_SM80(asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d),
                 "l"(__cvta_generic_to_global(src)), "r"(src_bytes)
                 : "memory"));
  }
}
__device__ __forceinline__ void cp_async_4(float* dst, const float* src, int src_bytes) {
  const auto d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  ENGINE_SM80(asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d),
               "l"(__cvta_generic_to_global(src)), "r"(src_bytes)
               : "memory"));
}
// Closes the group of copies this thread issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  ENGINE_SM80(asm volatile("cp.async.commit_group;\n" ::: "memory"));
}
// Waits until at most N of this thread's groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  ENGINE_SM80(asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"));
}

}  // namespace engine::cuda::gemm
#endif
