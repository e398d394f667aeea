// v11: the Hopper GEMM structure. TMA copies tiles into shared memory for a producer warp,
// mbarriers hand stages between it and two consumer warpgroups, and wgmma (sm_90a) reads both
// TF32 operands from shared memory in the 128-byte swizzled layout TMA writes; clusters of two
// blocks share B's tile through TMA multicast.
//
// What changes from v10. v10 had every thread both copy (12 cp.async a tile, their addresses,
// cp.async.wait, fence.proxy.async, a block-wide barrier per K tile) and multiply (16 LDS and
// 16 cvt a tile for its register operand, and a wgmma wait per k-step so that the next
// fragment may overwrite the registers): slower than v9 (docs/kernels/matmul.md, the ladder
// table). Here:
//   - copies: one thread issues 2 or 3 TMA instructions per 48 KB stage (cp.async.bulk.tensor:
//     a 2-D box of a tensor map built on the host; edges of the matrix come back zero-filled:
//     no per-element addresses or predicates in the main loop);
//   - hand-over: per stage a "full" mbarrier (the producer announces the stage's bytes with
//     arrive.expect_tx; TMA's complete_tx counts them down) and an "empty" one (each consumer
//     warp arrives once its wgmmas reading the stage are complete). No __syncthreads in the
//     main loop, no proxy fence (TMA writes and wgmma reads are both in the async proxy);
//   - multiply: both operands come through descriptors, so the consumer warps issue four
//     wgmma.m64n256k8 per 32-deep tile and nothing else: no LDS, no cvt, and no register
//     operand whose reuse would need a wait; one tile's group stays in flight while the next
//     stage's barrier is awaited (wait_group 1);
//   - registers: the block is launched at 168 a thread (384 threads, ptxas: no spills), then
//     setmaxnreg hands the producer warpgroup's down to 40 and the consumers' up to 232,
//     room for 128 accumulators and the loop without spilling;
//   - shared memory: the 128-byte swizzle (TMA writes it, the descriptor's layout type 1 tells
//     wgmma), so that 8 rows of 128 bytes at the same k land in 8 different 16-byte bank groups;
//   - L2 traffic: blocks (x, 2j) and (x, 2j + 1) form a cluster with the same 256 columns of
//     B; each loads one 128-row half of B's tile and multicasts it into both blocks' shared
//     memory. Per block and K tile 32 KB leave L2 instead of 48 KB (v10).
//
// The layout problem, as in v10: tf32 wgmma reads shared-memory operands K-major only (the
// transpose bits exist for 16-bit types alone). With both operands from shared memory, both
// must be stored with k contiguous: A as (M, K) and B as (N, K), i.e. C = A B^T,
// transpose_a == false and transpose_b == true. That case runs here; A B (the forward pass
// and the 4096^3 rows of kernel_bench), A^T B and A^T B^T run v9, as do rows off a 16-byte
// boundary (TMA needs 16-byte aligned bases and row strides), K = 0, and split-K slices that
// are not a multiple of 32 deep (the tensor map ends at K, not at the slice's end; a slice of
// whole 32-deep tiles never reads past it). The engine's matmul (kernels/matmul.cu) brings
// the other layouts here with transposed copies into a workspace first (64 MB each way at
// 4096^3, ~45 us at 3 TB/s); this version, called alone as kernel_bench does, runs only the
// native layout: kernel_bench's "4096^3 A B^T" row is its speed, its "4096^3" row (A B) v9's.
//
// Napkin math, 4096^3 A B^T: 137 GFLOP. Tensor cores: 1024 TF32 multiply-adds per clock per
// SM (494 TFLOP/s dense at 1.83 GHz, 132 SMs); a 128 x 256 block tile is 268 MFLOP, 72 us at
// the SM's peak; 512 tiles on 132 SMs, one block per SM (193 KB of shared memory), is 3.88
// waves, i.e. 4 rounds: ~290 us at 100% of peak (cuBLAS's 368 us is 79% of that). Per block
// and K tile (1024 clocks at peak): shared memory reads by wgmma 2 x (8 KB of A + 32 KB of
// B) = 80 KB, TMA writes 48 KB: 128 bytes a clock, exactly the SM's shared-memory bandwidth,
// which is why m64n256 (the widest wgmma: most B reuse per byte of A) and 2 consumer
// warpgroups over one B tile are the shape cuBLAS uses too. L2 -> SM: 32 KB per block and K
// tile with the multicast, 2.1 GB in all (v10: 3.2 GB): 4.1 TB/s at the 525 us target, where
// cuBLAS sustains 5.8 TB/s with the same traffic. DRAM: A and B once per ~wave, ~0.3 GB.
// Expected: ~300 TFLOP/s (~460 us, ~80% of cuBLAS TF32), between 260 and 340: the main loop
// is cuBLAS's; what it lacks is a persistent grid (each block pays its pipeline fill, ~1-2 us,
// and its epilogue, ~2 us, unoverlapped: ~4% of a 75-90 us tile) and cuBLAS's epilogue
// through shared memory (here each thread stores its 128 accumulators as scalars, C read
// only when beta != 0).
//
// Tiles: 128 (M) x 256 (N) x 32 (K) per block; 384 threads = 3 warpgroups. Warpgroup 0 is
// the producer (warp 0 loops; lane 0 issues), warpgroups 1 and 2 the consumers, each 64 x 256
// with 128 FP32 accumulators a thread. 4 stages of 48 KB (A 16 KB, B 32 KB), 1024-byte
// aligned (the swizzle repeats every 8 rows of 128 bytes, and wgmma and TMA both compute it
// from address bits): 192 KB + 1 KB of alignment slack + 64 bytes of mbarriers, 193 KB of
// the 227 KB a block may have (a fifth stage would need 241 KB).
// Shared-memory layout of one operand tile (rows r = m or n, 32 k of 4 bytes = 128 bytes a
// row): byte r * 128 + 16 * ((k / 4) ^ (r % 8)) + 4 * (k % 4), i.e. TMA's SWIZZLE_128B with
// a 32 x 128 box; wgmma's K-major 128B-swizzle layout with SBO = 1024 (8 rows) and LBO
// unused (one k-step, 32 bytes, never crosses the 128-byte swizzle row); k-step kk starts 32 kk
// bytes in (wgmma applies the XOR to the address it computes, as TMA did, so advancing the
// start address along k inside the row is exact when stages are 1024-byte aligned).
//
// Precision: wgmma truncates FP32 operands to TF32 (drops the low 13 bits) of both operands
// here (v9 and v10 round one or both with cvt.rna first): per product a relative error below
// 2^-9 (plus 2^-20), within the test's TF32 bound (tests/test_matmul_ladder.cpp).
//
// History: correct on every case of test_matmul_ladder from the first GPU run, but at under
// half of cuBLAS TF32. The SASS showed why: each consumer warp's arrival on the cluster's
// "empty" barriers, written with .release.cluster, compiled to MEMBAR.ALL.GPU before the
// arrival, twice per K tile, and a warp waiting on a GPU-wide fence issues no wgmma. CTA-scope
// release and acquire (see mbarrier_arrive_cluster) about doubled the speed (measured, before
// and after: docs/kernels/matmul.md, the ladder table's v11 row and "Behind the rungs'
// comments").
#include <cstdint>

