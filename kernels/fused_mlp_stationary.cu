// The weight-stationary fused MLP kernel (core/ops/fused_mlp.h): an MLP of one hidden layer,
// every step of a launch, with the weights kept in the SMs' shared memory from the first step
// to the last. The CPU reference is cpu/fused_mlp.cpp; the lesson, docs/FUSED_MLP.md.
//
// Why: the streaming kernel (kernels/fused_mlp.cu) spends a small step's 22 us on three
// grid-wide barriers and on phases that wait on L2 for weights they read once. Here block b
// owns `columns` hidden units for the whole launch: their kernel columns, bias and Adam moments
// in shared memory, and their rows of the head (each unit's outgoing weights and their moments;
// block 0 also the head's bias). Every block computes the head, which is tiny, from every
// unit's output and the whole head, so what crosses between blocks is the hidden output and
// the head's updated rows, and a step has one grid-wide barrier:
//   gather the batch's rows -> own units' outputs -> [barrier] -> read every unit's output and
//   the head -> logits, softmax cross-entropy, dlogits -> own units' gradients, and Adam on
//   own rows of the head (published for the next step) -> Adam on own units
// The hidden output and the head each have two global buffers, used by the step's parity: a
// block that runs ahead writes step s + 1's while a slower one still reads step s's, and it
// cannot get to s + 2 before that block has passed the barrier of s + 1.
//
// Napkin math per step, the seed's small model (784 -> 128 -> 10, batch 32, one unit a block
// on 128 of an H100's 132 SMs):
//   a block     gathers 32 x 784 floats = 100 KB (all blocks: 12.8 MB from L2, ~2 us at
//               ~6 TB/s: the largest cost), 25 k multiply-adds forward and 25 k for its
//               weight gradient (~0.4 us each: shared-memory bandwidth, 128 bytes a clock), the
//               head's 2 x 41 k multiply-adds (logits, own units' gradient) and 10 of its
//               weights' gradients (32 terms each)
//   barrier     one grid-wide barrier (~1 us)
//   shared      150 KB of rows (a ring of 48 slots: the next step's first 16 rows are copied
//               while this step's head runs, its other 16 during Adam) + 9 KB own unit
//               + 5 KB head + 17 KB hidden output + 27 KB of the head's partial sums + 2 KB of
//               Adam's step sizes: 216 KB of the H100's 227 KiB
// which predicted ~4-5 us a step. Measured (docs/FUSED_MLP.md): 9.5 us on an H100 before the
// ring, against the streaming kernel's 22.4 and the CUDA graph's 45.7; on an H200, 9.28 before
// the ring, 9.16 with it, 8.92 with the rows' bulk copies, 8.6 with the next step's rows 16-31
// copied during Adam. Each phase is a short chain of dependent loads, shuffles and FMAs with
// too few warps to hide it, and the step waits for the slowest block at the barrier
// (ENGINE_FUSED_MLP_PHASES prints both); the bytes and FLOPs are not what bounds it.
#include <cooperative_groups.h>

#include <type_traits>  // std::integral_constant

#include "kernels/fused_mlp_common.cuh"
#include "kernels/launch.h"
#include "kernels/matmul/cp_async.h"
#include "kernels/matmul/tma.h"  // mbarriers, bulk_copy
#include "kernels/warp_reduce.cuh"

