// The weight-stationary fused MLP kernel for two hidden layers (core/ops/fused_mlp.h): the
// seed's wide model, 784 -> 1000 -> 1000 -> 10, every step of a launch with each block's share
// of the weights and of Adam's moments in its shared memory from the first step to the last.
// The one-hidden-layer kernel it follows is kernels/fused_mlp_stationary.cu; the CPU
// reference, cpu/fused_mlp.cpp; the lesson, docs/FUSED_MLP.md.
//
// Why: op by op the wide model's step is ~27 kernels, ~88 us as one CUDA graph on an H200, and
// the streaming kernel (kernels/fused_mlp.cu), which moves the 1.8 M weights and their moments
// through L2 every step, ~250 us. Here block b owns COLS units of each hidden layer: their
// kernel columns, biases and Adam moments, and layer 1's units' rows of the head (block 0 also
// the head's bias). A block computes its own units' outputs and gradients and updates its own
// weights; only activations, gradients and the logits' parts cross between blocks, through L2,
// and one weight matrix, layer 1's kernel, whose rows the input gradient of layer 0 needs
// (those of a block's layer-0 units), published by its owners a step ahead, by step parity:
//   1  own layer-0 outputs from the batch's rows                                -> barrier
//   2  own layer-1 outputs from every layer-0 output; the block's part of the logits (own
//      units' outputs times their rows of the head; block 0 adds the bias)      -> barrier
//   3  a block per row: the logits (every block's part, in block order), softmax
//      cross-entropy, the row's loss and hit, dlogits                           -> barrier
//   4  own layer-1 gradients (dlogits W2^T) * mask, published; Adam on own rows of the head;
//      Adam on own layer-1 units (their new columns published for the next step) -> barrier
//   5  own layer-0 gradients from every layer-1 gradient and this step's rows of layer 1's
//      kernel; Adam on own layer-0 units
// A buffer written in one phase is read only after a barrier and rewritten only after the
// next step's barrier that follows every read of it, so one copy of each suffices; layer 1's
// kernel is the exception (written in phase 4, read in phase 5 of the next step), hence two.
//
// Napkin math per step, wide model, batch 32, 8 units a block on 125 of an H200's 132 SMs:
//   a block   1.17 M multiply-adds (forward 200 k + 256 k, layer 0's input gradient 256 k,
//             weight gradients 256 k + 200 k): ~0.5 us at 128 FMAs a clock; the dots read
//             their weights from shared memory, a warp 4 rows x 8 units at once: 8 x 1000 / 32
//             x 8 groups = 2,000 clocks (~1 us) for a 1000-input layer
//   from L2   the rows 100 KB twice (forward, weight gradient), layer 0's output 128 KB twice,
//             layer 1's gradient 128 KB, 8 rows of layer 1's kernel 32 KB: ~620 KB a block, 78
//             MB for the grid, ~11 us at ~7 TB/s: the largest cost
//   barriers  4 (~1 us each)
//   shared    own weights and moments 3 x 8 x (785 + 1001) floats = 171 KB, layer 1's rows
//             32 KB, the rest 8 KB: 211 KB of 227 KiB
// which predicted ~20 us a step, against the graph's 88. Measured (docs/FUSED_MLP.md): 58.7 us
// on an H200, 1.47x the graph and 3.7x PyTorch at its best. Block 0's clock gives the phases
// with the weight gradients and Adam 20 and 16 us of 57, where ncu counts ~5 us of issued
// instructions in each, and finds the warps waiting mostly at barriers and on short
// dependencies, not on L2: where those phases lose their time is the next question.
#include <cooperative_groups.h>

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
constexpr int ROW_LANES = 16;  // lanes a row in the softmax, a lane per class
constexpr int GROUPS = THREADS / ROW_LANES;  // a row's logits are added by 32 groups of blocks
static_assert(FUSED_MLP_STATIONARY_MAX_CLASSES <= ROW_LANES, "a lane per class");

