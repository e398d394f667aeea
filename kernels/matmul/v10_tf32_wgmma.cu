// v10: Hopper's warpgroup tensor-core instruction, wgmma.mma_async (sm_90a), in TF32.
//
// What changes from v9: the instruction. v9's mma.sync.m16n8k8 is one warp's synchronous
// 16 x 8 x 8 product of operands the warp has loaded into registers itself: per 16 of them it
// issues 24 LDS and 24 cvt, and the tensor pipe idles while the warps feed it (ncu's readings
// and v9's speed: docs/kernels/matmul.md, "Behind the rungs' comments"). wgmma is one
// warpgroup's (4 warps) asynchronous 64 x 256 x 8 product, 128 x more work per instruction,
// and the tensor cores read its B operand straight from shared memory through a 64-bit "matrix
// descriptor" (address, strides, layout): no LDS, no registers, and the warps are free while
// it runs. The accumulators stay in registers (64 x 256 floats: 128 a thread). Issue,
// completion and visibility are explicit: wgmma.fence, commit_group, wait_group and
// fence.proxy.async (see "Synchronisation" below, and the main loop).
//
// The transpose problem. For .tf32, operands in shared memory must be K-major (k contiguous;
// only 16-bit types may be transposed by the hardware). A stored (M, K) is; B stored (K, N),
// which the 4096^3 benchmark and every forward pass use, is not. Costed at 4096^3, against
// the 510 us (270 TFLOP/s) this design was aimed at:
//   (a) a pre-pass writing B^T to a workspace: 64 MB read + 64 MB written, ~45 us, leaving
//       465 us (77% of cuBLAS) for the GEMM itself, and a workspace Version does not have;
//   (b) transposing on the way in: LDG into registers, 4 x 4 transposes, STS along k. Another
//       32 registers a thread per tile in flight on top of 128 accumulators, and the loads'
//       latency hidden by hand, two tiles ahead;
//   (c) wgmma's other form, with A in registers, on C^T = B^T A^T: the K-major A becomes the
//       shared-memory operand, and B the register operand, which each thread loads from
//       shared memory itself (LDS), from any layout; so B's tile is copied in as stored, by
//       cp.async like A's. Cost: 16 LDS + 16 cvt a thread per 32-deep tile (16 KB of shared
//       reads per block, where the tensor cores read 64 KB).
// v10 takes (c), as CUTLASS does for TF32 with a row-major B (SwapAB in its cp.async
// register-A mainloop). In the kernel's terms D (P x Q) = R (P x K) S^T, R in registers, S
// stored (Q, K) in shared memory:
//   A B     (NN): R = B stored (K, N), S = A (M, K);  D = C^T (SWAP)
//   A B^T   (NT): R = A stored (M, K), S = B (N, K);  D = C
//   A^T B^T (TT): R = A stored (K, M), S = B (N, K);  D = C
//   A^T B   (TN): no operand is K-major: runs v9, as do rows off a 16-byte boundary
//                 (rows_allow_float4 false; cp.async copies 16 bytes) and K = 0.
//
// Precision: wgmma truncates an FP32 operand from shared memory to TF32 (PTX ISA: it "will
// truncate lower 13 bits of the 32-bit input data"), a relative error below 2^-10; the
// register operand is rounded first (cvt.rna, 2^-11), as v9 rounds both.
//
// Synchronisation. wgmma reads its register operand and writes its accumulators
// asynchronously, and the compiler does not know it: PTX makes it undefined to write a
// register that a wgmma still in flight reads, and it is the program's job, not ptxas's, to
// wait (wgmma.wait_group) first. The first version of this kernel committed one group per K
// tile, waited with "1 pending" and then, in the next iteration, wrote that tile's fragments
// again: the same PTX registers (a loop body's registers are the same every iteration) while
// the previous tile's four wgmmas still read them. At full speed the tensor cores then took
// some of their A operand from the next tile, or from whatever else ptxas had put in those
// registers once it considered them free (addresses: hence results of 1e28 and NaN); under
// compute-sanitizer, which slows every shared-memory access down, each group was long done
// before its registers were touched, and every test passed. Now each k-step is its own group,
// and k-step kk of a tile writes its fragment only after "BK / 8 - 1 pending" has retired
// k-step kk of the previous tile, the last reader of those registers (see the main loop).
// The other orderings, as the PTX ISA requires them: cp.async's writes (generic proxy) reach
// wgmma's reads (async proxy) through cp.async.wait_group, fence.proxy.async by the writing
// thread and a barrier; wgmma.fence after the fragment is written and before the wgmma that
// reads it; a stage is refilled only after every wgmma reading it has completed (the barrier
// after the waits); the first wgmma of a block overwrites its accumulators (scale-d false);
// and no accumulator is read before the last wait (an empty asm "redefines" them after it).
// The layouts, the descriptor, the fragment mappings, the bounds and split-K were checked on
// the host, by running this file's own loaders and mappings through an emulation of wgmma
// written from the PTX ISA (K-major, no swizzle: LBO is the offset between the two core
// matrices along K, SBO between groups of 8 rows).
//
// Napkin math, 4096^3: 137 GFLOP; cuBLAS TF32 383 TFLOP/s (358 us). Tensor cores: ~1024 TF32
// multiply-adds a clock per SM (~495 TFLOP/s dense); a block (one per SM) does 128 x 256 x 32
// = 1 M per K tile: 1024 clocks at peak. Shared memory (128 bytes a clock) per K tile: the
// tensor cores read the 32 KB S tile once per warpgroup (64 KB), the R fragments are 16 KB of
// LDS, cp.async writes 48 KB: ~1000 clocks, as many as the tensor cores need at peak. L2 ->
// SM: 48 KB per block and K tile, 3.2 GB in all (cuBLAS's 2-CTA clusters multicast one
// operand and move ~2.1 GB): at an L2 bandwidth of 5.5-7 TB/s, 460-590 us, i.e. 230-300
// TFLOP/s is the ceiling of this design, L2-bound, before any latency left uncovered. DRAM
// (~300 MB: B is read again by each wave of 132 blocks) is far from a limit.
// Expected speed: about what the racy version measured, a little below v9
// (docs/kernels/matmul.md, "Behind the rungs' comments"), not the ceiling: the fix changes no
// data movement and keeps as much tensor work queued (three k-steps of each warpgroup, 6 x 128
// clocks at peak, while a warp loads its next fragment; ptxas adds 16 registers, no spills).
// That version spent ~4000 clocks per K tile where the napkin allows ~1000-1500; the suspects
// to read in ncu first: the barrier per K tile and the cp.async issue (12 copies and their
// addresses per thread) on the warps that also feed the tensor cores, fence.proxy.async if it
// waits for the next tile's copies still in flight, and tensor-core reads of the unswizzled S
// layout (shared-memory wavefronts per request). What would close the gap, in that order: a
// producer warp with TMA and mbarriers (no barrier, no copy instructions on the MMA warps, no
// proxy fence), the 128-byte swizzle, 2-CTA clusters.
//
// Tiles: 128 (P) x 256 (Q) x 32 (K) per block; 256 threads = 2 warpgroups, each 64 x 256 with
// four wgmma.m64n256k8 per K tile. Every thread also issues cp.async copies: no producer
// warpgroup, which would leave 170 registers a thread for 128 accumulators, fragments and
// addresses unless setmaxnreg and mbarriers came in too. Per stage: S 256 x 32 floats in
// wgmma's no-swizzle K-major layout (SLayout, 32 KB), R 128 x 32 padded (RLayout, 17-18 KB);
// 4 stages: 196-200 KB, one block per SM. ptxas: 207-208 registers, no spills.
#include <cstdint>