namespace engine::cuda::fused_mlp {
namespace {

namespace cg = cooperative_groups;

constexpr int THREADS = FUSED_MLP_STATIONARY_THREADS;
constexpr int WARPS = THREADS / 32;
constexpr int ROWS = FUSED_MLP_STATIONARY_MAX_ROWS;
constexpr int CLASSES = FUSED_MLP_STATIONARY_MAX_CLASSES;
constexpr int ROWS_PER_WARP = ROWS / WARPS;  // the rows a warp gathers: warp, warp + WARPS, ...
constexpr int RING = FUSED_MLP_STATIONARY_RING_ROWS;
constexpr int ROW_LANES = 16;  // lanes a row in the softmax, a head weight in its Adam
static_assert(ROWS % WARPS == 0, "every warp gathers the same number of rows");
static_assert(ROWS_PER_WARP == 2 && RING == ROWS + WARPS,
              "a warp's first row (0-15) is prefetched into the ring's free slots, its second "
              "into the slot of its first row of the step before");

// The ring's slot of row 0 at a launch's step s: steps lie 32 slots apart, so step s + 1's rows
// 0-15 go to the 16 slots step s leaves free, and its rows 16-31 to the slots of step s's rows
// 0-15, free once step s's Adam has read them. 0 without the ring (rows at slots 0 .. batch-1).
__device__ __forceinline__ int first_slot(bool prefetch, int64_t s) {
  return prefetch ? static_cast<int>((ROWS * s) % RING) : 0;
}

// f(std::integral_constant<int, FIRST>{}) for a step whose row 0 lies at slot `first`: the
// loops over the rows then address each row's slot at compile time, as they did without a ring.
template <typename F>
__device__ __forceinline__ void at_first_slot(int first, F&& f) {
  if (first == ROWS) {
    f(std::integral_constant<int, ROWS>{});
  } else if (first == RING - ROWS) {
    f(std::integral_constant<int, RING - ROWS>{});
  } else {
    f(std::integral_constant<int, 0>{});
  }
}

// Row r's slot, for a step whose row 0 lies at slot FIRST.
template <int FIRST>
__device__ __forceinline__ constexpr int slot(int r) {
  return (FIRST + r) % RING;
}
// The thread of block 0 that keeps the run's loss and hit sums (BatchSums): one of a warp
// that, where a block owns one unit, neither computes its gradients (warp 0) nor updates the
// head (the last ten).
constexpr int SUMS_THREAD = 32;

// A warp's rows of the next step, read a step ahead: their places in the data set, from the
// epoch's order (read_next_places, right after a barrier), and their labels (read_next_rows,
// once the places are in), both during this step's head, which hides the loads' latency.
struct NextRows {
  int32_t row[ROWS_PER_WARP];
  int32_t label[ROWS_PER_WARP];
};

__device__ __forceinline__ void read_next_places(const Args& a, int64_t step_index,
                                                 NextRows& next) {
  const int warp = static_cast<int>(threadIdx.x) / 32;
#pragma unroll
  for (int i = 0; i < ROWS_PER_WARP; ++i) {
    const int r = warp + i * WARPS;
    next.row[i] = r < a.batch ? a.order[step_index * a.batch + r] : 0;
  }
}

__device__ __forceinline__ void read_next_rows(const Args& a, NextRows& next) {
  const int warp = static_cast<int>(threadIdx.x) / 32;
#pragma unroll
  for (int i = 0; i < ROWS_PER_WARP; ++i) {
    next.label[i] = warp + i * WARPS < a.batch ? a.labels[next.row[i]] : 0;
  }
}

// Whether every row of the data set is whole 16-byte units, 16-byte aligned.
__device__ __forceinline__ bool rows_in_quads(const Args& a) {
  return a.layer[0].inputs % 4 == 0 && reinterpret_cast<uintptr_t>(a.x) % 16 == 0;
}

// Whether the rows travel by bulk copies: on sm_90 and later, where they are in quads. Else by
// cp.async (sm_80 and later) or loads.
__device__ __forceinline__ bool bulk_rows(const Args& a) {
#if __CUDA_ARCH__ >= 900
  return rows_in_quads(a);
#else
  return false;
#endif
}

// One row of the data set into its slot `to`. By a bulk copy where bulk_rows: one instruction
// of lane 0 for the whole row (3,136 bytes for the seed's), done by the copy engine, which
// counts the bytes on the mbarrier `rows_landed` as they land; lane 0 first arrives there,
// announcing them. Else as asynchronous 16-byte copies (cp.async: no registers in between, so
// a thread has all of its copies in flight at once), ~7 instructions a lane for such a row,
// which cost the warp ~0.4 us a step for 16 rows on an H200: the reason for the bulk copies.
__device__ __forceinline__ void copy_row(const Args& a, int32_t row, float* to,
                                         uint32_t rows_landed) {
  const int inputs = a.layer[0].inputs;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const float* from = a.x + int64_t{row} * inputs;
  if (bulk_rows(a)) {
    if (lane == 0) {
      const auto bytes = static_cast<uint32_t>(inputs * sizeof(float));
      gemm::mbarrier_arrive_expect_tx(rows_landed, bytes);
      gemm::bulk_copy(static_cast<uint32_t>(__cvta_generic_to_shared(to)), from, bytes,
                      rows_landed);
    }
  } else if (rows_in_quads(a)) {
    for (int k = 4 * lane; k < inputs; k += 4 * 32) {
#if __CUDA_ARCH__ >= 800
      gemm::cp_async_16(to + k, from + k, 16);
#else
      *reinterpret_cast<float4*>(to + k) = *reinterpret_cast<const float4*>(from + k);
#endif
    }
  } else {
    for (int k = lane; k < inputs; k += 32) to[k] = from[k];
  }
}

// The step's rows of the data set into their slots of xs (but each warp's first `prefetched`
// rows, which the step before copied already), and their labels into row_label (so that the
// head does not wait on device memory for them); then every thread waits for them all, the
// prefetched ones too.
// The 100 KB of a small step are the largest transfer of the step, from L2 to every block. A
// warp takes whole rows (no division per element: a division is ~20 instructions, and a step's
// phases are chains of them). The caller's barrier makes loads' and cp.async's rows visible to
// the block; bulk copies' are visible once the mbarrier's phase `parity` (the launch's step
// s & 1: a.batch rows arrive on it a step) completes.
__device__ void gather_rows(const Args& a, const NextRows& next, float* xs, int first,
                            int prefetched, int32_t* row_label, uint32_t rows_landed,
                            uint32_t parity) {
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
#pragma unroll
  for (int i = 0; i < ROWS_PER_WARP; ++i) {
    const int r = warp + i * WARPS;
    if (r >= a.batch) break;
    if (lane == 0) row_label[r] = next.label[i];
    if (i >= prefetched) {
      copy_row(a, next.row[i], xs + (first + r) % RING * a.layer[0].inputs, rows_landed);
    }
  }
  if (bulk_rows(a)) {
    gemm::mbarrier_wait(rows_landed, parity);
  } else {
#if __CUDA_ARCH__ >= 800
    gemm::cp_async_commit();
    gemm::cp_async_wait<0>();  // this thread's copies have landed, the prefetched ones too
#endif
  }
}

// A warp's row i of the next step (row warp + 16 i) into its slot of the ring, not waited for
// until the next step's gather_rows. A full batch only. Row i = 0 goes to one of the 16 slots
// this step leaves free, issued while this step's head runs; row i = 1 to the slot of this
// step's row `warp`, once every thread has read that row (own_unit_adam_issuing).
__device__ void prefetch_row(const Args& a, const NextRows& next, int i, float* xs,
                             int next_first, uint32_t rows_landed) {
  const int warp = static_cast<int>(threadIdx.x) / 32;
  copy_row(a, next.row[i], xs + (next_first + warp + i * WARPS) % RING * a.layer[0].inputs,
           rows_landed);
#if __CUDA_ARCH__ >= 800
  if (!bulk_rows(a)) gemm::cp_async_commit();
#endif
}

// sum_k x(r, k) w(k) over this thread's inputs (k_first, k_first + k_stride, ...), for every row
// r of the batch (row r in slot slot<FIRST>(r) of xs): its share of the forward pass. FULL: a
// batch of ROWS rows, so no row needs a check (a third of the loop's instructions otherwise).
template <bool FULL, int FIRST>
__device__ __forceinline__ void forward_dots(float (&acc)[ROWS], const float* xs, const float* w,
                                             int inputs, int k_first, int k_stride, int batch) {
  for (int k = k_first; k < inputs; k += k_stride) {
    const float wk = w[k];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      if (FULL || r < batch) acc[r] += xs[slot<FIRST>(r) * inputs + k] * wk;
    }
  }
}

// Adam on an own unit's bias, by the thread whose inputs end on it: its gradient is sum_r d(r).
__device__ __forceinline__ void own_bias_adam(const Args& a, const float (&d)[ROWS], float* w,
                                              float* m, float* v, int k_first, int k_stride,
                                              float lr_t) {
  const int inputs = a.layer[0].inputs;
  if (k_first <= inputs && (inputs - k_first) % k_stride == 0) {
    float g = 0.0f;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) g += d[r];
    adam_apply(w[inputs], m[inputs], v[inputs], g, a.adam, lr_t);
  }
}