// out(r, u) = sum_k row(r)[k] w[u * ld + k] for the batch's rows r and the block's COLS units u
// (an unowned unit's weights are zeros). A warp takes ROWS / COLS rows x COLS units, 32 sums a
// lane; the WARPS / COLS warps of a group of rows split the inputs, a lane per input, so a
// warp's load of a row is one 128-byte line and its read of a unit's weights one row of
// shared memory without bank conflicts. Lane j of warp w leaves its warp's sum for (row
// (w / SPLIT) * R + j / COLS, unit j % COLS) in partial[32 w + j]; own_dot adds a pair's parts.
template <int COLS, typename Row>
__device__ __forceinline__ void own_dots(Row row, int depth, const float* w, int ld, int batch,
                                         float* partial) {
  constexpr int R = ROWS / COLS, SPLIT = WARPS / COLS;
  // Inputs a lane loads before it uses the first: 32 floats in flight, so a 1000-input dot
  // waits for L2 twice, not 16 times (~1 us a round trip with every SM loading).
  constexpr int IN_FLIGHT = 32 / R;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int row0 = warp / SPLIT * R, stride = SPLIT * 32;
  const float* in[R];  // the warp's rows (loaded through L2: other blocks may have written them)
#pragma unroll
  for (int i = 0; i < R; ++i) in[i] = row(min(row0 + i, batch - 1));
  float acc[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) acc[i] = 0.0f;
  for (int k0 = warp % SPLIT * 32 + lane; k0 < depth; k0 += IN_FLIGHT * stride) {
    float x[IN_FLIGHT][R];
#pragma unroll
    for (int f = 0; f < IN_FLIGHT; ++f) {
      const int k = k0 + f * stride;
#pragma unroll
      for (int i = 0; i < R; ++i) {
        x[f][i] = k < depth && row0 + i < batch ? __ldcg(in[i] + k) : 0.0f;
      }
    }
#pragma unroll
    for (int f = 0; f < IN_FLIGHT; ++f) {
      const int k = k0 + f * stride;
      if (k < depth) {
        float wk[COLS];
#pragma unroll
        for (int u = 0; u < COLS; ++u) wk[u] = w[u * ld + k];
#pragma unroll
        for (int i = 0; i < R; ++i) {
#pragma unroll
          for (int u = 0; u < COLS; ++u) acc[i * COLS + u] += x[f][i] * wk[u];
        }
      }
    }
  }
  partial[threadIdx.x] = warp_transposed_sums(acc);
  __syncthreads();  // every warp's sums are in
}

// The dot of (row r, unit u): its group's warps' parts, in warp order.
template <int COLS>
__device__ __forceinline__ float own_dot(const float* partial, int u, int r) {
  constexpr int R = ROWS / COLS, SPLIT = WARPS / COLS;
  const int first_warp = r / R * SPLIT, j = r % R * COLS + u;
  float z = 0.0f;
#pragma unroll
  for (int part = 0; part < SPLIT; ++part) z += partial[(first_warp + part) * 32 + j];
  return z;
}

// Adam on the COLS units' weights and biases: unit u's weight of input k has the gradient
// sum_r row(r)[k] dz(u, r), its bias (input `inputs`, whose value is 1) sum_r dz(u, r). A thread
// takes inputs k and k + THREADS at once, all 64 loads of row(.)[k] in flight before the first
// update (a store, which the loads after it would otherwise wait for); publish(k, u, w) sees
// each new weight of an owned unit.
template <int COLS, typename Row, typename Publish>
__device__ __forceinline__ void own_units_adam(Row row, int inputs, const float* dz, float* w,
                                               float* m, float* v, int owned, int batch,
                                               const AdamConfig& adam, float lr_t,
                                               Publish publish) {
  constexpr int AT_ONCE = 2;
  const int ld = inputs + 1;
  for (int k0 = static_cast<int>(threadIdx.x); k0 <= inputs; k0 += AT_ONCE * THREADS) {
    float x[AT_ONCE][ROWS];
#pragma unroll
    for (int j = 0; j < AT_ONCE; ++j) {
      const int k = k0 + j * THREADS;
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        x[j][r] = r < batch && k <= inputs ? (k < inputs ? __ldcg(row(r) + k) : 1.0f) : 0.0f;
      }
    }
#pragma unroll
    for (int j = 0; j < AT_ONCE; ++j) {
      const int k = k0 + j * THREADS;
      if (k > inputs) break;
#pragma unroll
      for (int u = 0; u < COLS; ++u) {
        if (u < owned) {
          // dz(u, .) four rows at a time (zero past the batch)
          const auto* d = reinterpret_cast<const float4*>(dz + u * ROWS);
          float g = 0.0f;
#pragma unroll
          for (int r = 0; r < ROWS; r += 4) {
            const float4 d4 = d[r / 4];
            g += x[j][r] * d4.x;
            g += x[j][r + 1] * d4.y;
            g += x[j][r + 2] * d4.z;
            g += x[j][r + 3] * d4.w;
          }
          const int i = u * ld + k;
          adam_apply(w[i], m[i], v[i], g, adam, lr_t);
          publish(k, u, w[i]);
        }
      }
    }
  }
}

