// The engine's GPU matmul (core/ops/matmul.h): C = alpha * op(A) @ op(B) + beta * C through
// the best kernel for the shape: small_splitk (kernels/matmul/small_splitk.cu) for small and
// skinny outputs, the best versions of the SGEMM ladder (kernels/matmul/) for large ones,
// kernels/dot.cu for (1 x K) @ (K x 1), and a wide Dense layer's backward products on the
// Hopper convolution kernels (kernels/conv2d.h). Under --device cudnn the dispatch point calls
// vendor::matmul (cuBLAS, kernels/vendor/cublas_gemm.cu) instead, for every shape.
//
// Napkin math, the seed-000 shapes (batch 32):
//   small forward  (32 x 784) @ (784 x 128):   6.4 MFLOP, 0.5 MB of operands
//   wide forward   (32 x 1000) @ (1000 x 1000): 64 MFLOP, 4.1 MB
//   wide dW        (1000 x 32) @ (32 x 1000):   64 MFLOP, 4.1 MB written
// At 51 TFLOP/s (cuBLAS FP32 on an H100) the wide GEMMs are ~1.3 us of arithmetic and ~1.4
// us of memory: small, and so limited by how many SMs get work and by latency. A (32 x 1000)
// output is only 32 tiles of 32 x 32 for 132 SMs, hence split-K: slices of K each compute a
// partial product, and the last slice of each tile to finish adds them in a fixed order
// (deterministic, unlike atomics) and applies alpha and beta, in the same launch. The large
// kernels' split-K adds the slices in a second launch (split_k_reduce): there the extra ~2 us
// is small next to the GEMM.
#include <algorithm>

#include "core/conv_geometry.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/strided_copy.h"
#include "kernels/conv2d.h"
#include "kernels/cuda_device.h"
#include "kernels/dot.h"
#include "kernels/launch.h"
#include "kernels/matmul/gemm.h"
#include "kernels/matmul/small_splitk.h"

