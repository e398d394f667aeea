// The whole MLP training loop in one kernel launch (core/ops/fused_mlp.h): every step of a
// chunk of an epoch, each step's phases separated by grid-wide barriers. This is the streaming
// kernel, for any MLP the op takes: the weights stay in global memory (L2) and stream through
// the SMs every phase. An MLP of one or two hidden layers whose weights fit the SMs' shared
// memory runs in a weight-stationary kernel instead (kernels/fused_mlp_stationary.cu,
// kernels/fused_mlp_stationary_two.cu); the host side at the end of this file picks one. The
// CPU reference, phase for phase, is cpu/fused_mlp.cpp; the lesson, docs/FUSED_MLP.md.
//
// Why: the seed's small model (784 -> 128 -> 10, batch 32) does ~13 MFLOP and moves ~3 MB a
// step, under 2 us of an H100's work, but op by op it is 23 kernels, ~46 us a step even
// replayed as one CUDA graph: the time goes to launches and to the gaps between kernels.
// Here the launches are gone (one per chunk of steps), and a phase boundary costs a
// grid-wide barrier (~1 us) instead of a kernel boundary.
//
// Napkin math per step, small model, batch 32 (wide model: 784 -> 1000 -> 1000 -> 10):
//   multiply-adds   forward 3.21 M + head 0.04 M + its input gradient 0.04 M + weight
//                   gradients 3.26 M = 6.5 M (13 MFLOP; wide: 152 M, 0.3 GFLOP)
//   Adam            101,770 parameters x (read p, m, v; write p, m, v) = 2.4 MB, from L2:
//                   the parameters and moments (1.2 MB; wide 21.6 MB) fit in the 50 MB L2
//   batch           32 rows x 784 floats = 100 KB gathered by the epoch's order
//   barriers        3 (small: forward | head | Adam), 1 + 2 x hidden layers in general
// At ~60 TFLOP/s FP32 and ~6 TB/s of L2 the work is ~0.6 us; what bounds a step is the
// barriers and the latency of each phase's dependent loads. Measured on an H100
// (docs/FUSED_MLP.md): the barriers cost 1-2 us each, the phases are latency-bound (forward
// 6.2 us, head 2.2, Adam 9.2): 22 us a small step against the CUDA graph's 46; the wide model,
// whose 152 M multiply-adds want register tiles or tensor cores, 253 us against 111.
//
// Work split: every phase but the head is a set of dot products, out(r, c) = sum_k a(r, k)
// b(k, c), spread over the whole grid (dot): a warp takes one row and 32 neighbouring columns,
// a lane each, so its loads of b are whole 128-byte lines; where the tiles are few and long (the
// forward pass), up to 16 warps of a block share a tile's depth and add their parts in shared
// memory. The head is a block per row: the logits, softmax cross-entropy and the gradient of
// the layer below, with no barrier in between.
#include <cooperative_groups.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/device_caps.h"
#include "kernels/fused_mlp_common.cuh"
#include "kernels/launch.h"
#include "kernels/warp_reduce.cuh"