// One block's part of the kernel: its shared memory (fused_mlp_two_hidden_layout), its units,
// and a step's phases in the order they run.
template <int COLS>
struct Block {
  const Args& a;
  const Layer &layer0, &layer1, &head;
  int inputs, units0, units1, classes, qp;
  float *w0, *m0, *v0, *w1, *m1, *v1, *w2, *m2, *v2, *rows_below, *mask0, *mask1, *out1, *dz0,
      *dz1, *dlogits, *partial, *row_loss, *row_hit, *step_sizes;
  int32_t *rows, *labels;
  uint32_t rows_landed;  // the mbarrier of rows_below's bulk copy (shared address)
  int tid;
  int first0, owned0, first1, owned1;  // own units of layer 0 and of layer 1

  __device__ Block(const Args& args, float* shared)
      : a(args), layer0(args.layer[0]), layer1(args.layer[1]), head(args.layer[2]),
        inputs(layer0.inputs), units0(layer0.units), units1(layer1.units),
        classes(head.units) {
    const FusedMlpTwoHiddenLayout at =
        fused_mlp_two_hidden_layout(inputs, units0, units1, classes, COLS);
    qp = at.classes_padded;
    w0 = shared + at.w0;
    m0 = shared + at.m0;
    v0 = shared + at.v0;
    w1 = shared + at.w1;
    m1 = shared + at.m1;
    v1 = shared + at.v1;
    w2 = shared + at.w2;
    m2 = shared + at.m2;
    v2 = shared + at.v2;
    rows_below = shared + at.rows_below;
    mask0 = shared + at.mask0;
    mask1 = shared + at.mask1;
    out1 = shared + at.out1;
    dz0 = shared + at.dz0;
    dz1 = shared + at.dz1;
    dlogits = shared + at.dlogits;
    partial = shared + at.partial;
    row_loss = shared + at.row_loss;
    row_hit = shared + at.row_hit;
    rows = reinterpret_cast<int32_t*>(shared + at.rows);
    labels = reinterpret_cast<int32_t*>(shared + at.labels);
    step_sizes = shared + at.lr_t;
    rows_landed = static_cast<uint32_t>(__cvta_generic_to_shared(shared + at.rows_landed));
    tid = static_cast<int>(threadIdx.x);
    first0 = static_cast<int>(blockIdx.x) * COLS;
    first1 = first0;
    owned0 = max(0, min(COLS, units0 - first0));
    owned1 = max(0, min(COLS, units1 - first1));
  }

  // The head's rows this block updates: row u < owned1 is own layer-1 unit first1 + u's
  // outgoing weights; row COLS is the bias's, block 0's. -1: none.
  __device__ __forceinline__ int head_row(int u) const {
    return u < owned1 ? first1 + u : u == COLS && blockIdx.x == 0 ? units1 : -1;
  }