// Adam on this thread's weights of an own unit: input k's gradient is sum_r x(r, k) d(r). d is
// zero beyond the batch.
template <bool FULL, int FIRST>
__device__ __forceinline__ void own_unit_adam(const Args& a, const float (&d)[ROWS],
                                              const float* xs, float* w, float* m, float* v,
                                              int k_first, int k_stride, float lr_t) {
  const int inputs = a.layer[0].inputs;
  for (int k = k_first; k < inputs; k += k_stride) {
    float g = 0.0f;
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      if (FULL || r < a.batch) g += xs[slot<FIRST>(r) * inputs + k] * d[r];
    }
    adam_apply(w[k], m[k], v[k], g, a.adam, lr_t);
  }
  own_bias_adam(a, d, w, m, v, k_first, k_stride, lr_t);
}

// The inputs a thread takes in own_unit_adam_issuing: all of them where a unit's warps have
// at least inputs / 2 threads (the seed's 784 inputs over 16 warps of 32: 2 at most).
constexpr int ISSUING_INPUTS = 2;

// own_unit_adam for a full batch in the ring, with the next step's rows 16-31 issued halfway:
// every input's sum over rows 0-15 first (in registers), then, once every thread of the block
// has read those rows, `issue` copies the next step's rows 16-31 into their slots, and they
// land while the sums over rows 16-31 and Adam run, not at the next step's start, where the
// whole grid would fetch them at once (6.4 MB from L2 for the seed's model). The same sums in
// the same order as own_unit_adam. Every thread of the block calls it (it has a barrier);
// has_unit: the thread's warp has an own unit.
template <int FIRST, typename Issue>
__device__ __forceinline__ void own_unit_adam_issuing(const Args& a, const float (&d)[ROWS],
                                                      const float* xs, float* w, float* m,
                                                      float* v, int k_first, int k_stride,
                                                      float lr_t, bool has_unit, Issue&& issue) {
  constexpr int HALF = ROWS / 2;  // rows 0-15: each warp's first, whose slots the issue takes
  const int inputs = a.layer[0].inputs;
  float g[ISSUING_INPUTS];
#pragma unroll
  for (int i = 0; i < ISSUING_INPUTS; ++i) {
    const int k = k_first + i * k_stride;
    g[i] = 0.0f;
    if (has_unit && k < inputs) {
#pragma unroll
      for (int r = 0; r < HALF; ++r) g[i] += xs[slot<FIRST>(r) * inputs + k] * d[r];
    }
  }
  __syncthreads();  // rows 0-15 are read: their slots are free
  issue();
  if (!has_unit) return;
#pragma unroll
  for (int i = 0; i < ISSUING_INPUTS; ++i) {
    const int k = k_first + i * k_stride;
    if (k < inputs) {
#pragma unroll
      for (int r = HALF; r < ROWS; ++r) g[i] += xs[slot<FIRST>(r) * inputs + k] * d[r];
      adam_apply(w[k], m[k], v[k], g[i], a.adam, lr_t);
    }
  }
  own_bias_adam(a, d, w, m, v, k_first, k_stride, lr_t);
}

