// v2: coalesced. Same work per thread as v1; consecutive threads take consecutive columns.
//
// What changes from v1 (threadIdx.x -> row m): threadIdx.x now walks the columns n. A warp
// reads B[k, n .. n+31], 128 consecutive bytes, one cache line per load instead of 32; it
// reads one A[m, k] for all 32 lanes, a broadcast; and it writes 32 consecutive floats of C.
// Each load instruction now costs about one L1 wavefront instead of about 32, so the load
// path does ~16x more useful work per clock. Nothing else changes: every FMA still issues two
// global loads, and the reuse of A and B across threads lives only in the L1 cache, which
// may evict it. (A transposed B, stored (N, K), puts consecutive n ldb floats apart again:
// v2 cannot fix that without staging through shared memory, which is v3.)
//
// Napkin math, 4096^3: 137 GFLOP; still 2 loads per FMA (0.25 FLOP/byte at the level of
// load instructions). If L1 keeps every line, a block of 32 x 32 outputs fetches 32 rows of
// A and 32 columns of B over K: 2 x 32 x 4096 x 4 B = 1 MB from L2 for 8.4 MFLOP, 8
// FLOP/byte, so L2 and DRAM are not the limit; L1 is. Two warp loads (two wavefronts) per 32
// FMAs at ~one wavefront per clock per SM: ~32 FLOP per clock per SM, ~8 TFLOP/s (~17 ms)
// at best on an H100/H200, ~1/8 of the FP32 peak; L1 misses keep it below that.
//
// Blocks: 32 x 32 threads, one output each; blockIdx.x picks 32 columns, blockIdx.y 32 rows
// (tile_grid). Threads outside M x N return at once: any M, N, K is correct.
#include "kernels/cuda_check.h"
#include "kernels/matmul/gemm.h"

namespace engine::cuda::gemm {
namespace {

constexpr int BM = 32, BN = 32;  // outputs per block, one per thread

template <bool TA, bool TB>
__global__ void __launch_bounds__(BM * BN) coalesced_kernel(const Gemm g) {
  const GemmSlice s = slice_of(g);
  // Consecutive threads of a warp (threadIdx.x) take consecutive columns n: B and C are
  // read and written along their rows, A[m, k] is one address for the whole warp.
  const int n = blockIdx.x * BN + threadIdx.x;
  const int m = blockIdx.y * BM + threadIdx.y;
  if (m >= g.M || n >= g.N) return;

  float acc = 0.0f;
  for (int k = 0; k < s.K; ++k) acc += load_a<TA>(s.A, g.lda, m, k) * load_b<TB>(s.B, g.ldb, k, n);
  store_c(s, m, n, acc);
}

}  // namespace

void v2_coalesced(const Gemm& g, cudaStream_t stream) {
  dispatch_transposes(g, [&](auto ta, auto tb) {
    coalesced_kernel<decltype(ta)::value, decltype(tb)::value>
        <<<tile_grid(g, BM, BN), dim3(BN, BM), 0, stream>>>(g);
  });
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