  // The block's state between the model's buffers (p, m, v) and shared memory. Loading, the
  // columns of units it does not own become zeros (the dots read all COLS), its rows of the
  // head are padded with zeros, and its layer-1 columns also go to the copy of layer 1's kernel
  // that the first step's layer-0 gradients read.
  __device__ void move_state(bool load) {
    const auto move = [load](float* shared_value, float& value) {
      move_value(load, shared_value, value);
    };
    const auto columns = [&](const Layer& layer, int first, int owned, float* w, float* m,
                             float* v, float* copy) {
      const int ld = layer.inputs + 1;
      for (int i = tid; i < COLS * ld; i += THREADS) {
        const int u = i / ld, k = i - u * ld;
        if (u < owned) {
          const int64_t g = layer.offset + int64_t{k} * layer.units + first + u;
          move(w + i, a.p[g]);
          move(m + i, a.m[g]);
          move(v + i, a.v[g]);
          if (load && copy != nullptr && k < layer.inputs) {
            copy[int64_t{k} * layer.units + first + u] = w[i];
          }
        } else if (load) {
          w[i] = m[i] = v[i] = 0.0f;
        }
      }
    };
    columns(layer0, first0, owned0, w0, m0, v0, nullptr);
    columns(layer1, first1, owned1, w1, m1, v1, a.layer_copy[0]);
    for (int i = tid; i < (COLS + 1) * qp; i += THREADS) {
      const int u = i / qp, q = i - u * qp, j = head_row(u);
      if (j >= 0 && q < classes) {
        const int64_t g = head.offset + int64_t{j} * classes + q;
        move(w2 + i, a.p[g]);
        move(m2 + i, a.m[g]);
        move(v2 + i, a.v[g]);
      } else if (load) {
        w2[i] = m2[i] = v2[i] = 0.0f;
      }
    }
    if (load) {  // an unowned unit's rows of layer 1's kernel, which the dots read: zeros
      for (int i = owned0 * units1 + tid; i < COLS * units1; i += THREADS) rows_below[i] = 0.0f;
    }
  }

  // Own layer-0 units' rows of layer 1's kernel in `copy` (first0 .. first0 + owned0 - 1:
  // contiguous), and whether they travel asynchronously: whole aligned float4s on sm_80 and
  // later (one bulk copy on sm_90 and later, cp.async before), else plain loads.
  __device__ const float* own_rows(const float* copy) const {
    return copy + int64_t{first0} * units1;
  }
  __device__ bool rows_async(const float* copy) const {
#if __CUDA_ARCH__ >= 800
    return owned0 > 0 && owned0 * units1 % 4 == 0 &&
           reinterpret_cast<uintptr_t>(own_rows(copy)) % 16 == 0;
#else
    return false;
#endif
  }

  // Starts copying them into rows_below, to land while phases 2-4 run: `copy` is whole from the
  // step's first barrier on (its owners wrote it in the step before, or at the launch's start).
  // rows_below is free: the step before read it before its last __syncthreads.
  __device__ void start_rows_below(const float* copy) {
    if (!rows_async(copy)) return;
#if __CUDA_ARCH__ >= 800  // (before sm_80 rows_async is false: finish_rows_below loads them)
    const float* from = own_rows(copy);
    const int floats = owned0 * units1;
#if __CUDA_ARCH__ >= 900
    if (tid == 0) {
      // The other blocks' stores reach this copy by the generic proxy; the copy engine reads by
      // the async one.
      asm volatile("fence.proxy.async.global;\n" ::: "memory");
      const auto bytes = static_cast<uint32_t>(floats * sizeof(float));
      gemm::mbarrier_arrive_expect_tx(rows_landed, bytes);
      gemm::bulk_copy(static_cast<uint32_t>(__cvta_generic_to_shared(rows_below)), from, bytes,
                      rows_landed);
    }
#else
    for (int i = 4 * tid; i < floats; i += 4 * THREADS) {
      gemm::cp_async_16(rows_below + i, from + i, 16);
    }
    gemm::cp_async_commit();
#endif
#endif
  }

  // Waits for them (the mbarrier's phase `parity`: the launch's step & 1), or loads them.
  __device__ void finish_rows_below(const float* copy, uint32_t parity) {
    if (rows_async(copy)) {
#if __CUDA_ARCH__ >= 900
      gemm::mbarrier_wait(rows_landed, parity);
#else
      gemm::cp_async_wait<0>();
#endif
    } else {
      const float* from = own_rows(copy);
      for (int i = tid; i < owned0 * units1; i += THREADS) rows_below[i] = __ldcg(from + i);
    }
    __syncthreads();  // the rows are in
  }