// One block's part of the kernel: its shared memory (laid out by fused_mlp_stationary_layout),
// its units, how its threads share the work, and a step's phases in the order they run. Each
// phase's barriers are its own; the grid-wide one, between forward and read_outputs_and_head,
// is the kernel's.
struct Block {
  const Args& a;
  const Layer& hidden;
  const Layer& head;
  int inputs, units, classes, columns, depth;
  int qp, hs, ls;  // the head's rows padded to float4s; odd strides of the outputs and sums
  float *xs, *w0, *m0, *v0, *w1, *m1, *v1, *hidden_out, *dlogits, *dh, *mask, *partial,
      *logit_partial, *row_loss, *row_hit;
  int32_t* row_label;
  float* step_sizes;  // Adam's step size for 512 steps from a multiple of 512
  uint32_t rows_landed;  // the mbarrier of the rows' bulk copies (shared address)
  int tid, lane, warp;
  int first_unit, owned;  // own units first_unit .. + owned - 1 (the last block may own fewer)
  // In the forward pass and the weight gradient, unit c's dots over the inputs are shared by
  // warps_per_unit warps, input k going to the thread k % k_stride of them.
  int warps_per_unit, c, k_first, k_stride;

  __device__ Block(const Args& args, int block_columns, bool prefetch, float* shared)
      : a(args), hidden(args.layer[0]), head(args.layer[1]), inputs(hidden.inputs),
        units(hidden.units), classes(head.units), columns(block_columns), depth(inputs + 1) {
    const FusedMlpStationaryLayout at =
        fused_mlp_stationary_layout(a.batch, inputs, units, classes, columns, prefetch);
    qp = at.classes_padded;
    hs = at.hidden_stride;
    ls = at.logit_stride;
    xs = shared + at.x;
    w0 = shared + at.w0;
    m0 = shared + at.m0;
    v0 = shared + at.v0;
    w1 = shared + at.w1;
    m1 = shared + at.m1;
    v1 = shared + at.v1;
    hidden_out = shared + at.hidden;
    dlogits = shared + at.dlogits;
    dh = shared + at.dh;
    mask = shared + at.mask;
    partial = shared + at.partial;
    logit_partial = shared + at.logit_partial;
    row_loss = shared + at.row_loss;
    row_hit = shared + at.row_hit;
    row_label = reinterpret_cast<int32_t*>(shared + at.labels);
    step_sizes = shared + at.lr_t;
    rows_landed = static_cast<uint32_t>(__cvta_generic_to_shared(shared + at.rows_landed));
    tid = static_cast<int>(threadIdx.x);
    lane = tid % 32;
    warp = tid / 32;
    first_unit = static_cast<int>(blockIdx.x) * columns;
    owned = min(columns, units - first_unit);
    warps_per_unit = WARPS / columns;
    c = warp / warps_per_unit;
    k_first = (warp % warps_per_unit) * 32 + lane;
    k_stride = warps_per_unit * 32;
  }

