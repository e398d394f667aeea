// v6: vectorized. Bigger tiles (128 x 128 per block, 8 x 8 outputs per thread) and 16-byte
// loads, from global and from shared memory, wherever the data's layout allows them.
//
// What changes from v5 (64 x 64 tiles, 4 x 4 per thread, one float per load): a thread now
// holds 64 accumulators and per k step reads 8 values of A and 8 of B as four 16-byte shared
// loads (LDS.128) for 64 FMAs: 16 FMAs per load instruction where v5 had 2. Global memory is
// read as float4 (LDG.E.128) along each operand's contiguous dimension, a quarter of the load
// instructions of v5 for the same bytes. A is kept transposed in shared memory, As[k][m],
// whichever way it is stored, so that a thread's 4 consecutive rows of A at one k are one
// LDS.128. And a 128 x 128 tile reads half as many bytes per FLOP from L2 as a 64 x 64 one.
//
// Napkin math, 4096^3: 2 * 4096^3 = 137 GFLOP; at cuBLAS's ~51 TFLOP/s on an H100/H200,
// 2.7 ms. From DRAM, A and B once and C once: 3 * 64 MB = 201 MB, 67 us at 3 TB/s, so
// 680 FLOP/byte: compute-bound by far. From L2 into shared memory, each block reads a
// 128 x 4096 strip of A and of B: 2 * 128 * 4096 * 4 B = 4 MB for 2 * 128^2 * 4096 = 134
// MFLOP, 32 FLOP/byte (v5: 16), 4.3 GB over the whole problem where v5 moved 8.6 GB. Inside
// the SM the limit is instruction issue: 64 FFMA for every 4 LDS.128, so the FMA pipes, not
// shared memory, set the pace.
//
// Tiles: 128 x 128 outputs per block, 8 deep in k; 256 threads as 16 x 16, each owning rows
// {4 ty .. 4 ty + 3} and {64 + 4 ty .. 64 + 4 ty + 3} and the same pattern of columns with tx:
// two 4-wide halves 64 apart, so that 8 neighbouring threads' LDS.128 of B cover 128
// consecutive bytes (all 32 banks once) instead of a 32-byte stride that would hit each bank
// twice. Any M, N, K: tiles cut by the matrix edge are zero-filled, stores bounds-checked.
// The float4 global loads need every row of A and B to start on a 16-byte boundary; the host
// checks that (float4_rows.h) and otherwise launches the same kernel with scalar loads.
#include "kernels/cuda_check.h"
#include "kernels/matmul/float4_rows.h"
#include "kernels/matmul/gemm.h"

