// What every SGEMM version of the ladder (kernels/matmul/v*.cu) shares: the problem
// description, how a block finds its slice of K, and how an element of op(A) or op(B) is
// found whichever way the operand is stored.
//
// The problem, row-major throughout: C (M, N) = alpha * op(A) @ op(B) + beta * C, where op(A)
// is (M, K) and op(B) is (K, N). A is stored (M, K) with row length lda, or transposed, (K, M)
// with row length lda; B likewise (K, N) or (N, K). Backward needs all four combinations.
//
// Split-K: when k_slice > 0, blockIdx.z picks the slice [z * k_slice, min(K, (z+1) * k_slice))
// and the block writes its partial product, without alpha or beta, to partial + z * M * N
// (row length N); split_k_reduce() then adds the slices in order (deterministic) and applies
// alpha and beta. Versions need not know: they call slice_of() and multiply what it returns.
//
// Everything under kernels/matmul/ lives in namespace cuda::gemm. Not cuda::matmul: that name
// is the op itself (core/ops/matmul.h, defined in kernels/matmul.cu), and C++ does not let a
// namespace and a function share a name in one scope.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace engine::cuda::gemm {

struct Gemm {
  int M = 0, N = 0, K = 0;
  const float* A = nullptr;
  int lda = 0;
  bool transpose_a = false;
  const float* B = nullptr;
  int ldb = 0;
  bool transpose_b = false;
  float* C = nullptr;
  int ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
  int k_slice = 0;          // > 0: split-K, one slice of K per blockIdx.z
  // Split-K workspace: (slices, M, N) for the ladder's versions; small_splitk.h lays it out
  // by output tile instead.
  float* partial = nullptr;
};

// The part of the problem one block works on: the whole of it, or one slice of K.
struct GemmSlice {
  const float* A;  // already offset to the slice's first k
  const float* B;
  float* C;
  int ldc;
  int K;  // this slice's depth
  float alpha, beta;
};

#if defined(__CUDACC__)  // device helpers; host code (apps, benches) sees only the types
// A and B from depth k0 of K on: a column offset in an (M, K) A, a row offset in a stored
// (K, M) A; likewise for B.
__device__ __forceinline__ const float* a_from(const Gemm& g, int k0) {
  return g.transpose_a ? g.A + int64_t{k0} * g.lda : g.A + k0;
}
__device__ __forceinline__ const float* b_from(const Gemm& g, int k0) {
  return g.transpose_b ? g.B + k0 : g.B + int64_t{k0} * g.ldb;
}

__device__ __forceinline__ GemmSlice slice_of(const Gemm& g) {
  if (g.k_slice == 0) return {g.A, g.B, g.C, g.ldc, g.K, g.alpha, g.beta};
  const int k0 = static_cast<int>(blockIdx.z) * g.k_slice;
  const int depth = min(g.k_slice, g.K - k0);
  float* c = g.partial + int64_t{blockIdx.z} * g.M * g.N;
  return {a_from(g, k0), b_from(g, k0), c, g.N, depth, 1.0f, 0.0f};
}

// op(A)[m, k] and op(B)[k, n] for the transpose flags (template parameters in kernels).
template <bool TA>
__device__ __forceinline__ float load_a(const float* A, int lda, int m, int k) {
  return TA ? A[int64_t{k} * lda + m] : A[int64_t{m} * lda + k];
}
template <bool TB>
__device__ __forceinline__ float load_b(const float* B, int ldb, int k, int n) {
  return TB ? B[int64_t{n} * ldb + k] : B[int64_t{k} * ldb + n];
}

// C = alpha * acc + beta * C; C is not read when beta is 0 (it may hold garbage or NaN).
__device__ __forceinline__ void store_c(const GemmSlice& s, int m, int n, float acc) {
  float* c = s.C + int64_t{m} * s.ldc + n;
  *c = s.beta == 0.0f ? s.alpha * acc : s.alpha * acc + s.beta * *c;
}

