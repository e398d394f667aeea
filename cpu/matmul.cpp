// matmul on the CPU: C = alpha op(A) op(B) + beta C with OpenBLAS sgemm, parallelised by us.
//
// Napkin math: the seed-000 forward, (32 x 784) @ (784 x 128), is 6.4 MFLOP: about 60 us on
// one core at ~100 GFLOP/s. Small enough that thread start-up matters, so the OpenMP team
// splits C into at most one block per MIN_FLOPS_PER_BLOCK of work and each thread calls a
// single-threaded sgemm on its block. OpenBLAS itself always runs on one thread: in its
// pthread build its own pool would otherwise spin against our OpenMP team for the same cores
// (measured: a 16-core host slowed down by orders of magnitude), and one pool is also what
// makes --threads mean the same thing for every op.
#include <cblas.h>

#include <algorithm>

#include "cpu/cpu_backend.h"

namespace engine::cpu {
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

void sgemm(const GemmArgs& g) {
  cblas_sgemm(CblasRowMajor, g.ta ? CblasTrans : CblasNoTrans, g.tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(g.m), static_cast<blasint>(g.n), static_cast<blasint>(g.k),
              g.alpha, g.a, static_cast<blasint>(g.lda), g.b, static_cast<blasint>(g.ldb), g.beta,
              g.c, static_cast<blasint>(g.ldc));
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

}  // namespace

void CpuBackend::matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b,
                        Tensor& c, float alpha, float beta) {
  const int64_t m = c.dim(0), n = c.dim(1);
  const int64_t k = transpose_a ? a.dim(0) : a.dim(1);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: C = beta * C (BLAS may reject zero leading dimensions)
    if (beta == 0.0f) {
      fill(c, 0.0f);
    } else {
      axpby(beta, c, 0.0f, c);
    }
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
    sgemm(whole);
    return;
  }
  int64_t block = (side + blocks - 1) / blocks;
  block = (block + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
  blocks = (side + block - 1) / block;
  // The whole team enters even when there are fewer blocks than threads (see team_size).
#pragma omp parallel for num_threads(num_threads()) schedule(static, 1)
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t lo = i * block, hi = std::min(side, lo + block);
    sgemm(split_rows ? row_block(whole, lo, hi) : column_block(whole, lo, hi));
  }
}

}  // namespace engine::cpu