namespace engine::cuda::gemm {
namespace {

constexpr int BM = 128, BN = 128, BK = 8;
constexpr int THREADS = 256;  // 16 x 16 threads, 8 x 8 outputs each
constexpr int TM = 8, TN = 8;
// Row padding of the shared tiles, in floats. 4, not 1: rows stay 16-byte aligned for the
// LDS.128 reads. It also makes the transposing stores conflict-free (see below).
constexpr int PAD = 4;
static_assert(BM * BK / 4 == THREADS && BN * BK / 4 == THREADS,
              "each thread stages exactly one float4 of each tile");

// (THREADS, 2): at most 128 registers a thread, so that two blocks (16 warps) share an SM and
// one block's loads and barriers overlap the other's FMAs; v6 has no other latency hiding.
template <bool TA, bool TB, bool VEC>
__global__ void __launch_bounds__(THREADS, 2) vectorized_kernel(const Gemm g) {
  const GemmSlice s = slice_of(g);
  // As[k][m], Bs[k][n]: at each k the inner loop reads 4 consecutive m (or n) as one float4.
  __shared__ __align__(16) float As[BK][BM + PAD];
  __shared__ __align__(16) float Bs[BK][BN + PAD];
  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  // The float4 of each tile this thread stages, counted along the operand's stored rows so
  // that neighbouring threads read neighbouring 16-byte groups (coalesced):
  //   A stored (M, K): tile rows are m, 2 groups of 4 k each;  (K, M): rows are k, 32 groups.
  //   B stored (K, N): tile rows are k, 32 groups of 4 n each; (N, K): rows are n, 2 groups.
  constexpr int A_GROUPS = TA ? BM / 4 : BK / 4;  // float4 groups per stored row of the tile
  constexpr int B_GROUPS = TB ? BK / 4 : BN / 4;
  const int a_row = tid / A_GROUPS, a_col = tid % A_GROUPS * 4;
  const int b_row = tid / B_GROUPS, b_col = tid % B_GROUPS * 4;

  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < s.K; k0 += BK) {
    // Stage the A tile. n counts how many of the 4 elements lie inside the matrix (rows past
    // the edge: none), so edge tiles are zero-filled without a separate code path.
    if (TA) {  // stored (K, M): the 4 elements are 4 consecutive m at one k, As's own layout
      const int k = k0 + a_row, m = m0 + a_col;
      const float4 v = load_row4<VEC>(s.A + int64_t{k} * g.lda + m, k < s.K ? g.M - m : 0);
      *reinterpret_cast<float4*>(&As[a_row][a_col]) = v;
    } else {  // stored (M, K): 4 consecutive k at one m, written down a column of As
      const int m = m0 + a_row, k = k0 + a_col;
      const float4 v = load_row4<VEC>(s.A + int64_t{m} * g.lda + k, m < g.M ? s.K - k : 0);
      // A warp writes 16 rows m at k = a_col + i for a_col in {0, 4}: with rows of
      // BM + 4 = 132 floats the two k are 4 * 132 = 528 = 16 (mod 32) banks apart, so the
      // 32 stores land in 32 different banks.
      As[a_col + 0][a_row] = v.x;
      As[a_col + 1][a_row] = v.y;
      As[a_col + 2][a_row] = v.z;
      As[a_col + 3][a_row] = v.w;
    }
    // The same for B, mirrored: stored (K, N) matches Bs's layout, stored (N, K) transposes.
    if (TB) {
      const int n = n0 + b_row, k = k0 + b_col;
      const float4 v = load_row4<VEC>(s.B + int64_t{n} * g.ldb + k, n < g.N ? s.K - k : 0);
      Bs[b_col + 0][b_row] = v.x;
      Bs[b_col + 1][b_row] = v.y;
      Bs[b_col + 2][b_row] = v.z;
      Bs[b_col + 3][b_row] = v.w;
    } else {
      const int k = k0 + b_row, n = n0 + b_col;
      const float4 v = load_row4<VEC>(s.B + int64_t{k} * g.ldb + n, k < s.K ? g.N - n : 0);
      *reinterpret_cast<float4*>(&Bs[b_row][b_col]) = v;
    }
    __syncthreads();  // the tiles are complete before anyone multiplies

#pragma unroll
    for (int k = 0; k < BK; ++k) {
      // 8 rows of A and 8 columns of B, each as two float4 64 apart. A warp holds two ty
      // values: its A reads are two broadcasts; its 16 tx values read 256 consecutive bytes.
      const float4 a0 = *reinterpret_cast<const float4*>(&As[k][4 * ty]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[k][BM / 2 + 4 * ty]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[k][4 * tx]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[k][BN / 2 + 4 * tx]);
      const float a[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();  // everyone is done with the tiles before they are overwritten
  }

  // acc[i][j] is the output at row (i / 4) * 64 + 4 ty + i % 4, column (j / 4) * 64 + 4 tx + j % 4.
  // Rows outside the matrix are skipped whole: written as one test per element, ptxas
  // computed all 64 addresses at once and spilled ~150 bytes under the 128-register cap.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + (i / 4) * (BM / 2) + 4 * ty + i % 4;
    if (m >= g.M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + (j / 4) * (BN / 2) + 4 * tx + j % 4;
      if (n < g.N) store_c(s, m, n, acc[i][j]);
    }
  }
}

}  // namespace

void v6_vectorized(const Gemm& g, cudaStream_t stream) {
  const bool vec = rows_allow_float4(g);
  dispatch_transposes(g, [&](auto ta, auto tb) {
    constexpr bool TA = decltype(ta)::value, TB = decltype(tb)::value;
    if (vec)
      vectorized_kernel<TA, TB, true><<<tile_grid(g, BM, BN), THREADS, 0, stream>>>(g);
    else
      vectorized_kernel<TA, TB, false><<<tile_grid(g, BM, BN), THREADS, 0, stream>>>(g);
  });
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