namespace engine::cuda {
namespace {

namespace cg = cooperative_groups;
using namespace fused_mlp;

constexpr int THREADS = 512;  // one block per SM: 16 warps
constexpr int WARPS = THREADS / 32;

// out(r, c) = sum_k a(r, k) b(k, c) for rows x cols outputs, over the whole grid. A tile is
// one row r and 32 columns, a lane per column, so a warp reads b along its rows (32 neighbouring
// floats: one 128-byte line per load) and a(r, k) as one broadcast. A tile's depth is cut
// among `split` warps of one block (a power of two, up to 16), so that the few tiles of a
// long dot (the forward pass: 32 rows x 4 tiles of 784 terms) still keep every warp of the
// grid busy, each with a short loop; their partial sums meet in shared memory, added in warp
// order (the same bits every run). Called by every thread of every block (it has
// __syncthreads); `partial` is the block's WARPS x 32 floats of shared memory.
template <typename A, typename B, typename Out>
__device__ __forceinline__ void dot(int rows, int cols, int depth, A a, B b, Out out,
                                    float* partial) {
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int col_tiles = (cols + 31) / 32;
  const int tiles = rows * col_tiles;
  // As many warps per tile as fill the grid once, no more than a slice of 16 terms each.
  int split = 1;
  while (split < WARPS && tiles * split * 2 <= static_cast<int>(gridDim.x) * WARPS &&
         depth >= 32 * split) {
    split *= 2;
  }
  const int per_block = WARPS / split;  // tiles a block takes at once
  const int tile_in_block = warp / split, part = warp % split;
  const int slice = (depth + split - 1) / split;
  for (int base = static_cast<int>(blockIdx.x) * per_block; base < tiles;
       base += static_cast<int>(gridDim.x) * per_block) {
    const int t = base + tile_in_block;
    const int r = t / col_tiles, c = t % col_tiles * 32 + lane;
    float acc = 0.0f;
    if (t < tiles && c < cols) {
      const int k_end = min(depth, (part + 1) * slice);
#pragma unroll 8
      for (int k = part * slice; k < k_end; ++k) acc += a(r, k) * b(k, c);
    }
    if (split == 1) {
      if (t < tiles && c < cols) out(r, c, acc);
      continue;  // block-uniform: split is the same for every thread
    }
    partial[warp * 32 + lane] = acc;
    __syncthreads();  // every part of the block's tiles is in
    if (part == 0 && t < tiles && c < cols) {
      float sum = 0.0f;
      for (int w = warp; w < warp + split; ++w) sum += partial[w * 32 + lane];
      out(r, c, sum);
    }
    __syncthreads();  // the partials are read before the next round overwrites them
  }
}

// Layer l's input row r: the batch's image for layer 0, else the layer below's output.
__device__ __forceinline__ const float* input_row(const Args& a, const int32_t* rows, int l,
                                                  int r) {
  return l == 0 ? a.x + int64_t{rows[r]} * a.layer[0].inputs
                : a.out[l - 1] + int64_t{r} * a.layer[l - 1].units;
}
// The gradient of layer l's output: a hidden layer's, or the head's dlogits.
__device__ __forceinline__ const float* output_grad(const Args& a, int l) {
  return l == a.layers - 1 ? a.dlogits : a.grad[l];
}

// z = in W + b, then ReLU and Dropout, into out[l].
__device__ void forward_layer(const Args& a, const int32_t* rows, int l, uint32_t step,
                              float* partial) {
  const Layer& layer = a.layer[l];
  const float* w = a.p + layer.offset;
  float* out = a.out[l];
  dot(
      a.batch, layer.units, layer.inputs,
      [&](int r, int k) { return input_row(a, rows, l, r)[k]; },
      [&](int k, int c) { return w[int64_t{k} * layer.units + c]; },
      [&](int r, int c, float z) {
        const int64_t i = int64_t{r} * layer.units + c;
        out[i] = activate(layer, z + w[int64_t{layer.inputs} * layer.units + c], i, step).out;
      },
      partial);
}

// A block per row: the logits are a dot of one tile (a lane per class) whose depth the
// block's warps share; then warp 0 does softmax cross-entropy, the row's loss and hit, and
// dlogits = (p - onehot) / batch; then every thread takes inputs of the gradient of the layer
// below, (dlogits W^T) * mask.
__device__ void head(const Args& a, const int32_t* rows, uint32_t step, float* partial) {
  const int h = a.layers - 1;
  const Layer& layer = a.layer[h];
  const int classes = layer.units;
  const float* w = a.p + layer.offset;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const float inv_batch = 1.0f / static_cast<float>(a.batch);
  const int slice = (layer.inputs + WARPS - 1) / WARPS;
  for (int r = static_cast<int>(blockIdx.x); r < a.batch; r += static_cast<int>(gridDim.x)) {
    const float* in = input_row(a, rows, h, r);
    float acc = 0.0f;
    if (lane < classes) {
      const int k_end = min(layer.inputs, (warp + 1) * slice);
#pragma unroll 8
      for (int k = warp * slice; k < k_end; ++k) acc += in[k] * w[int64_t{k} * classes + lane];
    }
    partial[warp * 32 + lane] = acc;
    __syncthreads();  // every warp's part of the logits is in
    if (warp == 0) {
      float z = 0.0f;
      for (int part = 0; part < WARPS; ++part) z += partial[part * 32 + lane];
      if (lane < classes) z += w[int64_t{layer.inputs} * classes + lane];
      // The first maximum (the larger logit wins, a tie the lower class, as count_correct).
      float top = lane < classes ? z : -INFINITY;
      int best = lane;
      warp_first_maximum(top, best);
      const float lse = top + logf(warp_sum(lane < classes ? expf(z - top) : 0.0f));
      const int32_t label = a.labels[rows[r]];
      const bool valid = label >= 0 && label < classes;
      const float picked = __shfl_sync(0xffffffffu, z, valid ? label : 0);
      if (lane == 0) {
        a.row_loss[r] = valid ? lse - picked : NAN;
        a.row_hit[r] = best == label ? 1.0f : 0.0f;
      }
      const float d = lane < classes
                          ? inv_batch * (expf(z - lse) - (lane == label ? 1.0f : 0.0f))
                          : 0.0f;
      if (lane < classes) a.dlogits[int64_t{r} * classes + lane] = d;
      partial[lane] = d;  // this lane's own slot, read above by this lane only
    }
    __syncthreads();  // the row's dlogits are in partial[0 .. classes)
    if (h > 0) {
      const Layer& below = a.layer[h - 1];
      for (int k = static_cast<int>(threadIdx.x); k < layer.inputs; k += THREADS) {
        const float* wk = w + int64_t{k} * classes;
        float g = 0.0f;
        for (int c = 0; c < classes; ++c) g += partial[c] * wk[c];
        const int64_t i = int64_t{r} * layer.inputs + k;
        a.grad[h - 1][i] = g * dropout_relu_factor(below, a.out[h - 1][i], i, step);
      }
    }
    __syncthreads();  // partial is read before the next row overwrites it
  }
}

// The gradient of layer l - 1's output, (g_l W_l^T) * mask, into grad[l - 1].
__device__ void input_gradient(const Args& a, int l, uint32_t step, float* partial) {
  const Layer& layer = a.layer[l];
  const Layer& below = a.layer[l - 1];
  const float* w = a.p + layer.offset;
  const float* g = a.grad[l];
  dot(
      a.batch, layer.inputs, layer.units,
      [&](int r, int c) { return g[int64_t{r} * layer.units + c]; },
      [&](int c, int k) { return w[int64_t{k} * layer.units + c]; },
      [&](int r, int k, float sum) {
        const int64_t i = int64_t{r} * layer.inputs + k;
        a.grad[l - 1][i] = sum * dropout_relu_factor(below, a.out[l - 1][i], i, step);
      },
      partial);
}

// Adam on layer l: the gradient of its kernel is in^T g, of its bias the column sums of g
// (the bias is the kernel's extra row, whose input is 1).
__device__ void adam_layer(const Args& a, const int32_t* rows, int l, float lr_t,
                           float* partial) {
  const Layer& layer = a.layer[l];
  const float* g = output_grad(a, l);
  const AdamConfig c = a.adam;
  dot(
      layer.inputs + 1, layer.units, a.batch,
      [&](int k, int r) { return k < layer.inputs ? input_row(a, rows, l, r)[k] : 1.0f; },
      [&](int r, int u) { return g[int64_t{r} * layer.units + u]; },
      [&](int k, int u, float grad) {
        const int64_t i = layer.offset + int64_t{k} * layer.units + u;
        float p = a.p[i], m = a.m[i], v = a.v[i];
        adam_apply(p, m, v, grad, c, lr_t);
        a.p[i] = p;
        a.m[i] = m;
        a.v[i] = v;
      },
      partial);
}

__global__ void __launch_bounds__(THREADS, 1) fused_mlp_kernel(const Args a) {
  cg::grid_group grid = cg::this_grid();
  __shared__ float lr_t;
  __shared__ float partial[WARPS * 32];  // the dot phases' partial sums
  // Every block reads the counter before the first barrier; block 0 writes it after the last.
  const int32_t first_step = *a.counter;
  BatchSums sums;
  if (blockIdx.x == 0 && threadIdx.x == 0) sums.load(a);
  for (int64_t s = 0; s < a.steps; ++s) {
    const int32_t* rows = a.order + s * a.batch;
    const auto step = static_cast<uint32_t>(first_step + s);
    if (threadIdx.x == 0) lr_t = static_cast<float>(adam_step_size(a.adam, first_step + s + 1));
    __syncthreads();  // lr_t is set (the barriers below order the rest)
    PhaseClock clock(a, s);
    clock.mark();

    for (int l = 0; l + 1 < a.layers; ++l) {
      forward_layer(a, rows, l, step, partial);
      clock.barrier(grid);  // layer l's output is whole before layer l + 1 (or the head) reads it
    }
    head(a, rows, step, partial);
    clock.barrier(grid);  // dlogits and the top hidden layer's gradient are complete
    for (int l = a.layers - 2; l >= 1; --l) {
      input_gradient(a, l, step, partial);  // reads W_l: Adam on it waits for the next phase
      adam_layer(a, rows, l + 1, lr_t, partial);
      clock.barrier(grid);
    }
    if (a.layers >= 2) adam_layer(a, rows, 1, lr_t, partial);
    adam_layer(a, rows, 0, lr_t, partial);
    if (blockIdx.x == 0 && threadIdx.x == 0) sums.add(a.row_loss, a.row_hit, a.batch);
    clock.barrier(grid);  // the weights are updated before the next step's forward reads them
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    sums.store(a);
    *a.counter = first_step + static_cast<int32_t>(a.steps);
  }
}

// Blocks that can all be resident at once (a cooperative launch's condition): one per SM.
int grid_blocks() {
  static const int blocks = [] {
    int per_sm = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fused_mlp_kernel, THREADS, 0));
    return per_sm >= 1 ? multiprocessor_count() : 0;
  }();
  return blocks;
}

}  // namespace