  // The step's rows: their places in the data set and their labels.
  __device__ void read_rows(int64_t s) {
    if (tid < a.batch) {
      const int32_t row = a.order[s * a.batch + tid];
      rows[tid] = row;
      labels[tid] = a.labels[row];
    }
  }

  // A thread per (own unit, row) after own_dots: the unit's pre-activation (the dot and the
  // bias), ReLU and Dropout; the output into `out` (the layer's (batch, units) in device memory,
  // unless null) and `own_out` (shared, unless null), d(out)/d(z) into mask (zeros past the
  // batch and the owned units).
  __device__ void activate_own(const Layer& layer, const float* w, int first, int owned,
                               float* out, float* own_out, float* mask, uint32_t step) {
    if (tid < COLS * ROWS) {
      const int u = tid / ROWS, r = tid % ROWS;
      Activated y{0.0f, 0.0f};
      if (u < owned && r < a.batch) {
        const float z = own_dot<COLS>(partial, u, r) + w[u * (layer.inputs + 1) + layer.inputs];
        const int64_t i = int64_t{r} * layer.units + first + u;
        y = activate(layer, z, i, step);
        if (out != nullptr) out[i] = y.out;
      }
      if (own_out != nullptr) own_out[u * ROWS + r] = y.out;
      mask[u * ROWS + r] = y.factor;
    }
  }

  // Phase 1: own layer-0 units' outputs, from the batch's rows of the data set.
  __device__ void forward0(uint32_t step) {
    const float* x = a.x;
    const int n = inputs;
    const int32_t* places = rows;
    own_dots<COLS>([=](int r) { return x + int64_t{places[r]} * n; }, inputs, w0,
                   inputs + 1, a.batch, partial);
    activate_own(layer0, w0, first0, owned0, a.out[0], nullptr, mask0, step);
  }

  // Phase 2: own layer-1 units' outputs from every layer-0 output (from L2: __ldcg skips this
  // SM's L1, which may hold a line of a step before), and the block's part of the logits.
  __device__ void forward1(uint32_t step) {
    const float* h0 = a.out[0];
    const int n = units0;
    own_dots<COLS>([=](int r) { return h0 + int64_t{r} * n; }, units0, w1,
                   units0 + 1, a.batch, partial);
    activate_own(layer1, w1, first1, owned1, nullptr, out1, mask1, step);
    __syncthreads();  // own outputs are in
    const int r = tid / ROW_LANES, q = tid % ROW_LANES;
    if (r < a.batch && q < qp) {
      float z = blockIdx.x == 0 ? w2[COLS * qp + q] : 0.0f;
      for (int u = 0; u < owned1; ++u) z += out1[u * ROWS + r] * w2[u * qp + q];
      a.logit_partials[(int64_t{blockIdx.x} * a.batch + r) * qp + q] = z;
    }
  }

  // Phase 3, row r of the batch: its logits (32 groups of threads each add every 32nd block's
  // part, then half of warp 0 adds the groups', a lane per class: the same order, so the same
  // bits, every run), softmax cross-entropy, the row's loss and hit, and its dlogits =
  // (p - onehot) / batch, written for every block.
  __device__ void softmax_row(int r) {
    const int q = tid % ROW_LANES, group = tid / ROW_LANES;
    float part = 0.0f;
    if (q < classes) {
      const int blocks = static_cast<int>(gridDim.x);
#pragma unroll 4
      for (int b = group; b < blocks; b += GROUPS) {
        part += __ldcg(a.logit_partials + (int64_t{b} * a.batch + r) * qp + q);
      }
    }
    partial[tid] = part;
    __syncthreads();  // every group's part is in
    if (tid < 32) {  // the whole warp shuffles; lanes 16-31 carry nothing
      const bool lane_class = tid < ROW_LANES && q < classes;
      float z = -INFINITY;
      if (lane_class) {
        z = 0.0f;
        for (int g = 0; g < GROUPS; ++g) z += partial[g * ROW_LANES + q];
      }
      float top = z;
      int best = q;
      warp_first_maximum<ROW_LANES>(top, best);
      const float lse = top + logf(warp_sum<ROW_LANES>(lane_class ? expf(z - top) : 0.0f));
      const int32_t label = labels[r];
      const bool valid = label >= 0 && label < classes;
      const float picked = __shfl_sync(0xffffffffu, z, valid ? label : 0, ROW_LANES);
      if (lane_class) {
        a.dlogits[r * classes + q] = (expf(z - lse) - (q == label ? 1.0f : 0.0f)) /
                                     static_cast<float>(a.batch);
      }
      if (tid == 0) {
        a.row_loss[r] = valid ? lse - picked : NAN;
        a.row_hit[r] = best == label ? 1.0f : 0.0f;
      }
    }
    __syncthreads();  // partial is read before the next row's parts overwrite it
  }