namespace engine::cuda {
namespace {

// The engine picks its kernel by the shape of C (and K) and the --tf32 setting (the
// measurements behind each choice: docs/kernels/matmul.md, "The engine's choice"):
//  - small outputs (the seed MLPs' 32 x 128, 784 x 128, 32 x 1000 ...), and outputs whose
//    large tiles leave SMs idle with K too shallow to split them (the wide MLP's dW, 1000 x
//    1000 x 32: 64 tiles of 128 x 128 and one K tile each, where v7 lost to the smaller tiles
//    of v4): small_splitk. Its 32 x 32 tiles and one-launch split-K target latency; v5's
//    64 x 64 tiles and a second launch lost to cuBLAS at every seed shape but dX2 (32 x 10 @
//    10 x 128). small_splitk beats cuBLAS on the seed MLP's products; the wide MLP's are about
//    even, and CIFAR's dense layer, the one bound by arithmetic, still loses.
//  - large outputs (both sides >= GPU_MATMUL_LARGE): the warp-tiled kernel, v7, much faster
//    than v5 from 2048^3 on, with split-K only while its tiles cannot fill the SMs.
//  - outputs with at least a wave of 128 x 256 tiles (2048^2 has 128 for 132 SMs): the
//    cp.async big-tile kernel, v8, closer to cuBLAS than v7 from 2048^3 on. At 1024^3 its
//    32 tiles leave three quarters of the SMs idle and it loses to v7 + split-K.
//  - large outputs with --tf32: the tensor-core kernels. With at least a wave of 128 x 256
//    tiles and K a multiple of 4, v11 (TMA + wgmma, the fastest TF32 rung by far): it reads
//    both operands K-major only, so an operand stored the other way is first copied
//    transposed into a workspace (see k_major_copy); else v9 (mma.sync). Small outputs stay
//    on small_splitk, in FP32 where they are shallow and little work (there the time is
//    latency, not arithmetic, and FP32 is exact), on its TF32 tensor-core form from
//    GPU_MATMUL_SMALL_TF32_MIN_K deep or GPU_MATMUL_SMALL_TF32_MIN_FMA multiply-adds on; a few
//    rows, wide or deep, take v9 (gpu_matmul_few_rows_tf32).
//  - a wide Dense layer's backward products under --tf32 on Hopper, before all of the above:
//    the passes of a 1 x 1 convolution, on the convolutions' TMA + wgmma kernels
//    (gpu_matmul_dense_backward_as_conv, ran_dense_backward_as_conv below).
struct EngineKernel {
  const char* version;  // a name in the ladder's table (kernels/matmul/versions.cu)
  int tile_m, tile_n;   // its output tile
  int min_slice;        // shallowest K slice worth a block: several of its K tiles
};
constexpr EngineKernel LARGE_FP32{"v7_warptile", GPU_MATMUL_LARGE_TILE, GPU_MATMUL_LARGE_TILE,
                                  GPU_MATMUL_LARGE_MIN_SLICE};
constexpr EngineKernel HUGE_FP32{"v8_async_bigtile", 128, 256, 128};
constexpr EngineKernel LARGE_TF32{"v9_tf32_mma", 128, 128, 128};
constexpr EngineKernel HUGE_TF32{"v11_tf32_tma", 128, 256, 128};
constexpr int MAX_SLICES = 64;  // bounds the large kernels' split-K workspace to 64 x M x N floats

int64_t tiles_of(const EngineKernel& kernel, int M, int N) {
  return int64_t{(M + kernel.tile_m - 1) / kernel.tile_m} * ((N + kernel.tile_n - 1) / kernel.tile_n);
}

// Whether this build has the kernel's version (v10 and v11 only where it has sm_90a code) and
// this GPU can run it (its `available`, from device_caps.h).
bool usable(const EngineKernel& kernel) {
  const gemm::Version* v = gemm::find_version(kernel.version);
  return v != nullptr && (v->available == nullptr || v->available());
}

bool fills_a_wave(const EngineKernel& kernel, int M, int N) {
  return tiles_of(kernel, M, N) >= multiprocessor_count() * 9 / 10;
}

// v11 with K-major copies: a wave of its tiles (fewer leave SMs idle, and split-K would need
// slices of whole 32-deep tiles), and K a multiple of 4 (TMA's rows start on 16 bytes; the
// copies are (rows, K) with row length K).
bool huge_tf32_fits(int M, int N, int K) {
  return fills_a_wave(HUGE_TF32, M, N) && K % 4 == 0 &&
         usable(HUGE_TF32);
}

const EngineKernel& large_kernel_for(int M, int N, bool tf32) {
  if (tf32) return LARGE_TF32;  // set_tf32 allowed it: the GPU has mma.sync TF32 (sm_80+)
  const bool huge = fills_a_wave(HUGE_FP32, M, N) && usable(HUGE_FP32);
  return huge ? HUGE_FP32 : LARGE_FP32;
}

// How many slices of K: enough to give every SM a block, each slice at least min_slice deep.
// Short slices matter even when SMs are not short: a block walks its K tiles one after the
// other, each waiting ~1 us for global memory, so a lone block over all of K is a long chain
// where four slices take a quarter of it (measured: docs/kernels/matmul.md, "The engine's
// choice").
int split_k_slices(const EngineKernel& kernel, int M, int N, int K) {
  const int64_t tiles = tiles_of(kernel, M, N);
  const int64_t by_sms = (multiprocessor_count() + tiles - 1) / tiles;
  const int64_t by_depth = K / kernel.min_slice;
  return static_cast<int>(std::max<int64_t>(1, std::min({by_sms, by_depth, int64_t{MAX_SLICES}})));
}

// C = A B^T through v11, whose operands must both be stored K-major: A as (M, K), B as (N, K).
// An operand stored the other way (A^T's (K, M), B's (K, N)) is first copied transposed into
// a workspace from the caching allocator (no cudaMalloc in the steady state, capturable).
// Napkin math at 4096^3: a copy reads and writes 64 MB, ~45 us at 3 TB/s, next to v11's ~400
// us: the forward A B pays ~11%, A^T B (a weight gradient) ~22%.
void matmul_k_major_tf32(const CudaDevice& gpu, gemm::Gemm g, const Tensor& a, const Tensor& b) {
  // (K, rows) stored with row length ld -> (rows, K) with row length K.
  auto k_major_copy = [&](const Tensor& stored, int rows, int ld) {
    Tensor copy = Tensor::empty({rows, g.K}, DType::F32, gpu.device());
    const Walk3d from{0, {ld, 1, 0}}, to{0, {1, g.K, 0}};
    strided_copy(stored, copy, {g.K, rows, 1}, from, to);
    return copy;
  };
  Tensor a_copy, b_copy;  // alive until the launch below is enqueued, then back to the cache
  if (g.transpose_a) {
    a_copy = k_major_copy(a, g.M, g.lda);
    g.A = a_copy.data<float>();
    g.lda = g.K;
    g.transpose_a = false;
  }
  if (!g.transpose_b) {
    b_copy = k_major_copy(b, g.N, g.ldb);
    g.B = b_copy.data<float>();
    g.ldb = g.K;
    g.transpose_b = true;
  }
  gemm::version_named(HUGE_TF32.version).launch(g, stream());
}

// A Dense layer of `inputs` -> `outputs` at a batch of `batch` rows as a 1 x 1 convolution
// over 1 x 1 images: x (batch, 1, 1, inputs), w (1, 1, inputs, outputs), y (batch, 1, 1, outputs).
Conv2dGeometry dense_as_1x1_conv(int64_t batch, int64_t inputs, int64_t outputs) {
  return conv2d_geometry({batch, 1, 1, inputs}, {1, 1, inputs, outputs}, 1, 1, Padding::Valid);
}

// A Dense layer's backward products on the Hopper convolution kernels
// (gpu_matmul_dense_backward_as_conv), as kernels/conv2d.h runs them: false where those
// kernels do not apply (another GPU, a build without sm_90a code, channels not a multiple of
// 32, operands off 16 bytes), and the ladder's kernels run instead. C overwritten: alpha 1,
// beta 0 only.
bool ran_dense_backward_as_conv(const Tensor& a, bool transpose_a, const Tensor& b, Tensor& c, float alpha,
                                float beta) {
  if (alpha != 1.0f || beta != 0.0f) return false;
  if (!transpose_a) {  // dX (batch, inputs) = dY (batch, outputs) W^T, W stored (inputs, outputs)
    const Conv2dGeometry conv = dense_as_1x1_conv(c.dim(0), c.dim(1), a.dim(1));
    Tensor dx = c.view(conv.x_shape());
    return ran_on_hopper(conv::Pass::BackwardData, conv, a.view(conv.y_shape()), b.view(conv.w_shape()), dx);
  }
  // dW (inputs, outputs) = X^T dY, X stored (batch, inputs), dY (batch, outputs)
  const Conv2dGeometry conv = dense_as_1x1_conv(a.dim(0), c.dim(0), c.dim(1));
  Tensor dw = c.view(conv.w_shape());
  return ran_hopper_filter(conv, a.view(conv.x_shape()), b.view(conv.y_shape()), dw, nullptr);
}

}  // namespace

void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta) {
  const int64_t M = c.dim(0), N = c.dim(1);
  const int64_t K = transpose_a ? a.dim(0) : a.dim(1);
  ENGINE_CHECK(M < (int64_t{1} << 31) && N < (int64_t{1} << 31) && K < (int64_t{1} << 31),
               "matmul: dimensions beyond 2^31 are not supported");
  if (M == 0 || N == 0) return;
  if (K == 0) {  // an empty sum: C = beta * C
    axpby(0.0f, c, beta, c);
    return;
  }
  if (M == 1 && N == 1) {  // (1 x K) @ (K x 1): memory-bound (kernels/dot.cu)
    dot(a, b, c, alpha, beta);
    return;
  }
  const CudaDevice& gpu = device_of(c);  // its TF32 setting and split-K counters
  gemm::Gemm g;
  g.M = static_cast<int>(M);
  g.N = static_cast<int>(N);
  g.K = static_cast<int>(K);
  g.A = a.data<float>();
  g.lda = static_cast<int>(a.dim(1));
  g.transpose_a = transpose_a;
  g.B = b.data<float>();
  g.ldb = static_cast<int>(b.dim(1));
  g.transpose_b = transpose_b;
  g.C = c.data<float>();
  g.ldc = g.N;
  g.alpha = alpha;
  g.beta = beta;

  if (gpu.tf32() &&
      gpu_matmul_dense_backward_as_conv(g.M, g.N, g.K, transpose_a, transpose_b, multiprocessor_count()) &&
      ran_dense_backward_as_conv(a, transpose_a, b, c, alpha, beta))
    return;
  // Fewer large tiles than SMs with K too shallow for two of their slices (split_k_slices)
  // would leave most SMs idle: the small kernel then too, but for the few-row products that
  // v9 does faster under --tf32 (gpu_matmul_few_rows_tf32).
  if (gpu_matmul_small_output(g.M, g.N, g.K, multiprocessor_count()) &&
      !(gpu.tf32() && gpu_matmul_few_rows_tf32(g.M, g.N, g.K, multiprocessor_count()))) {
    g.k_slice = gemm::small_splitk_k_slice(g.M, g.N, g.K, multiprocessor_count());
    Tensor workspace;  // from the caching allocator: no cudaMalloc in the steady state or capture
    if (g.k_slice > 0) {
      workspace = Tensor::empty({gemm::small_splitk_workspace(g)}, DType::F32, gpu.device());
      g.partial = workspace.data<float>();
    }
    const bool tf32 = gpu.tf32() && !gpu_matmul_stays_fp32(g.M, g.N, g.K, multiprocessor_count());
    gemm::small_splitk(g, tf32, gpu.splitk_counters(), stream());
    return;
  }
  if (gpu.tf32() && huge_tf32_fits(g.M, g.N, g.K)) {
    matmul_k_major_tf32(gpu, g, a, b);
    return;
  }
  const EngineKernel& kernel = large_kernel_for(g.M, g.N, gpu.tf32());
  const int slices = split_k_slices(kernel, g.M, g.N, g.K);
  Tensor workspace;
  int used_slices = 1;
  if (slices > 1) {
    g.k_slice = ((g.K + slices - 1) / slices + 15) / 16 * 16;
    used_slices = (g.K + g.k_slice - 1) / g.k_slice;
    workspace = Tensor::empty({used_slices, M, N}, DType::F32, gpu.device());
    g.partial = workspace.data<float>();
  }
  gemm::version_named(kernel.version).launch(g, stream());
  if (used_slices > 1) gemm::split_k_reduce(g, used_slices, stream());
}

}  // namespace engine::cuda
