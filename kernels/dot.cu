// The dot product: c = alpha * sum_i a[i] b[i] + beta * c, the matmul (1 x K) @ (K x 1) of the
// seed-002 sweep. cuda::matmul (kernels/matmul.cu) sends every M == 1, N == 1 product here
// (vendor::matmul, under --device cudnn, gives them to cuBLAS): small_splitk would give the
// whole of K to one 32 x 32 output tile split into at most 16 K slices, i.e. 16 blocks walking
// 10^8 elements.
//
// Napkin math, K = 10^8: 2e8 FLOP and 800 MB read (each byte once), intensity 0.25 FLOP/byte,
// far below the ridge (~17 FLOP/byte for 51 TFLOP/s over 3 TB/s): memory-bound. At 3.0 TB/s
// (H100) that is ~0.27 ms, at 4.2 TB/s (H200) ~0.19 ms; PyTorch takes longer (measured:
// docs/kernels/matmul.md, "The dot product"). Below K ~ 10^6 (8 MB, ~3 us of bandwidth) launch
// latency dominates.
//
// Plan: a grid of BLOCKS_PER_SM blocks per SM (fewer when K is small), each thread summing a
// fixed, strided set of elements with float4 loads (when a and b are equally aligned, else
// scalar loads; the same bytes either way), each block reducing its threads to one partial
// in a fixed order, then one block adding the partials in a fixed order and writing c. No
// atomics: the result is the same bits on every run. A grid of one block (K <= 4096) writes
// c itself, so a small dot is one launch.
#include <algorithm>
#include <cstdint>

#include "kernels/dot.h"
#include "kernels/launch.h"
#include "kernels/warp_reduce.cuh"

