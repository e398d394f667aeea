// The TF32 tensor-core primitives that v9 (kernels/matmul/v9_tf32_mma.cu) and the implicit-GEMM
// convolutions (kernels/conv/implicit_gemm.cuh) share: the FP32 -> TF32 rounding of an operand
// and one warp-wide 16 x 8 x 8 multiply-add, mma.sync.m16n8k8 (HMMA in SASS), sm_80 and later.
#pragma once
#include <cstdint>

#include "kernels/matmul/cp_async.h"  // ENGINE_SM80: a trap below sm_80, where these never run

#if defined(__CUDACC__)
namespace engine::cuda::gemm {

// FP32 -> TF32, rounded to nearest (ties away); the result is a float bit pattern with the
// low 13 mantissa bits zero, as mma's .tf32 operands expect.
__device__ __forceinline__ uint32_t to_tf32(float x) {
  uint32_t r = 0;
  ENGINE_SM80(asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x)));
  return r;
}

// d += a b for a 16 x 8 x 8 block, the warp's 32 lanes each holding a slice of a, b and d:
// with g = lane / 4, t = lane % 4,
//   a (16 x 8, row-major): a[0] = (g, t),     a[1] = (g + 8, t),
//                          a[2] = (g, t + 4), a[3] = (g + 8, t + 4)
//   b (8 x 8, "col": k runs down): b[0] = (k t, n g), b[1] = (k t + 4, n g)
//   d (16 x 8): d[0] = (g, 2t), d[1] = (g, 2t + 1), d[2] = (g + 8, 2t), d[3] = (g + 8, 2t + 1)
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2]) {
  ENGINE_SM80(asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])));
}

}  // namespace engine::cuda::gemm
#endif
