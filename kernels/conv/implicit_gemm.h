// The engine's GPU convolutions as implicit GEMMs (kernels/conv/implicit_gemm.cuh): what the
// host sees. Each pass of a convolution is one product C (M x N) = A (M x K) @ B (K x N) whose
// A (and for the backward passes B) is gathered from the activations on the fly, tile by
// tile, into shared memory: no im2col buffer in global memory.
//
//   pass             C      A                         B            M              N      K
//   forward          y      patches of x              w            batch*oh*ow    out_c  kh*kw*in_c
//   backward_data    dx     windows of dy over x's    w, (kh, kw)  batch*ih*iw    in_c   kh*kw*out_c
//                           pixels (zero off-stride)  transposed
//   backward_filter  dw     patches of x, transposed  dy           kh*kw*in_c     out_c  batch*oh*ow
//
// Layouts (core/conv_geometry.h): x, y NHWC, w (kh, kw, in_c, out_c). Every C is a row-major
// (M x N) matrix already: y and dx as (pixels, channels), dw as (kh*kw*in_c, out_c).
// A Tiling says how a pass is cut into blocks; choose_tiling() is the engine's choice, and
// tests and apps/kernel_bench may pass any other valid one.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/conv_geometry.h"

namespace engine::cuda::conv {

enum class Pass { Forward, BackwardData, BackwardFilter };
const char* to_string(Pass pass);  // "forward", "backward_data", "backward_filter"

struct GemmShape {
  int64_t M = 0, N = 0, K = 0;
};
GemmShape gemm_shape(Pass pass, const Conv2dGeometry& g);

// A block computes a BM x BN tile of C with 256 threads; each thread owns tm x 4 outputs (FP32)
// or its warp a (4 tm) x 32 tile of mma fragments (TF32), so BM = tm * 1024 / bn.
struct Tiling {
  int bn = 32;      // 32, 64 or 128 columns of C per block
  int tm = 8;       // 8 or 4 rows of C per thread
  int k_slice = 0;  // > 0: split-K, slices of this many k (a multiple of 16), added in order
  bool tf32 = false;  // TF32 tensor cores where the channels allow float4 loads (else FP32)
  // TF32 only: 2 = the loads of the next K tile staged through registers (double buffering);
  // 3 or 4 = a cp.async pipeline with that many K tiles in shared memory, 2 or 3 in flight.
  int stages = 2;
  int block_rows() const { return tm * 1024 / bn; }
};

// The engine's tiling for a pass on a GPU of `sms` SMs (see choose_tiling in implicit_gemm.cu).
// Its TF32 stages are the device's (kernels/device_caps.h: KernelChoice::conv_tf32_stages, or
// ENGINE_CONV_TF32_STAGES where set): 3, the cp.async pipeline, where two of its blocks fit an
// SM: faster than the two-stage kernel, and as fast as 4 stages in less shared memory
// (measured: docs/YOUR_GPU.md, "What the other paths cost"; docs/HISTORY.md, 2026-11-24).
Tiling choose_tiling(Pass pass, const Conv2dGeometry& g, bool tf32, int sms);
// The stages that text of ENGINE_CONV_TF32_STAGES asks for: `chosen` for none (null or empty),
// else 2, 3 or 4; anything else is an engine::Error naming the variable.
int tf32_stages_setting(const char* text, int chosen);
// v as an int (the kernels index in int), or an error naming `what`.
int to_int(int64_t v, const char* what);
// K slices the tiling cuts K into (1 without split-K), and the workspace floats they need:
// (slices, M, N) partial products, 0 without split-K.
int slices_of(const Tiling& t, const GemmShape& s);
int64_t workspace_floats(const Tiling& t, const GemmShape& s);
// Whether the pass runs with 16-byte loads (the channel counts that a group of 4 runs along are
// multiples of 4 and the operands are 16-byte aligned); only then does Tiling::tf32 apply.
bool vectorized(Pass pass, const Conv2dGeometry& g, const float* a, const float* b);

// The passes, all on `stream`; outputs overwritten. `workspace`: workspace_floats(t, shape)
// floats, 16-byte aligned (unused, may be null, without split-K). No allocation, no sync.
void forward(const Conv2dGeometry& g, const Tiling& t, const float* x, const float* w, float* y,
             float* workspace, cudaStream_t stream);
void backward_data(const Conv2dGeometry& g, const Tiling& t, const float* dy, const float* w,
                   float* dx, float* workspace, cudaStream_t stream);
void backward_filter(const Conv2dGeometry& g, const Tiling& t, const float* x, const float* dy,
                     float* dw, float* workspace, cudaStream_t stream);

}  // namespace engine::cuda::conv
