// Hopper's warpgroup MMA (wgmma, sm_90a) for the ladder's v10 and v11 and the convolutions'
// kernels/conv/tma_wgmma*.cu: the TF32 m64n256k8 instruction in its two forms (A from registers,
// A from shared memory), the narrower m64nNk8 in both forms, and the fences and group
// waits around them. A warpgroup (4 warps) issues wgmmas asynchronously: the accumulators
// (and a register A) belong to the tensor cores until a wgmma_wait says their group is done.
//
// All of it exists in the sm_90a compile pass alone (__CUDA_ARCH_FEAT_SM90_ALL), the only
// device pass of the files that include it (kernels/CMakeLists.txt); in the host pass, which
// parses device code but never runs it, SM90A_ASM expands to nothing.
#pragma once
#include <cstdint>

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SM90A_ASM(...) asm volatile(__VA_ARGS__)
#else
#define SM90A_ASM(...)
#endif

#if defined(__CUDACC__)
namespace engine::cuda::gemm {

// Where accumulator i of thread ct lies in the D tile of a wgmma m64nNk8 .f32, counting
// threads from the first consumer warpgroup's (ct = 0 .. 128 c - 1 over c warpgroups, each
// its own 64 rows): warp w of the warpgroup, lane (g, t) holds rows 16 w + g and + 8, columns
// 8 j + 2 t and + 1: d[4 j + 2 h + e] = (16 w + g + 8 h, 8 j + 2 t + e), for any N (checked
// on the GPU by v10 and v11, N = 256, and the convolutions, N = 32 to 128).
__host__ __device__ constexpr int acc_row(int ct, int i) {
  return ct / 128 * 64 + ct / 32 % 4 * 16 + ct % 32 / 4 + 8 * (i / 2 % 2);
}
__host__ __device__ constexpr int acc_col(int ct, int i) {
  return 8 * (i / 4) + 2 * (ct % 4) + i % 2;
}

// m64n256k8 keeps the 64 x 256 f32 tile of D in 128 registers per thread.
constexpr int WGMMA_ACC = 128;

// The 128 accumulator operands of the asm statements below, %0 .. %127.
#define WGMMA_D8(d, i)                                                                         \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define WGMMA_D128(d)                                                                          \
  WGMMA_D8(d, 0), WGMMA_D8(d, 8), WGMMA_D8(d, 16), WGMMA_D8(d, 24), WGMMA_D8(d, 32),           \
      WGMMA_D8(d, 40), WGMMA_D8(d, 48), WGMMA_D8(d, 56), WGMMA_D8(d, 64), WGMMA_D8(d, 72),     \
      WGMMA_D8(d, 80), WGMMA_D8(d, 88), WGMMA_D8(d, 96), WGMMA_D8(d, 104), WGMMA_D8(d, 112),   \
      WGMMA_D8(d, 120)
#define WGMMA_D128_REGS                                                                        \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                    \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "           \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "           \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "           \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "           \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "           \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "     \
  "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, " \
  "%126, %127}"

// d = A . B (accumulate false) or d += A . B for one k-step, B (8 x 256 tf32) from shared
// memory through its descriptor, no negation. The first k-step overwrites instead of zeroing
// d first: ptxas serializes every wgmma (warning C7515) when ordinary instructions define
// accumulator registers in the pipeline, and zeroing them before the main loop counts.
// A (64 x 8 tf32) from the registers a (4 per thread):
__device__ __forceinline__ void wgmma_m64n256k8_rs(float (&d)[WGMMA_ACC], const uint32_t (&a)[4],
                                                   uint64_t desc_b, bool accumulate) {
  SM90A_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " WGMMA_D128_REGS
            ", {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
            : WGMMA_D128(d)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(int{accumulate}));
}
// ... or A from shared memory through its descriptor too:
__device__ __forceinline__ void wgmma_m64n256k8_ss(float (&d)[WGMMA_ACC], uint64_t desc_a,
                                                   uint64_t desc_b, bool accumulate) {
  SM90A_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " WGMMA_D128_REGS
            ", %128, %129, p, 1, 1;\n}\n"
            : WGMMA_D128(d)
            : "l"(desc_a), "l"(desc_b), "r"(int{accumulate}));
}