  // The head's rows this block updates: row u < owned is own unit first_unit + u's outgoing
  // weights; row `columns` is the bias's, block 0's. -1: none (a last block owning fewer).
  __device__ __forceinline__ int head_row(int u) const {
    return u < owned ? first_unit + u : u == columns && blockIdx.x == 0 ? units : -1;
  }

  // The block's state, between the model's buffers (p, m, v) and shared memory: own units'
  // columns (kernel then bias, unit by unit), and the moments of its rows of the head (rows
  // padded to qp floats). Its rows of the head's weights go to both head copies in the
  // workspace, padding zeros included (every block reads the whole head from there each step),
  // and come back from the copy the last step wrote.
  __device__ void move_state(bool load) {
    const auto move = [load](float* shared_value, float& value) {
      move_value(load, shared_value, value);
    };
    for (int i = tid; i < columns * depth; i += THREADS) {
      const int u = i / depth, k = i - u * depth;
      if (u < owned) {
        const int64_t g = hidden.offset + int64_t{k} * units + first_unit + u;
        move(w0 + i, a.p[g]);
        move(m0 + i, a.m[g]);
        move(v0 + i, a.v[g]);
      }
    }
    for (int i = tid; i < (columns + 1) * qp; i += THREADS) {
      const int u = i / qp, q = i - u * qp, j = head_row(u);
      if (j < 0) continue;
      const int64_t g = head.offset + int64_t{j} * classes + q;
      if (load) {
        const float w = q < classes ? a.p[g] : 0.0f;
        a.head_copy[0][j * qp + q] = a.head_copy[1][j * qp + q] = w;
        m1[i] = q < classes ? a.m[g] : 0.0f;
        v1[i] = q < classes ? a.v[g] : 0.0f;
      } else if (q < classes) {
        a.p[g] = a.head_copy[a.steps % 2][j * qp + q];
        a.m[g] = m1[i];
        a.v[g] = v1[i];
      }
    }
  }