  // Phase 4: the batch's dlogits (and, in block 0, the rows' losses and hits) into shared
  // memory; own layer-1 units' gradients (dlogits W2^T) * mask, published for phase 5; Adam on
  // own rows of the head and on own layer-1 units, whose new columns go to `next_copy`, the
  // next step's copy of layer 1's kernel.
  __device__ void layer1_backward(float lr_t, float* next_copy) {
    if (tid < ROWS * qp) {
      const int r = tid / qp, q = tid % qp;
      dlogits[tid] = r < a.batch && q < classes ? __ldcg(a.dlogits + r * classes + q) : 0.0f;
    }
    if (blockIdx.x == 0 && tid < a.batch) {
      row_loss[tid] = __ldcg(a.row_loss + tid);
      row_hit[tid] = __ldcg(a.row_hit + tid);
    }
    __syncthreads();  // dlogits are in
    if (tid < COLS * ROWS) {
      const int u = tid / ROWS, r = tid % ROWS;
      float g = 0.0f;
      if (u < owned1 && r < a.batch) {
        for (int q = 0; q < classes; ++q) g += dlogits[r * qp + q] * w2[u * qp + q];
        g *= mask1[u * ROWS + r];
        a.grad[1][int64_t{r} * units1 + first1 + u] = g;
      }
      dz1[u * ROWS + r] = g;
    }
    __syncthreads();  // dz1 is in, and the head's rows are read before their Adam
    for (int t = tid; t < (COLS + 1) * classes; t += THREADS) {
      const int u = t / classes, q = t - u * classes;
      if (head_row(u) < 0) continue;
      float g = 0.0f;
      for (int r = 0; r < a.batch; ++r) {
        g += (u < COLS ? out1[u * ROWS + r] : 1.0f) * dlogits[r * qp + q];
      }
      adam_apply(w2[u * qp + q], m2[u * qp + q], v2[u * qp + q], g, a.adam, lr_t);
    }
    const float* h0 = a.out[0];
    const int n = units0, m = units1, first = first1;
    own_units_adam<COLS>([=](int r) { return h0 + int64_t{r} * n; }, units0,
                         dz1, w1, m1, v1, owned1, a.batch, a.adam, lr_t,
                         [=](int k, int u, float w) {
                           if (k < n) next_copy[int64_t{k} * m + first + u] = w;
                         });
  }

  // Phase 5: own layer-0 units' rows of layer 1's kernel, as this step's forward pass used it
  // (`copy`, published in the step before; start_rows_below began copying them), in shared
  // memory; their gradients (dz1 W1^T) * mask from every layer-1 gradient; Adam on them.
  __device__ void layer0_backward(float lr_t, const float* copy, uint32_t parity) {
    finish_rows_below(copy, parity);
    const float* g1 = a.grad[1];
    const int m = units1;
    own_dots<COLS>([=](int r) { return g1 + int64_t{r} * m; }, units1,
                   rows_below, units1, a.batch, partial);
    if (tid < COLS * ROWS) {
      const int u = tid / ROWS, r = tid % ROWS;
      dz0[u * ROWS + r] =
          u < owned0 && r < a.batch ? own_dot<COLS>(partial, u, r) * mask0[u * ROWS + r] : 0.0f;
    }
    __syncthreads();  // dz0 is in
    const float* x = a.x;
    const int n = inputs;
    const int32_t* places = rows;
    own_units_adam<COLS>([=](int r) { return x + int64_t{places[r]} * n; }, inputs,
                         dz0, w0, m0, v0, owned0, a.batch, a.adam, lr_t,
                         [](int, int, float) {});
  }
};