namespace fused_mlp {

void print_phases(const char* kernel, const std::vector<std::string>& phases,
                  const unsigned long long* device_clock, int64_t steps) {
  std::vector<unsigned long long> clock(static_cast<size_t>(steps * CLOCK_MARKS));
  CHECK_CUDA(cudaMemcpyAsync(clock.data(), device_clock, clock.size() * sizeof(clock[0]),
                             cudaMemcpyDeviceToHost, stream()));
  CHECK_CUDA(cudaStreamSynchronize(stream()));
  std::fprintf(stderr, "fused_mlp (%s kernel) phases, block 0, mean of %lld steps (us): ", kernel,
               static_cast<long long>(steps - 1));
  double total = 0.0;
  for (size_t p = 0; p < phases.size(); ++p) {
    double work = 0.0, wait = 0.0;
    for (int64_t s = 1; s < steps; ++s) {
      const unsigned long long* m = clock.data() + s * CLOCK_MARKS;
      work += static_cast<double>(m[2 * p + 1] - m[2 * p]);
      wait += static_cast<double>(m[2 * p + 2] - m[2 * p + 1]);
    }
    const double n = static_cast<double>(steps - 1) * 1e3;
    std::fprintf(stderr, "%s %.2f + barrier %.2f; ", phases[p].c_str(), work / n, wait / n);
    total += (work + wait) / n;
  }
  std::fprintf(stderr, "step %.2f\n", total);
}

void print_arrivals(const unsigned long long* device_arrival, int64_t steps, int64_t blocks) {
  std::vector<unsigned long long> arrival(static_cast<size_t>(steps * blocks));
  CHECK_CUDA(cudaMemcpyAsync(arrival.data(), device_arrival, arrival.size() * sizeof(arrival[0]),
                             cudaMemcpyDeviceToHost, stream()));
  CHECK_CUDA(cudaStreamSynchronize(stream()));
  // Per block, its mean lag behind the first block to arrive; per step, the last one's.
  std::vector<double> lag(static_cast<size_t>(blocks), 0.0);
  double spread = 0.0;
  for (int64_t s = 1; s < steps; ++s) {
    const unsigned long long* t = arrival.data() + s * blocks;
    const unsigned long long first = *std::min_element(t, t + blocks);
    const unsigned long long last = *std::max_element(t, t + blocks);
    spread += static_cast<double>(last - first);
    for (int64_t b = 0; b < blocks; ++b) {
      lag[static_cast<size_t>(b)] += static_cast<double>(t[b] - first);
    }
  }
  const double n = static_cast<double>(steps - 1) * 1e3;
  const auto slowest = std::max_element(lag.begin(), lag.end());
  std::vector<double> sorted = lag;
  std::sort(sorted.begin(), sorted.end());
  std::fprintf(stderr,
               "fused_mlp arrivals at the barrier, mean of %lld steps (us after the first "
               "block): last %.2f; block 0 %.2f, median block %.2f, slowest block (%lld) %.2f\n",
               static_cast<long long>(steps - 1), spread / n, lag[0] / n,
               sorted[sorted.size() / 2] / n, static_cast<long long>(slowest - lag.begin()),
               *slowest / n);
}

}  // namespace fused_mlp

