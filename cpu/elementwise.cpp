// Elementwise CPU ops: the bias + activation epilogue and its gradient, sum_rows (the bias
// gradient alone), binary ops, axpby.
// All are memory-bound loops; OpenMP splits them only above PARALLEL_GRAIN elements.
#include <algorithm>
#include <vector>

#include "cpu/cpu_backend.h"

namespace engine::cpu {

void CpuBackend::bias_activation_forward(Activation act, const Tensor& x, const Tensor& bias,
                                         Tensor& y) {
  const int64_t rows = x.dim(0), cols = x.dim(1);
  const float* in = x.data<float>();
  const float* b = bias.data<float>();
  float* out = y.data<float>();
  const int team = team_size(rows * cols, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = in[r * cols + c] + b[c];
  }
  // The activation runs over the output while it is still in cache.
  if (act != Activation::None) activation_forward(act, y, y);
}

namespace {

// out[c] = sum_r g[r, c] in two levels: first the column sums of fixed blocks of
// SUM_BLOCK_ROWS rows (tasks = (row block, 64-column group), spread over the team), then the
// blocks' sums added in block order. Fixed blocks give the same result whatever the thread
// count, keep a float sum to a few hundred terms (a conv layer's bias sums 100 x 32 x 32 rows:
// one running float sum would lose ~1e5 eps), and let the tall, narrow sums of conv layers
// (102,400 x 32) use every thread.
constexpr int64_t SUM_BLOCK_ROWS = 512;
constexpr int64_t SUM_GROUP_COLS = 64;

void column_sums(const float* g, int64_t rows, int64_t cols, float* out) {
  const int64_t blocks = (rows + SUM_BLOCK_ROWS - 1) / SUM_BLOCK_ROWS;
  const int64_t groups = (cols + SUM_GROUP_COLS - 1) / SUM_GROUP_COLS;
  std::vector<float> partial(static_cast<size_t>(blocks * cols), 0.0f);
  const int team = team_size(rows * cols, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t task = 0; task < blocks * groups; ++task) {
    const int64_t b = task / groups, c0 = task % groups * SUM_GROUP_COLS;
    const int64_t c1 = std::min(c0 + SUM_GROUP_COLS, cols);
    const int64_t r1 = std::min((b + 1) * SUM_BLOCK_ROWS, rows);
    float* sums = partial.data() + b * cols;
    for (int64_t r = b * SUM_BLOCK_ROWS; r < r1; ++r) {
#pragma omp simd
      for (int64_t c = c0; c < c1; ++c) sums[c] += g[r * cols + c];
    }
  }
  std::fill(out, out + cols, 0.0f);
  for (int64_t b = 0; b < blocks; ++b) {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) out[c] += partial[static_cast<size_t>(b * cols + c)];
  }
}

}  // namespace

void CpuBackend::bias_activation_backward(Activation act, const Tensor& y, const Tensor& dy,
                                          Tensor& dx, Tensor& dbias) {
  activation_backward(act, y, dy, dx);
  if (dbias.defined()) column_sums(dx.data<float>(), dx.dim(0), dx.dim(1), dbias.data<float>());
}

void CpuBackend::sum_rows(const Tensor& dy, Tensor& db) {
  column_sums(dy.data<float>(), dy.dim(0), dy.dim(1), db.data<float>());
}

void CpuBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) {
  const int64_t n = y.numel();
  const float* x0 = a.data<float>();
  const float* x1 = b.data<float>();
  float* out = y.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
  switch (op) {
    case BinaryOp::Add:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = x0[i] + x1[i];
      break;
    case BinaryOp::Sub:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = x0[i] - x1[i];
      break;
    case BinaryOp::Mul:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = x0[i] * x1[i];
      break;
  }
}

void CpuBackend::axpby(float alpha, const Tensor& x, float beta, Tensor& y) {
  const int64_t n = y.numel();
  const float* in = x.data<float>();
  float* out = y.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
  if (beta == 0.0f) {  // do not read y: it may hold uninitialised memory (even NaN)
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
    for (int64_t i = 0; i < n; ++i) out[i] = alpha * in[i];
  } else {
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
    for (int64_t i = 0; i < n; ++i) out[i] = alpha * in[i] + beta * out[i];
  }
}

}  // namespace engine::cpu