template <int COLS>
__global__ void __launch_bounds__(THREADS, 1) stationary_two_kernel(const Args a) {
  cg::grid_group grid = cg::this_grid();
  extern __shared__ float4 shared_quads[];
  Block<COLS> b(a, reinterpret_cast<float*>(shared_quads));
  if (b.tid == 0) {
    gemm::mbarrier_init(b.rows_landed, 1);  // one arrival a step, with the bytes it expects
    gemm::fence_mbarrier_init();
  }
  b.move_state(true);
  __syncthreads();  // the mbarrier is ready before its first copy
  const int32_t first_step = *a.counter;  // read by every block before its first barrier
  BatchSums sums;
  const bool keeps_sums = blockIdx.x == 0 && b.tid == 0;
  if (keeps_sums) sums.load(a);
  for (int64_t s = 0; s < a.steps; ++s) {
    const auto step = static_cast<uint32_t>(first_step + s);
    PhaseClock clock(a, s);
    clock.mark();
    // Adam's step sizes for the next 512 steps at once, a thread each (as the one-layer kernel).
    if (s % THREADS == 0 && s + b.tid < a.steps) {
      b.step_sizes[b.tid] = static_cast<float>(adam_step_size(a.adam, first_step + s + b.tid + 1));
    }
    b.read_rows(s);
    __syncthreads();  // the rows and step sizes are in
    const float lr_t = b.step_sizes[s % THREADS];
    b.forward0(step);
    if (a.arrival != nullptr && b.tid == 0 && s < CLOCK_STEPS) {
      a.arrival[s * gridDim.x + blockIdx.x] = global_nanoseconds();
    }
    clock.barrier(grid);  // every layer-0 output is in
    b.start_rows_below(a.layer_copy[s % 2]);
    b.forward1(step);
    clock.barrier(grid);  // every block's part of the logits is in
    for (int r = static_cast<int>(blockIdx.x); r < a.batch; r += static_cast<int>(gridDim.x)) {
      b.softmax_row(r);
    }
    clock.barrier(grid);  // every row's dlogits, loss and hit are in
    b.layer1_backward(lr_t, a.layer_copy[(s + 1) % 2]);
    if (keeps_sums) sums.add(b.row_loss, b.row_hit, a.batch);
    clock.barrier(grid);  // every layer-1 gradient, and the next step's copy of layer 1, are in
    b.layer0_backward(lr_t, a.layer_copy[s % 2], static_cast<uint32_t>(s & 1));
    clock.mark();
    clock.mark();
    __syncthreads();  // the rows, gradients and step sizes are read before the next step
  }
  b.move_state(false);
  if (keeps_sums) sums.store(a);
  if (blockIdx.x == 0 && b.tid == 0) *a.counter = first_step + static_cast<int32_t>(a.steps);
}

template <int COLS>
void launch_with(const Args& a, const FusedMlpStationaryShape& shape) {
  const auto bytes = static_cast<size_t>(shape.shared_bytes);
  CHECK_CUDA(cudaFuncSetAttribute(stationary_two_kernel<COLS>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)));
  void* arguments[] = {const_cast<Args*>(&a)};
  CHECK_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(stationary_two_kernel<COLS>),
                                         dim3(static_cast<unsigned>(shape.blocks)), dim3(THREADS),
                                         arguments, bytes, stream()));
  CHECK_LAUNCH();
}

}  // namespace

std::vector<std::string> stationary_two_phases() {
  return {"forward 0", "forward 1, logits' parts", "softmax", "backward 1, Adam",
          "backward 0, Adam"};
}

void launch_stationary_two(const Args& a, const FusedMlpStationaryShape& shape) {
  static_assert(FUSED_MLP_TWO_HIDDEN_MAX_COLUMNS == 8, "a kernel for each of 1, 2, 4, 8");
  switch (shape.columns) {
    case 1: return launch_with<1>(a, shape);
    case 2: return launch_with<2>(a, shape);
    case 4: return launch_with<4>(a, shape);
    default: return launch_with<8>(a, shape);
  }
}

}  // namespace engine::cuda::fused_mlp