  // Own units' outputs: their pre-activations, a row per accumulator, each warp's sums added in
  // shared memory; then a thread per (own unit, row) adds the bias, activates, writes the
  // output for every block to read and keeps d(out)/d(z) for the backward pass. Row 0 lies at
  // slot `first` of xs (a full batch; else 0).
  __device__ void forward(float* out, uint32_t step, int first) {
    float acc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) acc[r] = 0.0f;
    if (c < owned && a.batch == ROWS) {
      at_first_slot(first, [&](auto at) {
        forward_dots<true, decltype(at)::value>(acc, xs, w0 + c * depth, inputs, k_first,
                                                k_stride, a.batch);
      });
    } else if (c < owned) {
      forward_dots<false, 0>(acc, xs, w0 + c * depth, inputs, k_first, k_stride, a.batch);
    }
    partial[warp * ROWS + lane] = warp_transposed_sums(acc);  // lane r: the warp's row r
    __syncthreads();  // every warp's sums are in
    if (tid < columns * ROWS) {
      const int u = tid / ROWS, r = tid % ROWS;
      if (u < owned && r < a.batch) {
        float z = w0[u * depth + inputs];
        for (int w = u * warps_per_unit; w < (u + 1) * warps_per_unit; ++w) {
          z += partial[w * ROWS + r];
        }
        const int64_t i = int64_t{r} * units + first_unit + u;
        const Activated y = activate(hidden, z, i, step);
        out[i] = y.out;
        mask[u * ROWS + r] = y.factor;
      }
    }
  }

  // Every unit's output and this step's head into shared memory, from L2 (other blocks wrote
  // them; __ldcg skips this SM's L1, which may hold a line of two steps ago). All of a thread's
  // loads are in flight before the first store: one L2 round trip, not one per load.
  __device__ void read_outputs_and_head(const float* out, const float* head_now) {
    const int head_quads = (units + 1) * qp / 4;
    const auto* head_from = reinterpret_cast<const float4*>(head_now);
    auto* head_to = reinterpret_cast<float4*>(w1);
    const float4 first_quad =
        tid < head_quads ? __ldcg(head_from + tid) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    constexpr int READS = 4;  // units a lane reads of each of its rows at once
    for (int base = 0; base < units; base += READS * 32) {
      float value[ROWS_PER_WARP][READS];
#pragma unroll
      for (int i = 0; i < ROWS_PER_WARP; ++i) {
        const int r = warp + i * WARPS;
#pragma unroll
        for (int n = 0; n < READS; ++n) {
          const int j = base + n * 32 + lane;
          value[i][n] = r < a.batch && j < units ? __ldcg(out + int64_t{r} * units + j) : 0.0f;
        }
      }
#pragma unroll
      for (int i = 0; i < ROWS_PER_WARP; ++i) {
        const int r = warp + i * WARPS;
#pragma unroll
        for (int n = 0; n < READS; ++n) {
          const int j = base + n * 32 + lane;
          if (r < a.batch && j < units) hidden_out[r * hs + j] = value[i][n];
        }
      }
    }
    if (tid < head_quads) head_to[tid] = first_quad;
    for (int t = tid + THREADS; t < head_quads; t += THREADS) head_to[t] = __ldcg(head_from + t);
    __syncthreads();
  }

  // The logits' partial sums: warp w sums its slice of the units for every row (lane = row),
  // every class.
  __device__ void logits() {
    float acc[CLASSES];
#pragma unroll
    for (int q = 0; q < CLASSES; ++q) acc[q] = 0.0f;
    const int slice = (units + WARPS - 1) / WARPS;
    const int j_end = min(units, (warp + 1) * slice);
    if (lane < a.batch) {
      for (int j = warp * slice; j < j_end; ++j) {
        const float h = hidden_out[lane * hs + j];
        const float4* wj = reinterpret_cast<const float4*>(w1 + j * qp);
#pragma unroll
        for (int q4 = 0; q4 < CLASSES / 4; ++q4) {
          if (q4 * 4 < classes) {
            const float4 wq = wj[q4];  // the same address in every lane: a broadcast
            acc[4 * q4] += h * wq.x;
            acc[4 * q4 + 1] += h * wq.y;
            acc[4 * q4 + 2] += h * wq.z;
            acc[4 * q4 + 3] += h * wq.w;
          }
        }
      }
    }
#pragma unroll
    for (int q = 0; q < CLASSES; ++q) {
      if (q < classes) logit_partial[(warp * ROWS + lane) * ls + q] = acc[q];
    }
    __syncthreads();
  }

  // Half a warp per row (classes <= 16), a lane per class: the logit (the bias and the warps'
  // sums), softmax cross-entropy with shuffles within the half, the row's loss and hit, and
  // dlogits = (p - onehot) / batch (zeros in the padding). Two rows a warp at once: the 32 rows
  // of a full batch in one pass of this chain of shuffles and exponentials, not two.
  __device__ void softmax() {
    static_assert(CLASSES <= ROW_LANES, "a lane per class");
    const float inv_batch = 1.0f / static_cast<float>(a.batch);
    for (int base = 2 * warp; base < a.batch; base += 2 * WARPS) {
      const int r = base + lane / ROW_LANES, q = lane % ROW_LANES;
      const bool row = r < a.batch;  // both halves shuffle; only a row's half stores
      float z = -INFINITY;
      if (row && q < classes) {
        z = w1[units * qp + q];
#pragma unroll
        for (int w = 0; w < WARPS; ++w) z += logit_partial[(w * ROWS + r) * ls + q];
      }
      float top = z;
      int best = q;
      warp_first_maximum<ROW_LANES>(top, best);
      const float lse = top + logf(warp_sum<ROW_LANES>(row && q < classes ? expf(z - top) : 0.0f));
      const int32_t label = row ? row_label[r] : 0;
      const bool valid = label >= 0 && label < classes;
      const float picked = __shfl_sync(0xffffffffu, z, valid ? label : 0, ROW_LANES);
      if (row && q < qp) {
        dlogits[r * qp + q] =
            q < classes ? inv_batch * (expf(z - lse) - (q == label ? 1.0f : 0.0f)) : 0.0f;
      }
      if (row && q == 0) {
        row_loss[r] = valid ? lse - picked : NAN;
        row_hit[r] = best == label ? 1.0f : 0.0f;
      }
    }
    __syncthreads();  // dlogits are in
  }

  // Two things at once, from dlogits and this step's head: own units' gradients (dlogits W1^T)
  // * mask, a thread per (unit, row) from the first warps; and Adam on the block's rows of the
  // head (own units' outgoing weights, and block 0 the bias row), half a warp per weight from
  // the last warp down, its lanes adding rows r and r + 16 of the gradient
  // sum_r h(r, j) dlogits(r, q) (the bias's input is 1), published to the next step's head
  // copy, which every block reads after the next barrier.
  __device__ void gradients_and_head_adam(float* head_next, float lr_t) {
    if (tid < columns * ROWS) {
      const int u = tid / ROWS, r = tid % ROWS;
      float g = 0.0f;
      if (u < owned && r < a.batch) {
        const float* wj = w1 + (first_unit + u) * qp;
        for (int q = 0; q < classes; ++q) g += dlogits[r * qp + q] * wj[q];
        g *= mask[u * ROWS + r];
      }
      dh[u * ROWS + r] = g;
    }
    const int head_weights = (columns + 1) * classes;
    for (int base = 2 * (WARPS - 1 - warp); base < head_weights; base += 2 * WARPS) {
      const int t = base + lane / ROW_LANES, u = t / classes, q = t - u * classes;
      const int j = t < head_weights ? head_row(u) : -1;  // -1: none (both halves shuffle)
      float g = 0.0f;
      if (j >= 0) {
        for (int r = lane % ROW_LANES; r < a.batch; r += ROW_LANES) {
          g += (j < units ? hidden_out[r * hs + j] : 1.0f) * dlogits[r * qp + q];
        }
      }
      g = warp_sum<ROW_LANES>(g);
      if (j >= 0 && lane % ROW_LANES == 0) {
        float w = w1[j * qp + q];
        adam_apply(w, m1[u * qp + q], v1[u * qp + q], g, a.adam, lr_t);
        head_next[j * qp + q] = w;
      }
    }
    __syncthreads();  // dh is in
  }

  // Whether own_units_adam can issue the next step's rows 16-31 (own_unit_adam_issuing): a
  // thread takes at most ISSUING_INPUTS inputs of its unit. The same in every block.
  __device__ bool issues_rows_in_adam() const { return inputs <= ISSUING_INPUTS * k_stride; }

  // Adam on own units, from their gradients dh (no barrier after it: the next step's first
  // __syncthreads orders it). Row 0 lies at slot `first` of xs, as in forward. issue_rows:
  // call `issue` halfway, once this step's rows 0-15 are read (a full batch in the ring, where
  // issues_rows_in_adam); every thread of the block calls it then.
  template <typename Issue>
  __device__ void own_units_adam(float lr_t, int first, bool issue_rows, Issue&& issue) {
    const bool has_unit = c < owned;
    const int i = c * depth;
    float d[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) d[r] = has_unit ? dh[c * ROWS + r] : 0.0f;  // 0 past the batch
    if (issue_rows) {
      at_first_slot(first, [&](auto at) {
        own_unit_adam_issuing<decltype(at)::value>(a, d, xs, w0 + i, m0 + i, v0 + i, k_first,
                                                   k_stride, lr_t, has_unit, issue);
      });
    } else if (has_unit && a.batch == ROWS) {
      at_first_slot(first, [&](auto at) {
        own_unit_adam<true, decltype(at)::value>(a, d, xs, w0 + i, m0 + i, v0 + i, k_first,
                                                 k_stride, lr_t);
      });
    } else if (has_unit) {
      own_unit_adam<false, 0>(a, d, xs, w0 + i, m0 + i, v0 + i, k_first, k_stride, lr_t);
    }
  }
};