#include "core/error.h"
#include "kernels/cuda_check.h"
#include "kernels/matmul/float4_rows.h"
#include "kernels/matmul/gemm.h"
#include "kernels/matmul/tma.h"
#include "kernels/matmul/wgmma.h"

#include "kernels/device_caps.h"

// kernels/CMakeLists.txt compiles this file for sm_90a alone, and only where the build has
// code for compute capability 9.0.
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "v11_tf32_tma.cu is built for sm_90a only"
#endif

namespace engine::cuda::gemm {

void v9_tf32_mma(const Gemm& g, cudaStream_t stream);  // every layout v11 does not run

namespace {

constexpr int BM = 128;  // C rows per block: 2 consumer warpgroups x wgmma's M = 64
constexpr int BN = 256;  // C columns per block: wgmma's largest N
constexpr int BK = 32;   // K per stage: 32 floats = 128 bytes, one swizzle row
constexpr int STAGES = 4;
constexpr int CONSUMERS = 2;                     // consumer warpgroups
constexpr int THREADS = 128 * (1 + CONSUMERS);   // + the producer warpgroup: 384
constexpr int CONSUMER_WARPS = 4 * CONSUMERS;    // arrivals on an "empty" barrier per block
constexpr int ACC = 64 * BN / 128;               // accumulators per consumer thread: 128
static_assert(ACC == WGMMA_ACC, "one m64n256k8 accumulator tile per consumer thread");
constexpr int BOX_ROWS = 128;                    // rows per TMA box: A's tile, half of B's
constexpr int ROW_BYTES = BK * 4;                // 128
constexpr int A_STAGE_BYTES = BM * ROW_BYTES;    // 16 KB
constexpr int B_STAGE_BYTES = BN * ROW_BYTES;    // 32 KB
constexpr int BOX_BYTES = BOX_ROWS * ROW_BYTES;  // 16 KB
constexpr int STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES;  // 48 KB
// Offsets from the 1024-byte aligned base: the A stages, the B stages, then 2 x STAGES
// mbarriers (8 bytes each).
constexpr int A_OFFSET = 0;
constexpr int B_OFFSET = STAGES * A_STAGE_BYTES;
constexpr int FULL_OFFSET = STAGES * STAGE_BYTES;
constexpr int EMPTY_OFFSET = FULL_OFFSET + 8 * STAGES;
constexpr int SMEM_BYTES = SWIZZLE_ALIGN + EMPTY_OFFSET + 8 * STAGES;  // + alignment slack
constexpr int PRODUCER_REGISTERS = 40, CONSUMER_REGISTERS = 232;
static_assert(SMEM_BYTES <= 227 * 1024, "an H100 block has at most 227 KB of shared memory");
static_assert(A_STAGE_BYTES % SWIZZLE_ALIGN == 0 && B_STAGE_BYTES % SWIZZLE_ALIGN == 0 &&
                  BOX_BYTES % SWIZZLE_ALIGN == 0 && (64 * ROW_BYTES) % SWIZZLE_ALIGN == 0,
              "every stage, B half and consumer slice of A starts on a swizzle period");
static_assert(BM == CONSUMERS * 64 && BM == BOX_ROWS && BN == 2 * BOX_ROWS, "tile shape");
static_assert(STAGE_BYTES < (1 << 20), "an mbarrier's tx-count holds at most 2^20 - 1");
static_assert(A_STAGE_BYTES == BOX_BYTES && B_STAGE_BYTES == 2 * BOX_BYTES, "boxes per stage");
// setmaxnreg: multiples of 8 in 24..256, and the block's total may not exceed what it was
// launched with, 384 x 168 (__launch_bounds__(384, 1) caps a thread at 65536 / 384 -> 168).
static_assert(128 * PRODUCER_REGISTERS + 128 * CONSUMERS * CONSUMER_REGISTERS <= THREADS * 168,
              "register budget");


// -- registers --
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  SM90A_ASM("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  SM90A_ASM("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

// One block computes C[m0 .. m0 + 127][n0 .. n0 + 255] (or its split-K partial) from A
// (M, K) and B (N, K), both through their tensor maps (rows of 32 k per box, 128 rows).
// CLUSTER: 1, or 2 blocks along y (M) sharing B's tile by multicast; launch() rounds the
// grid's y up to a multiple of it, so a block may lie wholly below M: it still loads and
// multicasts its half of B for its partner, and stores nothing.
template <int CLUSTER>
__global__ void __launch_bounds__(THREADS, 1)
    tma_wgmma_kernel(const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b, const Gemm g) {
  static_assert(CLUSTER == 1 || CLUSTER == 2, "B's tile is two boxes: 1 or 2 blocks share it");
  // The dynamic shared memory, its base rounded up to the swizzle period (the runtime only
  // promises 16 bytes; SMEM_BYTES includes the slack).
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const uint32_t base =
      (static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw)) + SWIZZLE_ALIGN - 1) &
      ~uint32_t{SWIZZLE_ALIGN - 1};
  auto a_stage = [&](int s) { return base + A_OFFSET + static_cast<uint32_t>(s * A_STAGE_BYTES); };
  auto b_stage = [&](int s) { return base + B_OFFSET + static_cast<uint32_t>(s * B_STAGE_BYTES); };
  auto full = [&](int s) { return base + FULL_OFFSET + static_cast<uint32_t>(8 * s); };
  auto empty = [&](int s) { return base + EMPTY_OFFSET + static_cast<uint32_t>(8 * s); };

  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const GemmSlice slice = slice_of(g);  // C or this slice's partial; K: the slice's depth
  const int k_first = g.k_slice > 0 ? static_cast<int>(blockIdx.z) * g.k_slice : 0;
  const int tiles = (slice.K + BK - 1) / BK;  // >= 1: launch() sends K = 0 to v9
  const int m0 = static_cast<int>(blockIdx.y) * BM, n0 = static_cast<int>(blockIdx.x) * BN;