namespace engine::cuda {
namespace {

constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;
// 4 blocks x 256 threads = 1024 threads per SM, each with several 16-byte loads of a and b in
// flight (the unrolled loop below): ~64 KB in flight per SM, more than the ~15 KB that
// bandwidth x latency asks (3 TB/s x ~0.6 us over 132 SMs).
constexpr int BLOCKS_PER_SM = 4;
// A block is worth launching for at least 16 elements per thread: fewer, and the block
// reduction and the partial's round trip cost more than the loads.
constexpr int64_t MIN_ELEMENTS_PER_THREAD = 16;

// c = alpha * total + beta * c; c is not read when beta == 0 (it may hold garbage or NaN).
__device__ __forceinline__ void write_result(float* c, float alpha, float total, float beta) {
  *c = beta == 0.0f ? alpha * total : alpha * total + beta * *c;
}

// The sum of `v` over the block's THREADS threads, in a fixed order; valid in thread 0.
__device__ float block_sum(float v) {
  __shared__ float warp_totals[WARPS];
  v = warp_sum(v);
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();  // every warp's total is written before warp 0 reads them
  float total = 0.0f;
  if (warp == 0) {
    total = lane < WARPS ? warp_totals[lane] : 0.0f;
    total = warp_sum(total);
  }
  return total;
}

// Pass 1: each block's partial dot. Thread t of T (grid-wide) sums elements t, t + T, ... in
// that order. VEC: a and b have the same 16-byte phase, so after `head` scalar elements both
// are float4-aligned; the body is read as float4s (index t, t + T, ...) and the < 4 elements
// after it by the first threads. Without VEC, every element is a scalar load (still one
// coalesced 128-byte line per warp and operand).
template <bool VEC>
__global__ void __launch_bounds__(THREADS)
    dot_partial_kernel(const float* __restrict__ a, const float* __restrict__ b, int64_t n,
                       int head, float* __restrict__ partials, float* __restrict__ c, float alpha,
                       float beta) {
  const int64_t t = blockIdx.x * int64_t{THREADS} + threadIdx.x;
  const int64_t stride = int64_t{gridDim.x} * THREADS;
  float acc = 0.0f;
  if (VEC) {
    const int64_t quads = (n - head) / 4;
    const auto* a4 = reinterpret_cast<const float4*>(a + head);  // 16-byte aligned (host check)
    const auto* b4 = reinterpret_cast<const float4*>(b + head);
    // Unrolled so that each thread issues four iterations' loads before it needs their data.
#pragma unroll 4
    for (int64_t q = t; q < quads; q += stride) {
      const float4 x = a4[q], y = b4[q];
      acc = fmaf(x.x, y.x, acc);
      acc = fmaf(x.y, y.y, acc);
      acc = fmaf(x.z, y.z, acc);
      acc = fmaf(x.w, y.w, acc);
    }
    const int64_t tail = head + 4 * quads;  // elements [tail, n): fewer than 4
    if (t < head) acc = fmaf(a[t], b[t], acc);
    if (t < n - tail) acc = fmaf(a[tail + t], b[tail + t], acc);
  } else {
#pragma unroll 4
    for (int64_t i = t; i < n; i += stride) acc = fmaf(a[i], b[i], acc);
  }
  const float total = block_sum(acc);
  if (threadIdx.x != 0) return;
  if (gridDim.x == 1) {
    write_result(c, alpha, total, beta);  // a one-block grid is the whole dot
  } else {
    partials[blockIdx.x] = total;
  }
}

// Pass 2: one block adds the `count` partials in a fixed order and writes c.
__global__ void __launch_bounds__(THREADS)
    dot_finish_kernel(const float* __restrict__ partials, int count, float* __restrict__ c,
                      float alpha, float beta) {
  float acc = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < count; i += THREADS) acc += partials[i];
  const float total = block_sum(acc);
  if (threadIdx.x == 0) write_result(c, alpha, total, beta);
}

// Blocks for n elements: enough to give every thread MIN_ELEMENTS_PER_THREAD, at most
// BLOCKS_PER_SM per SM (more would only add partials: the loads are already in flight).
int dot_blocks(int64_t n) {
  const int64_t per_block = THREADS * MIN_ELEMENTS_PER_THREAD;
  const int64_t by_work = (n + per_block - 1) / per_block;
  const int64_t most = int64_t{BLOCKS_PER_SM} * multiprocessor_count();
  return static_cast<int>(std::max<int64_t>(1, std::min(by_work, most)));
}

// Elements before `p` reaches a 16-byte boundary (0..3); p is at least 4-byte aligned.
int misalignment(const float* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  return static_cast<int>(((16 - address % 16) % 16) / 4);
}

}  // namespace

void dot(const Tensor& a, const Tensor& b, Tensor& c, float alpha, float beta) {
  const int64_t n = a.numel();
  ENGINE_CHECK(b.numel() == n, "dot: a has ", n, " elements but b has ", b.numel());
  ENGINE_CHECK(c.numel() == 1, "dot: c must have one element, not ", c.numel());
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* pc = c.data<float>();
  // n == 0 needs no special case: one block sums nothing and writes c = beta * c.
  const int blocks = dot_blocks(n);
  Tensor partials;
  if (blocks > 1) partials = Tensor::empty({blocks}, DType::F32, c.device());
  float* pp = blocks > 1 ? partials.data<float>() : nullptr;
  // float4 loads need a and b at the same 16-byte phase; a slice at an odd offset may break it.
  const int head_a = misalignment(pa), head_b = misalignment(pb);
  if (head_a == head_b) {
    const int head = static_cast<int>(std::min<int64_t>(head_a, n));
    dot_partial_kernel<true><<<blocks, THREADS, 0, stream()>>>(pa, pb, n, head, pp, pc, alpha, beta);
  } else {
    dot_partial_kernel<false><<<blocks, THREADS, 0, stream()>>>(pa, pb, n, 0, pp, pc, alpha, beta);
  }
  CHECK_LAUNCH();
  if (blocks > 1) {
    dot_finish_kernel<<<1, THREADS, 0, stream()>>>(pp, blocks, pc, alpha, beta);
    CHECK_LAUNCH();
  }
}

}  // namespace engine::cuda