#include "core/error.h"
#include "kernels/cuda_check.h"
#include "kernels/matmul/cp_async.h"
#include "kernels/matmul/float4_rows.h"
#include "kernels/matmul/gemm.h"
#include "kernels/matmul/wgmma.h"

#include "kernels/device_caps.h"

// kernels/CMakeLists.txt compiles this file for sm_90a alone, and only where the build has
// code for compute capability 9.0.
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "v10_tf32_wgmma.cu is built for sm_90a only"
#endif

namespace engine::cuda::gemm {

void v9_tf32_mma(const Gemm& g, cudaStream_t stream);  // the fallback: TN, misaligned rows

namespace {

constexpr int P_TILE = 128;  // D rows per block: 2 warpgroups x wgmma's M = 64
constexpr int Q_TILE = 256;  // D columns per block: wgmma's N, the largest it has
constexpr int BK = 32;       // K per stage: one 128-byte row of S per q, 4 wgmma k-steps of 8
constexpr int STAGES = 4;    // tile t computing, t - 1 still read by wgmma, t + 1 and t + 2 landing
constexpr int THREADS = 256;
constexpr int ACC = 64 * Q_TILE / 128;  // accumulators per thread: 128
static_assert(ACC == WGMMA_ACC, "one m64n256k8 accumulator tile per consumer thread");

// The S tile (Q_TILE rows q of BK floats, k contiguous) as wgmma's no-swizzle ("interleave")
// K-major layout: "core matrices" of 8 rows x 16 bytes (8 q x 4 k), each 128 contiguous
// bytes, row r of it at byte 16 r. The descriptor gives two strides: LBO, between core
// matrices adjacent along K, and SBO, between core matrices adjacent along M/N (8 q apart):
//   byte offset of (q, k) = (q / 8) SBO + (k / 4) LBO + (q % 8) 16 + (k % 4) 4
// (PTX ISA "matrix descriptor"; CUTLASS's canonical K-major INTERLEAVE layout, in 16-byte
// units ((8, m), (T, 2)) : ((1, SBO), (1 element, LBO))). With LBO = 128 and SBO = 1024 an
// 8-row group is the 8 core matrices of its 32 k in order, 1 KB. One wgmma (k-step kk: 8 k,
// two core matrices) starts at byte 256 kk and reads 32 groups x 2 core matrices.
// Why no swizzle: every core matrix is already 128 contiguous bytes, i.e. all 32 banks, so
// wgmma's reads are conflict-free without one, and the cp.async writes are made so too
// (load_s_tile); the 128-byte swizzle would also need 1024-byte aligned stages.
struct SLayout {
  static constexpr int SIZE = Q_TILE * BK;                     // floats per stage
  static constexpr int LBO = 128, SBO = 1024;                  // bytes
  __host__ __device__ static constexpr int at(int q, int k) {  // float offset
    return q / 8 * (SBO / 4) + k / 4 * (LBO / 4) + q % 8 * 4 + k % 4;
  }
};

// The R tile (P_TILE x BK) in its stored orientation: K_MAJOR, stored (P, K): Rs[p][k] with rows
// of BK + 4 floats; otherwise stored (K, P): Rs[k][p], rows of P_TILE + 8. A fragment load
// (load_fragment) has lane (g, t) = (lane / 4, lane % 4) read (p0 + g, k0 + t): word
// 36 g + t, bank 4 g + t, or word 136 t + g, bank 8 t + g: 32 lanes, 32 banks either way (as
// v9). Both paddings keep rows 16-byte aligned for cp.async.
template <bool K_MAJOR>
struct RLayout {
  static constexpr int ROW = K_MAJOR ? BK + 4 : P_TILE + 8;       // floats per shared row
  static constexpr int SIZE = K_MAJOR ? P_TILE * ROW : BK * ROW;  // floats per stage
  static constexpr int STORED_ROWS = K_MAJOR ? P_TILE : BK;       // rows of the stored tile
  static constexpr int STORED_ROW = K_MAJOR ? BK : P_TILE;        // floats in one of them
  __host__ __device__ static constexpr int at(int p, int k) {
    return K_MAJOR ? p * ROW + k : k * ROW + p;
  }
};

template <bool R_K_MAJOR>
constexpr int smem_bytes() {
  return STAGES * (SLayout::SIZE + RLayout<R_K_MAJOR>::SIZE) * int{sizeof(float)};
}
static_assert(smem_bytes<true>() <= 227 * 1024 && smem_bytes<false>() <= 227 * 1024,
              "an H100 block has at most 227 KB of shared memory");

// `#pragma unroll` for loops in host-callable functions (the host compiler does not know it).
#if defined(__CUDA_ARCH__)
#define V10_UNROLL _Pragma("unroll")
#else
#define V10_UNROLL
#endif

// Elements of a 4-float group that lie inside the matrix, from how many remain: 0..4.
__host__ __device__ constexpr int group_count(int left) {
  return left < 0 ? 0 : left > 4 ? 4 : left;
}

// The problem in the kernel's terms (see the header): D (P x Q) = R (P x K) S^T, R stored
// (P, K) or (K, P) with row length ldr, S stored (Q, K) with row length lds. SWAP: R = B,
// S = A, D = C^T. The block computes D[p0 .. p0 + 127][q0 .. q0 + 255].
struct Operands {
  const float* r;
  const float* s;
  int ldr, lds;
  int P, Q, K;  // K: the slice's depth
  int p0, q0;
};
template <bool SWAP>
__host__ __device__ Operands operands_of(const Gemm& g, const GemmSlice& slice, int block_x,
                                         int block_y) {
  // The grid is tile_grid(g, BM, BN): x walks N, y walks M; P is N when SWAP, M otherwise.
  const int p_block = SWAP ? block_x : block_y, q_block = SWAP ? block_y : block_x;
  Operands o{};
  o.r = SWAP ? slice.B : slice.A;
  o.s = SWAP ? slice.A : slice.B;
  o.ldr = SWAP ? g.ldb : g.lda;
  o.lds = SWAP ? g.lda : g.ldb;
  o.P = SWAP ? g.N : g.M;
  o.Q = SWAP ? g.M : g.N;
  o.K = slice.K;
  o.p0 = p_block * P_TILE;
  o.q0 = q_block * Q_TILE;
  return o;
}

// The copies of K tile `tile` into one stage, by thread `tid`. copy(dst, src, bytes) copies one
// 16-byte group, reading `bytes` of it and zero-filling the rest (cp.async's src-size), so
// rows and k beyond the matrix or the slice land as zeros. `o.s` / `o.r` double as the valid
// dummy address of copies that read nothing. Host-callable, so that a host emulation can
// check the layouts with the kernel's own code.
//
// S: 256 stored rows (q) of 8 groups; 2048 groups, 8 per thread. Thread tid always copies
// group c = tid / 8 % 8 (k 4c .. 4c + 3) of rows q = 32 i + 8 (tid / 64) + tid % 8: so the
// flat index of its i-th copy, 256 i + tid, is exactly the copy's 16-byte slot in SLayout.
// Eight consecutive lanes write one core matrix, 128 contiguous bytes (a conflict-free
// shared-store wavefront), and a warp reads 8 rows x 64 bytes, 16 whole 32-byte sectors.
template <typename Copy>
__host__ __device__ void load_s_tile(const Operands& o, int tile, float* stage, int tid,
                                     Copy&& copy) {
  const int k0 = tile * BK, c = tid / 8 % 8, q_first = tid / 64 * 8 + tid % 8;
  const int n = group_count(o.K - k0 - 4 * c);
  const float* src = o.s + int64_t{o.q0 + q_first} * o.lds + k0 + 4 * c;
  V10_UNROLL
  for (int i = 0; i < Q_TILE / 32; ++i, src += int64_t{32} * o.lds) {
    const int q = q_first + 32 * i;
    const bool inside = o.q0 + q < o.Q && n > 0;
    copy(stage + SLayout::at(q, 4 * c), inside ? src : o.s, inside ? 4 * n : 0);
  }
}

// R: the stored tile is STORED_ROWS rows of STORED_ROW floats (rows p of 32 k, or rows k of
// 128 p): 1024 groups, 4 per thread, a warp's 32 consecutive in memory (coalesced), written
// to consecutive shared words (4 rows x 128 bytes, or one 512-byte row).
template <bool K_MAJOR, typename Copy>
__host__ __device__ void load_r_tile(const Operands& o, int tile, float* stage, int tid,
                                     Copy&& copy) {
  using L = RLayout<K_MAJOR>;
  constexpr int GROUPS = L::STORED_ROW / 4;   // per stored row: 8 or 32
  constexpr int ROW_STEP = THREADS / GROUPS;  // stored rows between a thread's copies
  const int k0 = tile * BK, row0 = tid / GROUPS, col = tid % GROUPS * 4;
  // Stored rows are p (k contiguous) or k (p contiguous); limits count from the tile corner.
  const int rows_left = K_MAJOR ? o.P - o.p0 : o.K - k0,
            cols_left = K_MAJOR ? o.K - k0 : o.P - o.p0;
  const int n = group_count(cols_left - col);
  const float* src = K_MAJOR ? o.r + int64_t{o.p0 + row0} * o.ldr + k0 + col
                             : o.r + int64_t{k0 + row0} * o.ldr + o.p0 + col;
  V10_UNROLL
  for (int i = 0; i < L::STORED_ROWS / ROW_STEP; ++i, src += int64_t{ROW_STEP} * o.ldr) {
    const int row = row0 + i * ROW_STEP;
    const bool inside = row < rows_left && n > 0;
    copy(stage + (K_MAJOR ? L::at(row, col) : L::at(col, row)), inside ? src : o.r,
         inside ? 4 * n : 0);
  }
}

// FP32 -> TF32 rounded to nearest, ties away from zero (cvt.rna): the low 13 mantissa bits
// become zero, so wgmma's truncation leaves the value alone. The host branch is the same
// rounding, for the emulation.
__host__ __device__ inline uint32_t to_tf32(float x) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
#else
  uint32_t bits;
  __builtin_memcpy(&bits, &x, 4);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits += 0x1000u;  // half a TF32 ulp (not Inf/NaN)
  return bits & 0xffffe000u;
#endif
}

// A thread's register operand for k-step kk (k 8 kk .. 8 kk + 7) of a stage. wgmma's A
// fragment for m64nNk8 .tf32 (PTX ISA; CUTLASS ALayout_64x8) is mma.m16n8k8's, one 16-row
// slab per warp: warp w of the warpgroup, lane (g, t), holds
//   a[0] = (16 w + g, t),      a[1] = (16 w + g + 8, t),
//   a[2] = (16 w + g, t + 4),  a[3] = (16 w + g + 8, t + 4)
// of its warpgroup's 64 x 8 slice; warpgroup wg owns R rows 64 wg .. 64 wg + 63.
template <bool K_MAJOR>
__host__ __device__ void load_fragment(const float* stage, int tid, int kk, uint32_t (&a)[4]) {
  using L = RLayout<K_MAJOR>;
  const int lane = tid % 32, p = tid / 128 * 64 + tid / 32 % 4 * 16 + lane / 4,
            k = 8 * kk + lane % 4;
  a[0] = to_tf32(stage[L::at(p, k)]);
  a[1] = to_tf32(stage[L::at(p + 8, k)]);
  a[2] = to_tf32(stage[L::at(p, k + 4)]);
  a[3] = to_tf32(stage[L::at(p + 8, k + 4)]);
}

// Where accumulator i of thread tid lies in the block's D tile. wgmma's D fragment for
// m64nNk8 .f32 (PTX ISA; CUTLASS CLayout_64xN): warp w, lane (g, t) holds rows 16 w + g and
// 16 w + g + 8, columns 8 j + 2 t and 8 j + 2 t + 1 of every 8: d[4 j + 2 h + e] =
// (16 w + g + 8 h, 8 j + 2 t + e); plus 64 wg for the warpgroup.
__host__ __device__ constexpr int acc_p(int tid, int i) {
  return tid / 128 * 64 + tid / 32 % 4 * 16 + tid % 32 / 4 + 8 * (i / 2 % 2);
}
__host__ __device__ constexpr int acc_q(int tid, int i) {
  return 8 * (i / 4) + 2 * (tid % 4) + i % 2;
}

// The epilogue: hands each of thread tid's accumulators that lies inside the matrix to
// store(m, n, value), in C's coordinates: D (p, q) is C (p, q), or C (q, p) when SWAP. With
// SWAP a warp's store writes 8 consecutive n (its lanes' g) in 4 rows m: 4 whole sectors.
template <bool SWAP, typename Store>
__host__ __device__ __forceinline__ void store_tile(const Operands& o, int tid,
                                                    const float (&acc)[ACC], Store&& store) {
  V10_UNROLL
  for (int i = 0; i < ACC; ++i) {
    const int p = o.p0 + acc_p(tid, i), q = o.q0 + acc_q(tid, i);
    if (p < o.P && q < o.Q) store(SWAP ? q : p, SWAP ? p : q, acc[i]);
  }
}

// The matrix descriptor of the S operand of k-step kk in the stage at shared address
// `stage_addr`: start address, LBO and SBO in 16-byte units (bits 0-13, 16-29, 32-45),
// base offset 0 (bits 49-51), layout type 0 = no swizzle (bits 62-63).
__host__ __device__ constexpr uint64_t s_descriptor(uint32_t stage_addr, int kk) {
  const uint32_t start = stage_addr + static_cast<uint32_t>(kk * 2 * SLayout::LBO);
  return uint64_t{(start & 0x3ffffu) >> 4} | uint64_t{SLayout::LBO >> 4} << 16 |
         uint64_t{SLayout::SBO >> 4} << 32;
}

// Makes this thread's completed shared-memory writes (cp.async's, generic proxy) visible to
// the async proxy, through which wgmma reads its shared-memory operand.
__device__ __forceinline__ void fence_proxy_async() {
  SM90A_ASM("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// One block per SM: (THREADS, 1) allows up to 255 registers a thread.
template <bool SWAP, bool R_K_MAJOR>
__global__ void __launch_bounds__(THREADS, 1) wgmma_kernel(const Gemm g) {
  using LR = RLayout<R_K_MAJOR>;
  const GemmSlice slice = slice_of(g);
  const Operands o =
      operands_of<SWAP>(g, slice, static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y));
  // STAGES S tiles, then STAGES R tiles; > 48 KB, so dynamic (see launch). Without a swizzle
  // wgmma and cp.async need 16-byte alignment only (stage and row offsets are multiples of 16).
  extern __shared__ __align__(16) float smem[];
  float* const Ss = smem;
  float* const Rs = smem + STAGES * SLayout::SIZE;
  const uint32_t s_addr = static_cast<uint32_t>(__cvta_generic_to_shared(Ss));
  const int tid = static_cast<int>(threadIdx.x);

  auto copy = [](float* dst, const float* src, int bytes) { cp_async_16(dst, src, bytes); };
  auto load_tile = [&](int tile, int stage) {
    load_s_tile(o, tile, Ss + stage * SLayout::SIZE, tid, copy);
    load_r_tile<R_K_MAJOR>(o, tile, Rs + stage * LR::SIZE, tid, copy);
  };

  const int tiles = (o.K + BK - 1) / BK;
  // Prologue: tiles 0 .. STAGES - 3 in flight, one cp.async group each, committed even when
  // empty so that "group j holds tile j" holds for the waits below.
#pragma unroll
  for (int t = 0; t < STAGES - 2; ++t) {
    if (t < tiles) load_tile(t, t);
    cp_async_commit();
  }

  // acc: written first by the first wgmma (scale-d false; K > 0 here). a[kk]: the register
  // operand of k-step kk, rewritten every tile, and only once the wgmma of the previous tile
  // that reads it has completed (the wait in the k-step loop): PTX makes touching either while
  // a wgmma that uses it runs undefined, and the compiler cannot see that it does.
  float acc[ACC];
  uint32_t a[BK / 8][4];

  for (int t = 0; t < tiles; ++t) {
    const int stage = t % STAGES;
    // Groups 0 .. t + STAGES - 3 are committed; at most STAGES - 3 pending means groups
    // 0 .. t, so tile t, have landed (this thread's copies of it); the proxy fence then makes
    // them visible to wgmma's reads (async proxy), and the barrier extends both to every
    // thread's copies. The barrier also means that both warpgroups have passed the last wait
    // of iteration t - 1, which leaves only tile t - 1's wgmmas running: tile t - 2's are done,
    // and its stage, (t + STAGES - 2) % STAGES, may be refilled.
    cp_async_wait<STAGES - 3>();
    fence_proxy_async();
    __syncthreads();
    if (t + STAGES - 2 < tiles) load_tile(t + STAGES - 2, (t + STAGES - 2) % STAGES);
    cp_async_commit();

    // One wgmma group per k-step. Before k-step kk rewrites a[kk], the wgmma that last read it
    // (k-step kk of tile t - 1) must be done: BK / 8 - 1 groups were committed after it, so
    // "at most BK / 8 - 1 pending" is exactly that, and keeps three k-steps (3 x 64 x 256 x 8)
    // queued on the tensor cores while the warp loads the next fragment (4 LDS + 4 cvt).
    const float* const r_stage = Rs + stage * LR::SIZE;
    const uint32_t stage_addr =
        s_addr + static_cast<uint32_t>(stage * SLayout::SIZE * int{sizeof(float)});
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) {
      wgmma_wait<BK / 8 - 1>();
      load_fragment<R_K_MAJOR>(r_stage, tid, kk, a[kk]);
      wgmma_fence();  // the fragment's registers were just written
      wgmma_m64n256k8_rs(acc, a[kk], s_descriptor(stage_addr, kk), t > 0 || kk > 0);
      wgmma_commit();
    }
  }
  wgmma_wait<0>();
  fence_accumulators(acc);  // no accumulator read may move above the wait
  cp_async_wait<0>();  // only empty groups can remain; leave none behind all the same

  store_tile<SWAP>(o, tid, acc, [&](int m, int n, float value) { store_c(slice, m, n, value); });
}

// Launches one variant, raising its shared-memory limit the first time (past 48 KB a kernel
// must opt in; once per instantiation).
template <bool SWAP, bool R_K_MAJOR>
void launch(const Gemm& g, cudaStream_t stream) {
  constexpr int SMEM = smem_bytes<R_K_MAJOR>();
  static const bool configured = [] {
    CHECK_CUDA(cudaFuncSetAttribute(wgmma_kernel<SWAP, R_K_MAJOR>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    return true;
  }();
  (void)configured;
  const dim3 grid = SWAP ? tile_grid(g, Q_TILE, P_TILE) : tile_grid(g, P_TILE, Q_TILE);
  wgmma_kernel<SWAP, R_K_MAJOR><<<grid, THREADS, SMEM, stream>>>(g);
}

}  // namespace

// sm_90a code runs on compute capability 9.0 only (H100, H200): device_caps.h decides, once.
bool v10_tf32_wgmma_available() { return device_caps().kernels.wgmma_tma; }

void v10_tf32_wgmma(const Gemm& g, cudaStream_t stream) {
  if (!v10_tf32_wgmma_available())
    throw Error(
        "v10_tf32_wgmma needs a compute capability 9.0 GPU (and no lower "
        "ENGINE_MAX_COMPUTE_CAPABILITY)");
  if (!rows_allow_float4(g) || (g.transpose_a && !g.transpose_b) || g.K == 0) {
    // Rows off 16 bytes, A^T B (no K-major operand, see the header), or an empty sum (the
    // kernel's accumulators start with its first wgmma).
    v9_tf32_mma(g, stream);
    return;
  }
  if (!g.transpose_a && !g.transpose_b)
    launch<true, false>(g, stream);  // A B = (B^T A^T)^T: R = B stored (K, N), S = A
  else if (!g.transpose_a)
    launch<false, true>(g, stream);  // A B^T: R = A stored (M, K), S = B stored (N, K)
  else
    launch<false, false>(g, stream);  // A^T B^T: R = A stored (K, M), S = B stored (N, K)
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::gemm