  // full[s]: one arrival (the producer's expect_tx) plus the stage's bytes (48 KB, less any
  // box skipped below) as TMA transactions.
  // empty[s]: one arrival per consumer warp of every block whose TMA writes into stage s of
  // this block, i.e. of the whole cluster.
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbarrier_init(full(s), 1);
      mbarrier_init(empty(s), CONSUMER_WARPS * CLUSTER);
    }
    fence_mbarrier_init();
  }
  // No copy may be issued, into this block or (multicast) its partner, before both blocks'
  // barriers are initialized.
  if (CLUSTER > 1)
    cluster_sync();
  else
    __syncthreads();

  if (warp < 4) {
    // The producer warpgroup. Warps 1-3 only give their registers back.
    setmaxnreg_dec<PRODUCER_REGISTERS>();
    if (warp == 0) {
      const uint32_t rank = CLUSTER > 1 ? cluster_rank() : 0;
      if (lane == 0) {
        prefetch_tensor_map(&map_a);
        prefetch_tensor_map(&map_b);
      }
      // Boxes that lie wholly outside the matrix are not loaded: the block below M (see above)
      // skips A's, and B's second half is skipped when N ends within the first. Their stage
      // space then holds stale data, which reaches only accumulators of rows m >= M or
      // columns n >= N (row m of C reads row m of A alone, column n row n of B alone): never
      // stored. Both blocks of a cluster share n0, so they agree on B's boxes, and each
      // expects exactly the bytes that will reach it.
      const bool load_a = m0 < g.M;
      const bool load_b1 = n0 + BOX_ROWS < g.N;  // B's first box always holds row n0 < N
      const auto stage_bytes =
          static_cast<uint32_t>((load_a ? BOX_BYTES : 0) + (load_b1 ? 2 : 1) * BOX_BYTES);
      for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        // Round t / STAGES of stage s may start once every consumer warp of the cluster has
        // released round t / STAGES - 1 (that is, completed phase t / STAGES - 1 of empty[s]).
        if (t >= STAGES) mbarrier_wait(empty(s), static_cast<uint32_t>(t / STAGES - 1) & 1);
        if (lane == 0) {
          mbarrier_arrive_expect_tx(full(s), stage_bytes);
          const int k = k_first + t * BK;
          if (load_a) tma_load(a_stage(s), &map_a, k, m0, full(s));
          // B's tile is two boxes of 128 rows (n). In a cluster, block `rank` loads box `rank`
          // into its place in both blocks' stage (mask 0b11: ranks 0 and 1); alone, a block
          // loads both.
          if (CLUSTER > 1) {
            const int h = static_cast<int>(rank);
            if (h == 0 || load_b1)
              tma_load_multicast(b_stage(s) + static_cast<uint32_t>(h * BOX_BYTES), &map_b, k,
                                 n0 + h * BOX_ROWS, full(s), uint16_t{0b11});
          } else {
            tma_load(b_stage(s), &map_b, k, n0, full(s));
            if (load_b1) tma_load(b_stage(s) + BOX_BYTES, &map_b, k, n0 + BOX_ROWS, full(s));
          }
        }
        __syncwarp();
      }
    }
  } else {
    // A consumer warpgroup: rows 64 c .. 64 c + 63 of the block tile, all 256 columns.
    setmaxnreg_inc<CONSUMER_REGISTERS>();
    const int ct = tid - 128, c = ct / 128;
    float acc[ACC];  // written first by the first wgmma (scale-d false)
    for (int t = 0; t < tiles; ++t) {
      const int s = t % STAGES;
      mbarrier_wait(full(s), static_cast<uint32_t>(t / STAGES) & 1);  // the stage has landed
      wgmma_fence();
      const uint64_t desc_a = sw128_descriptor(a_stage(s) + static_cast<uint32_t>(c * 64 * ROW_BYTES));
      const uint64_t desc_b = sw128_descriptor(b_stage(s));
#pragma unroll
      for (int kk = 0; kk < BK / 8; ++kk) {
        wgmma_m64n256k8_ss(acc, desc_a + kk * DESC_PER_KSTEP, desc_b + kk * DESC_PER_KSTEP,
                           t > 0 || kk > 0);
      }
      wgmma_commit();
      // With tile t's group queued behind it, wait for tile t - 1's: once complete, nothing
      // of this warp reads stage (t - 1) % STAGES any more, and the warp releases it to the
      // producers of every block that writes into it.
      if (t > 0) {
        wgmma_wait<1>();
        if (lane == 0) {
          const uint32_t bar = empty((t - 1) % STAGES);
          if (CLUSTER > 1) {
            for (uint32_t r = 0; r < CLUSTER; ++r) mbarrier_arrive_cluster(bar, r);
          } else {
            mbarrier_arrive_local(bar);
          }
        }
        __syncwarp();
      }
    }
    // The last tile's stage is never released: no producer waits for it.
    wgmma_wait<0>();
    fence_accumulators(acc);

    // Epilogue: C = alpha acc + beta C (or the partial), elements inside the matrix only.
#pragma unroll
    for (int i = 0; i < ACC; ++i) {
      const int m = m0 + acc_row(ct, i), n = n0 + acc_col(ct, i);
      if (m < g.M && n < g.N) store_c(slice, m, n, acc[i]);
    }
  }
  // A block may not exit while its partner can still multicast into its shared memory or
  // arrive on its barriers: every thread of the cluster meets here last.
  if (CLUSTER > 1) cluster_sync();
}