namespace {

void launch_streaming(const Args& a) {
  void* arguments[] = {const_cast<Args*>(&a)};
  CHECK_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(fused_mlp_kernel),
                                         dim3(static_cast<unsigned>(grid_blocks())), dim3(THREADS),
                                         arguments, 0, stream()));
  CHECK_LAUNCH();
}

// The phases the streaming kernel's clock marks, in order.
std::vector<std::string> streaming_phases(int layers) {
  std::vector<std::string> names;
  for (int l = 0; l + 1 < layers; ++l) names.push_back("forward " + std::to_string(l));
  names.push_back("head");
  for (int l = layers - 2; l >= 1; --l) names.push_back("backward " + std::to_string(l));
  names.push_back("adam");
  return names;
}

}  // namespace

bool fused_mlp_supported() {
  static const bool supported = [] {
    int device = 0, cooperative = 0;
    CHECK_CUDA(cudaGetDevice(&device));
    CHECK_CUDA(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    return cooperative != 0 && grid_blocks() > 0;
  }();
  return supported;
}

void fused_mlp_steps(const FusedMlpPlan& plan, Tensor& params, Tensor& m, Tensor& v,
                     const Tensor& x, const Tensor& labels, const Tensor& order, int64_t batch,
                     int64_t steps, Tensor& step_counter, Tensor& workspace, Tensor& loss_sum,
                     Tensor& correct) {
  Args a{};
  a.layers = static_cast<int>(plan.layers.size());
  for (int l = 0; l < a.layers; ++l) {
    const FusedMlpLayer& layer = plan.layers[static_cast<size_t>(l)];
    a.layer[l] = {static_cast<int>(layer.inputs), static_cast<int>(layer.units), layer.offset,
                  layer.relu, layer.dropout_rate, layer.dropout_seed};
  }
  a.adam = plan.adam;
  a.p = params.data<float>();
  a.m = m.data<float>();
  a.v = v.data<float>();
  a.x = x.data<float>();
  a.labels = labels.data<int32_t>();
  a.order = order.data<int32_t>();
  a.batch = static_cast<int>(batch);
  a.steps = steps;
  a.counter = step_counter.data<int32_t>();
  float* w = workspace.data<float>();
  const FusedMlpWorkspace at = fused_mlp_workspace(plan, batch);
  for (int l = 0; l + 1 < a.layers; ++l) {
    a.out[l] = w + at.out[static_cast<size_t>(l)];
    a.grad[l] = w + at.grad[static_cast<size_t>(l)];
  }
  a.dlogits = w + at.dlogits;
  a.row_loss = w + at.row_loss;
  a.row_hit = w + at.row_hit;
  a.head_copy[0] = w + at.head_copy[0];
  a.head_copy[1] = w + at.head_copy[1];
  a.layer_copy[0] = w + at.layer_copy[0];
  a.layer_copy[1] = w + at.layer_copy[1];
  a.logit_partials = w + at.logit_partials;
  a.loss_sum = loss_sum.data<float>();
  a.correct = correct.data<float>();

  // A stationary kernel where one takes the plan on this GPU, else the streaming one.
  const FusedMlpStationaryShape shape = fused_mlp_stationary_shape(
      plan, batch, multiprocessor_count(), device_caps().gpu.shared_bytes_per_block);
  const bool stationary = shape.why_not.empty();

  // ENGINE_FUSED_MLP_PHASES=1: where the steps' time goes, printed to stderr after the call
  // (a diagnostic for docs/FUSED_MLP.md; it waits for the device).
  static const bool phases = std::getenv("ENGINE_FUSED_MLP_PHASES") != nullptr;
  const int64_t clocked = phases ? std::min<int64_t>(steps, CLOCK_STEPS) : 0;
  if (clocked > 0) {
    CHECK_CUDA(cudaMalloc(&a.clock, static_cast<size_t>(clocked * CLOCK_MARKS) *
                                        sizeof(unsigned long long)));
    if (stationary) {
      CHECK_CUDA(cudaMalloc(&a.arrival, static_cast<size_t>(clocked * shape.blocks) *
                                            sizeof(unsigned long long)));
    }
  }
  const bool two_hidden = a.layers == 3;
  if (stationary && two_hidden) {
    launch_stationary_two(a, shape);
  } else if (stationary) {
    launch_stationary(a, shape);
  } else {
    launch_streaming(a);
  }
  if (clocked > 1) {
    print_phases(stationary ? "stationary" : "streaming",
                 !stationary  ? streaming_phases(a.layers)
                 : two_hidden ? stationary_two_phases()
                              : stationary_phases(),
                 a.clock, clocked);
  }
  if (clocked > 1 && stationary) print_arrivals(a.arrival, clocked, shape.blocks);
  if (clocked > 0) {
    CHECK_CUDA(cudaFree(a.clock));
    CHECK_CUDA(cudaFree(a.arrival));
  }
}

}  // namespace engine::cuda
