// Mean squared and mean absolute error per sample, on the CPU (core/ops/regression_loss.h):
// pred and target (N, F) (or (N,): F = 1), loss (N,).
//   MSE: loss[n] = (1/F) sum_f d^2,   dpred[n, f] = dloss[n] 2 d / F     (d = pred - target)
//   MAE: loss[n] = (1/F) sum_f |d|,   dpred[n, f] = dloss[n] sign(d) / F  (0 where d = 0)
// In double, rounded once at the end: the reference the GPU's kernels are checked against.
#include "core/ops/regression_loss.h"

#include "cpu/cpu_device.h"

namespace engine::cpu {
namespace {

// Rows and outputs per row of pred, whose rows `loss` (N,) counts.
struct RowShape {
  int64_t rows, cols;
};

RowShape row_shape(const Tensor& pred, const Tensor& per_row) {
  const int64_t rows = per_row.numel();
  return {rows, rows > 0 ? pred.numel() / rows : 0};
}

// loss[n] = (1/F) sum_f term(pred[n, f] - target[n, f]), one row per iteration.
template <typename Term>
void row_means(const Tensor& pred, const Tensor& target, Tensor& loss, Term term) {
  // Plain variables, not a structured binding: OpenMP regions cannot capture those (Clang).
  const RowShape shape = row_shape(pred, loss);
  const int64_t rows = shape.rows, cols = shape.cols;
  const float* p = pred.data<float>();
  const float* t = target.data<float>();
  float* out = loss.data<float>();
  const int team = team_size(rows * cols, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0.0;
    for (int64_t c = r * cols; c < (r + 1) * cols; ++c) {
      total += term(static_cast<double>(p[c]) - static_cast<double>(t[c]));
    }
    out[r] = static_cast<float>(total / static_cast<double>(cols));
  }
}

// dpred[n, f] = dloss[n] * slope(pred[n, f] - target[n, f]) / F, one element per iteration.
template <typename Slope>
void row_gradients(const Tensor& pred, const Tensor& target, const Tensor& dloss, Tensor& dpred,
                   Slope slope) {
  const RowShape shape = row_shape(pred, dloss);
  const int64_t rows = shape.rows, cols = shape.cols;
  const float* p = pred.data<float>();
  const float* t = target.data<float>();
  const float* g = dloss.data<float>();
  float* out = dpred.data<float>();
  const int64_t n = rows * cols;
  const double outputs = static_cast<double>(cols);
  const int team = team_size(n, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(p[i]) - static_cast<double>(t[i]);
    out[i] = static_cast<float>(static_cast<double>(g[i / cols]) * slope(d) / outputs);
  }
}

double sign(double d) { return d > 0.0 ? 1.0 : (d < 0.0 ? -1.0 : 0.0); }

}  // namespace

void mean_squared_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss) {
  row_means(pred, target, loss, [](double d) { return d * d; });
}

void mean_squared_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                 Tensor& dpred) {
  row_gradients(pred, target, dloss, dpred, [](double d) { return 2.0 * d; });
}

void mean_absolute_error_forward(const Tensor& pred, const Tensor& target, Tensor& loss) {
  row_means(pred, target, loss, [](double d) { return d < 0.0 ? -d : d; });
}

void mean_absolute_error_backward(const Tensor& pred, const Tensor& target, const Tensor& dloss,
                                  Tensor& dpred) {
  row_gradients(pred, target, dloss, dpred, sign);
}

}  // namespace engine::cpu