// The tensor map of a K-major operand stored (rows, K) with row length ld floats: boxes of
// 32 k x 128 rows (swizzled_tensor_map, kernels/matmul/tma.h), built per call.
CUtensorMap k_major_tensor_map(const float* data, int rows, int k, int ld) {
  return swizzled_tensor_map<2>(
      data, {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)},
      {static_cast<cuuint64_t>(ld) * sizeof(float)}, {BK, BOX_ROWS},
      detail::concat("v11_tf32_tma: a (", rows, ", ", k, ") operand with row length ", ld));
}

// Launches one cluster size, raising the shared-memory limit the first time (past 48 KB a
// kernel must opt in; once per instantiation).
template <int CLUSTER>
void launch(const Gemm& g, cudaStream_t stream) {
  static const bool configured = [] {
    CHECK_CUDA(cudaFuncSetAttribute(tma_wgmma_kernel<CLUSTER>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    return true;
  }();
  (void)configured;
  const CUtensorMap map_a = k_major_tensor_map(g.A, g.M, g.K, g.lda);  // A stored (M, K)
  const CUtensorMap map_b = k_major_tensor_map(g.B, g.N, g.K, g.ldb);  // B stored (N, K)
  dim3 grid = tile_grid(g, BM, BN);  // x: N tiles, y: M tiles, z: K slices
  grid.y = (grid.y + CLUSTER - 1) / CLUSTER * CLUSTER;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = 1;
  attribute[0].val.clusterDim.y = CLUSTER;
  attribute[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(THREADS);
  config.dynamicSmemBytes = SMEM_BYTES;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = CLUSTER > 1 ? 1 : 0;
  CHECK_CUDA(cudaLaunchKernelEx(&config, tma_wgmma_kernel<CLUSTER>, map_a, map_b, g));
}

}  // namespace

// sm_90a code runs on compute capability 9.0 only (H100, H200): device_caps.h decides, once;
// TMA also needs the driver's tensor-map encoder.
bool v11_tf32_tma_available() {
  static const bool available = device_caps().kernels.wgmma_tma && tensor_map_encoder() != nullptr;
  return available;
}

void v11_tf32_tma(const Gemm& g, cudaStream_t stream) {
  if (!v11_tf32_tma_available())
    throw Error(
        "v11_tf32_tma needs a compute capability 9.0 GPU (and no lower "
        "ENGINE_MAX_COMPUTE_CAPABILITY) and a driver with cuTensorMapEncodeTiled");
  // A B^T with TMA-able rows (16-byte aligned bases and row lengths; split-K slices move the
  // base by k_slice elements) and slices of whole 32-deep tiles; everything else: v9 (header).
  const bool native = !g.transpose_a && g.transpose_b && g.K > 0 && rows_allow_float4(g) &&
                      g.k_slice % BK == 0;
  if (!native) {
    v9_tf32_mma(g, stream);
    return;
  }
  if (g.M == 0 || g.N == 0) return;  // C is empty: nothing to write
  // Clusters of 2 need 2 tiles down M to share B between; a single row of tiles runs alone.
  if (g.M > BM)
    launch<2>(g, stream);
  else
    launch<1>(g, stream);
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