// The narrower m64nNk8 forms, both operands from shared memory (the convolutions' tiles: N =
// 32, 64 or 128 columns, N / 2 accumulators a thread), as wgmma_m64n256k8_ss otherwise.
template <int N>
__device__ __forceinline__ void wgmma_m64nNk8_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,
                                                 bool accumulate);
template <>
__device__ __forceinline__ void wgmma_m64nNk8_ss<32>(float (&d)[16], uint64_t desc_a, uint64_t desc_b,
                                                    bool accumulate) {
  SM90A_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
            ", %16, %17, p, 1, 1;\n}\n"
            : WGMMA_D8(d, 0), WGMMA_D8(d, 8)
            : "l"(desc_a), "l"(desc_b), "r"(int{accumulate}));
}
template <>
__device__ __forceinline__ void wgmma_m64nNk8_ss<64>(float (&d)[32], uint64_t desc_a, uint64_t desc_b,
                                                    bool accumulate) {
  SM90A_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
            "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
            ", %32, %33, p, 1, 1;\n}\n"
            : WGMMA_D8(d, 0), WGMMA_D8(d, 8), WGMMA_D8(d, 16), WGMMA_D8(d, 24)
            : "l"(desc_a), "l"(desc_b), "r"(int{accumulate}));
}
template <>
__device__ __forceinline__ void wgmma_m64nNk8_ss<128>(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                                    bool accumulate) {
  SM90A_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
            "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
            "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
            "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
            ", %64, %65, p, 1, 1;\n}\n"
            : WGMMA_D8(d, 0), WGMMA_D8(d, 8), WGMMA_D8(d, 16), WGMMA_D8(d, 24), WGMMA_D8(d, 32),
              WGMMA_D8(d, 40), WGMMA_D8(d, 48), WGMMA_D8(d, 56)
            : "l"(desc_a), "l"(desc_b), "r"(int{accumulate}));
}
// The same with A from registers (4 per thread, wgmma_m64n256k8_rs's fragment): the
// convolutions' filter gradient, whose A (x, channels contiguous) is not K-major.
template <int N>
__device__ __forceinline__ void wgmma_m64nNk8_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                                                 bool accumulate);
template <>
__device__ __forceinline__ void wgmma_m64nNk8_rs<32>(float (&d)[16], const uint32_t (&a)[4], uint64_t desc_b,
                                                    bool accumulate) {
  SM90A_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
            ", {%16, %17, %18, %19}, %20, p, 1, 1;\n}\n"
            : WGMMA_D8(d, 0), WGMMA_D8(d, 8)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(int{accumulate}));
}
template <>
__device__ __forceinline__ void wgmma_m64nNk8_rs<64>(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b,
                                                    bool accumulate) {
  SM90A_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
            "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
            ", {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
            : WGMMA_D8(d, 0), WGMMA_D8(d, 8), WGMMA_D8(d, 16), WGMMA_D8(d, 24)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(int{accumulate}));
}
template <>
__device__ __forceinline__ void wgmma_m64nNk8_rs<128>(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b,
                                                     bool accumulate) {
  SM90A_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
            "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "
            "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "
            "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
            ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
            : WGMMA_D8(d, 0), WGMMA_D8(d, 8), WGMMA_D8(d, 16), WGMMA_D8(d, 24), WGMMA_D8(d, 32),
              WGMMA_D8(d, 40), WGMMA_D8(d, 48), WGMMA_D8(d, 56)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(int{accumulate}));
}
// Orders this warp's register writes (a register A, the accumulators) before the wgmmas that
// follow; required before the first wgmma and whenever their registers were written.
__device__ __forceinline__ void wgmma_fence() {
  SM90A_ASM("wgmma.fence.sync.aligned;\n" ::: "memory");
}
// Closes the wgmmas issued since the last commit into one group.
__device__ __forceinline__ void wgmma_commit() {
  SM90A_ASM("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most N of the warpgroup's groups are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  SM90A_ASM("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// An empty asm that "modifies" every accumulator: the compiler may not move accumulator reads
// or writes across it, so none slides past a wgmma_wait (the registers are the tensor cores'
// until then, which the compiler cannot know).
template <int R>
__device__ __forceinline__ void fence_accumulators(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

}  // namespace engine::cuda::gemm
#endif  // __CUDACC__