// C[m, n .. n + 3] = alpha * acc + beta * C, one 16-byte load and store (store_c's arithmetic);
// the caller checks that C's rows are 16-byte aligned and that the four columns exist.
__device__ __forceinline__ void store_c4(const GemmSlice& s, int m, int n, float4 acc) {
  float4* c = reinterpret_cast<float4*>(s.C + int64_t{m} * s.ldc + n);
  if (s.beta == 0.0f) {
    *c = make_float4(s.alpha * acc.x, s.alpha * acc.y, s.alpha * acc.z, s.alpha * acc.w);
  } else {
    const float4 old = *c;
    *c = make_float4(s.alpha * acc.x + s.beta * old.x, s.alpha * acc.y + s.beta * old.y,
                     s.alpha * acc.z + s.beta * old.z, s.alpha * acc.w + s.beta * old.w);
  }
}
#endif

// Calls kernel<TA, TB> for the problem's transpose flags:
//   dispatch_transposes(g, [&](auto ta, auto tb) { kernel<ta(), tb()><<<...>>>(g); });
template <typename Launch>
void dispatch_transposes(const Gemm& g, Launch&& launch) {
  using F = std::false_type;
  using T = std::true_type;
  if (!g.transpose_a && !g.transpose_b) launch(F{}, F{});
  else if (!g.transpose_a && g.transpose_b) launch(F{}, T{});
  else if (g.transpose_a && !g.transpose_b) launch(T{}, F{});
  else launch(T{}, T{});
}

// The grid for BM x BN output tiles, one z layer per K slice.
inline dim3 tile_grid(const Gemm& g, int bm, int bn) {
  const int slices = g.k_slice > 0 ? (g.K + g.k_slice - 1) / g.k_slice : 1;
  return dim3(static_cast<unsigned>((g.N + bn - 1) / bn), static_cast<unsigned>((g.M + bm - 1) / bm),
              static_cast<unsigned>(slices));
}

// One version of the ladder, as the engine and apps/kernel_bench see it.
struct Version {
  const char* name;          // "v5_blocktile_2d"
  const char* what_changed;  // one line: what this step changes and why it is faster
  bool tf32;                 // uses TF32 tensor cores (less precise than FP32)
  void (*launch)(const Gemm& g, cudaStream_t stream);
  // Whether this build and device can run it (v8 and v9 need sm_80; v10 and v11 sm_90a code
  // and a compute capability 9.0 GPU); nullptr: always. Callers skip a version that says no.
  bool (*available)() = nullptr;
};

// Every version, in the ladder's order (v1 first; v10 is slower than v9); defined in
// kernels/matmul/versions.cu.
const Version* versions(int* count);
const Version* find_version(const char* name);   // nullptr where this build has no such version
const Version& version_named(const char* name);  // throws engine::Error if unknown

// Adds the split-K slices in order and applies alpha and beta (one launch).
void split_k_reduce(const Gemm& g, int slices, cudaStream_t stream);
// out (rows x cols, contiguous) = the `slices` partials at `partial` ((slices, rows, cols))
// added in order: split_k_reduce for the kernels that reduce in blocks of their own (a bias
// gradient's chunks, a filter gradient's pixel runs).
void add_partials(const float* partial, int slices, int rows, int cols, float* out, cudaStream_t stream);
// One such sum: C (M x N, rows ldc apart) = alpha * (the `slices` partials at `partial`,
// stored (slices, M, N), added in order) + beta * C (C not read when beta is 0).
struct PartialSums {
  const float* partial = nullptr;
  int slices = 0, M = 0, N = 0;
  float* C = nullptr;
  int ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
};
// Two independent sums in one launch where one kernel suits both (else two launches): a
// filter gradient's dw and its bias gradient db, which would each cost a launch of ~2-3 us
// (H200) for a few microseconds of loads.
void add_partials(const PartialSums& first, const PartialSums& second, cudaStream_t stream);

}  // namespace engine::cuda::gemm
