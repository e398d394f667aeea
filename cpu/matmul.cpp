// matmul on the CPU: C = alpha op(A) op(B) + beta C with OpenBLAS sgemm, parallelised by us.
//
// Napkin math: the seed-000 forward, (32 x 784) @ (784 x 128), is 6.4 MFLOP: about 60 us on
// one core at ~100 GFLOP/s. Small enough that thread start-up matters, so the OpenMP team
// splits C into at most one block per MIN_FLOPS_PER_BLOCK of work and each thread calls a
// single-threaded sgemm on its block. OpenBLAS itself always runs on one thread: in its
// pthread build its own pool would otherwise spin against our OpenMP team for the same cores
// (measured: a 16-core host slowed down by orders of magnitude), and one pool is also what
// makes --threads mean the same thing for every op.
#include "core/ops/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "core/ops/elementwise.h"
#include "cpu/cpu_device.h"

namespace engine::cpu {

void sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

namespace {

constexpr int64_t MIN_FLOPS_PER_BLOCK = 2'000'000;
constexpr int64_t BLOCK_ALIGN = 16;  // block edges on multiples of 16 keep sgemm's kernels full

struct GemmArgs {
  bool ta, tb;
  int64_t m, n, k;
  float alpha;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float beta;
  float* c;
  int64_t ldc;
};

void run(const GemmArgs& g) {
  sgemm(g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc);
}

// Rows [r0, r1) of C need rows r0.. of op(A): in stored A that is a row offset, or a
// column offset when A is stored transposed (K x M).
GemmArgs row_block(GemmArgs g, int64_t r0, int64_t r1) {
  g.a += g.ta ? r0 : r0 * g.lda;
  g.c += r0 * g.ldc;
  g.m = r1 - r0;
  return g;
}

// Columns [c0, c1) of C need columns c0.. of op(B): a column offset in stored B, or a row
// offset when B is stored transposed (N x K).
GemmArgs column_block(GemmArgs g, int64_t c0, int64_t c1) {
  g.b += g.tb ? c0 * g.ldb : c0;
  g.c += c0;
  g.n = c1 - c0;
  return g;
}

// c = alpha * (a . b) + beta * c for the degenerate matmul (1 x K) @ (K x 1). OpenBLAS'
// sgemm packs both vectors into its GEMM buffers first and then runs a 1 x 1 micro-kernel,
// several times slower than cblas_sdot on the same core (measured: docs/kernels/matmul.md,
// "The dot product"). And the row/column split above cannot split a 1 x 1 output, so sgemm
// would also run on one thread.
// So the dot goes to sdot, one call per chunk of DOT_CHUNK elements, chunks spread over
// the team; the chunk partials are added in order in double. The chunking does not depend
// on the thread count, so the result is the same for every --threads.
// Napkin math, K = 10^8: 800 MB read, 2e8 FLOP; ~40 ms on one core at 20 GB/s, and
// memory-bound on many (a 16-core server streams 50-100 GB/s: ~10 ms).
constexpr int64_t DOT_CHUNK = 16384;           // 64 KB of each operand per sdot call
constexpr int64_t DOT_PARALLEL_GRAIN = 65536;  // below this (~25 us on one core), one thread

void dot(const float* a, const float* b, int64_t k, float alpha, float beta, float* c) {
  const int64_t chunks = (k + DOT_CHUNK - 1) / DOT_CHUNK;
  std::vector<double> partial(static_cast<size_t>(chunks));
  const int team = team_size(k, DOT_PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < chunks; ++i) {
    const int64_t lo = i * DOT_CHUNK, len = std::min(DOT_CHUNK, k - lo);
    partial[static_cast<size_t>(i)] = cblas_sdot(static_cast<blasint>(len), a + lo, 1, b + lo, 1);
  }
  double total = 0.0;
  for (const double p : partial) total += p;
  const auto dot_value = static_cast<float>(total);
  // BLAS semantics: c is not read when beta is 0 (it may hold garbage or NaN).
  *c = beta == 0.0f ? alpha * dot_value : alpha * dot_value + beta * *c;
}

}  // namespace

void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
            float alpha, float beta) {
  const int64_t m = c.dim(0), n = c.dim(1);
  const int64_t k = transpose_a ? a.dim(0) : a.dim(1);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: C = beta * C (BLAS may reject zero leading dimensions)
    if (beta == 0.0f) {
      cpu::fill(c, 0.0f);
    } else {
      cpu::axpby(beta, c, 0.0f, c);
    }
    return;
  }
  if (m == 1 && n == 1) {  // a (1, K) row times a (K, 1) column: contiguous either way stored
    dot(a.data<float>(), b.data<float>(), k, alpha, beta, c.data<float>());
    return;
  }
  const GemmArgs whole{transpose_a, transpose_b, m, n, k, alpha, a.data<float>(), a.dim(1),
                       b.data<float>(), b.dim(1), beta, c.data<float>(), n};

  // Split the longer side of C into equal, aligned blocks, no more than the work justifies.
  const int64_t flops = 2 * m * n * k;
  const bool split_rows = m >= n;
  const int64_t side = split_rows ? m : n;
  int64_t blocks = std::min<int64_t>({num_threads(), flops / MIN_FLOPS_PER_BLOCK,
                                      (side + BLOCK_ALIGN - 1) / BLOCK_ALIGN});
  if (blocks <= 1) {
    run(whole);
    return;
  }
  int64_t block = (side + blocks - 1) / blocks;
  block = (block + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
  blocks = (side + block - 1) / block;
  // The whole team enters even when there are fewer blocks than threads (see team_size).
#pragma omp parallel for num_threads(num_threads()) schedule(static, 1)
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t lo = i * block, hi = std::min(side, lo + block);
    run(split_rows ? row_block(whole, lo, hi) : column_block(whole, lo, hi));
  }
}

}  // namespace engine::cpu