__global__ void __launch_bounds__(THREADS, 1) stationary_kernel(const Args a, const int columns,
                                                                 const bool prefetch) {
  cg::grid_group grid = cg::this_grid();
  extern __shared__ float4 shared_quads[];
  Block b(a, columns, prefetch, reinterpret_cast<float*>(shared_quads));
  if (bulk_rows(a) && b.tid == 0) {
    gemm::mbarrier_init(b.rows_landed, static_cast<uint32_t>(a.batch));  // an arrival a row
    gemm::fence_mbarrier_init();
  }
  __syncthreads();  // the mbarrier is ready before any row arrives on it
  b.move_state(true);

  const int32_t first_step = *a.counter;  // read by every block before its first barrier
  BatchSums sums;
  const bool keeps_sums = blockIdx.x == 0 && b.tid == SUMS_THREAD;
  if (keeps_sums) sums.load(a);
  NextRows next;
  read_next_places(a, 0, next);
  read_next_rows(a, next);
  for (int64_t s = 0; s < a.steps; ++s) {
    const auto step = static_cast<uint32_t>(first_step + s);
    float* out = s % 2 == 0 ? a.out[0] : a.grad[0];  // the hidden output, by step parity
    const float* head_now = a.head_copy[s % 2];      // the head: this step's, and
    float* head_next = a.head_copy[(s + 1) % 2];     // the next one's (own rows)
    PhaseClock clock(a, s);
    clock.mark();
    // Adam's step sizes (two pows in double, ~1 us for one thread) for the next 512 steps at
    // once, a thread each, instead of one thread's every step.
    if (s % THREADS == 0 && s + b.tid < a.steps) {
      b.step_sizes[b.tid] = static_cast<float>(adam_step_size(a.adam, first_step + s + b.tid + 1));
    }
    const int first = first_slot(prefetch, s);
    // Each warp's rows that the step before issued: its first during the head, its second
    // during own units' Adam where that can.
    const int prefetched = prefetch && s > 0 ? (b.issues_rows_in_adam() ? 2 : 1) : 0;
    gather_rows(a, next, b.xs, first, prefetched, b.row_label, b.rows_landed,
                static_cast<uint32_t>(s & 1));
    __syncthreads();  // the rows and step sizes are in
    const float lr_t = b.step_sizes[s % THREADS];
    clock.mark();
    clock.mark();
    b.forward(out, step, first);
    clock.mark();
    if (a.arrival != nullptr && b.tid == 0 && s < CLOCK_STEPS) {
      a.arrival[s * gridDim.x + blockIdx.x] = global_nanoseconds();
    }
    grid.sync();  // every unit's output of this step, and every row of its head, are in
    clock.mark();
    if (s + 1 < a.steps) read_next_places(a, s + 1, next);
    b.read_outputs_and_head(out, head_now);
    if (s + 1 < a.steps) read_next_rows(a, next);  // in flight to the next step's start
    const bool next_in_ring = prefetch && s + 1 < a.steps;
    if (next_in_ring) prefetch_row(a, next, 0, b.xs, first_slot(prefetch, s + 1), b.rows_landed);
    clock.mark();
    clock.mark();
    b.logits();
    clock.mark();
    clock.mark();
    b.softmax();
    clock.mark();
    clock.mark();
    if (keeps_sums) sums.add(b.row_loss, b.row_hit, a.batch);
    b.gradients_and_head_adam(head_next, lr_t);
    clock.mark();
    clock.mark();
    b.own_units_adam(lr_t, first, next_in_ring && b.issues_rows_in_adam(), [&] {
      prefetch_row(a, next, 1, b.xs, first_slot(prefetch, s + 1), b.rows_landed);
    });
    clock.mark();
    clock.mark();
    __syncthreads();  // the rows the next step's gather overwrites (all but a ring's last 16)
                      // and the step sizes are read before it does
  }

  b.move_state(false);
  if (keeps_sums) sums.store(a);
  if (blockIdx.x == 0 && b.tid == 0) *a.counter = first_step + static_cast<int32_t>(a.steps);
}

}  // namespace

std::vector<std::string> stationary_phases() {
  return {"gather rows", "forward", "read outputs and head", "logits", "softmax",
          "units' gradients, head's Adam", "units' Adam"};
}

void launch_stationary(const Args& a, const FusedMlpStationaryShape& shape) {
  const auto bytes = static_cast<size_t>(shape.shared_bytes);
  CHECK_CUDA(cudaFuncSetAttribute(stationary_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)));
  int columns = static_cast<int>(shape.columns);
  bool prefetch = shape.prefetch;  // the shape of this launch's batch
  void* arguments[] = {const_cast<Args*>(&a), &columns, &prefetch};
  CHECK_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(stationary_kernel),
                                         dim3(static_cast<unsigned>(shape.blocks)), dim3(THREADS),
                                         arguments, bytes, stream()));
  CHECK_LAUNCH();
}

}  // namespace engine::cuda::fused_mlp
