// Row-wise softmax / log-softmax and the fused softmax + cross-entropy, on the CPU.
// Every row subtracts its maximum before exponentiating, so no logit overflows exp().
#include "core/ops/softmax.h"

#include <cmath>

#include "core/error.h"
#include "cpu/cpu_device.h"

namespace engine::cpu {
namespace {

// log(sum(exp(row - max))) + max, and the max, for one row.
struct RowStats {
  float max;
  float log_sum_exp;
};

RowStats row_stats(const float* row, int64_t cols) {
  float max = -INFINITY;
  for (int64_t c = 0; c < cols; ++c) max = row[c] > max ? row[c] : max;
  float total = 0.0f;
  for (int64_t c = 0; c < cols; ++c) total += std::exp(row[c] - max);
  return {max, max + std::log(total)};
}

}  // namespace

void softmax_forward(const Tensor& x, Tensor& y, bool log) {
  const int64_t rows = x.dim(0), cols = x.dim(1);
  const float* in = x.data<float>();
  float* out = y.data<float>();
  const int team = team_size(rows * cols, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * cols;
    const RowStats s = row_stats(row, cols);
    for (int64_t c = 0; c < cols; ++c) {
      const float log_p = row[c] - s.log_sum_exp;
      out[r * cols + c] = log ? log_p : std::exp(log_p);
    }
  }
}

void softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log) {
  const int64_t rows = y.dim(0), cols = y.dim(1);
  const float* out = y.data<float>();
  const float* g = dy.data<float>();
  float* dg = dx.data<float>();
  const int team = team_size(rows * cols, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* yr = out + r * cols;
    const float* gr = g + r * cols;
    float* dr = dg + r * cols;
    if (log) {  // y = log p:  dx = dy - p * sum(dy)
      float total = 0.0f;
      for (int64_t c = 0; c < cols; ++c) total += gr[c];
      for (int64_t c = 0; c < cols; ++c) dr[c] = gr[c] - std::exp(yr[c]) * total;
    } else {  // y = p:  dx = p * (dy - sum(dy * p))
      float dot = 0.0f;
      for (int64_t c = 0; c < cols; ++c) dot += gr[c] * yr[c];
      for (int64_t c = 0; c < cols; ++c) dr[c] = yr[c] * (gr[c] - dot);
    }
  }
}

void softmax_cross_entropy_forward(const Tensor& logits, const Tensor& labels, Tensor& probs,
                                   Tensor& loss) {
  const int64_t rows = logits.dim(0), cols = logits.dim(1);
  const float* in = logits.data<float>();
  const int32_t* label = labels.data<int32_t>();
  float* p = probs.data<float>();
  float* l = loss.data<float>();
  for (int64_t r = 0; r < rows; ++r) {
    ENGINE_CHECK(label[r] >= 0 && label[r] < cols, "sparse_softmax_cross_entropy: label ",
                 label[r], " in row ", r, " is outside [0, ", cols, ")");
  }
  const int team = team_size(rows * cols, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * cols;
    const RowStats s = row_stats(row, cols);
    for (int64_t c = 0; c < cols; ++c) p[r * cols + c] = std::exp(row[c] - s.log_sum_exp);
    l[r] = s.log_sum_exp - row[label[r]];  // -log p[label], without rounding p first
  }
}

void softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels, const Tensor& dloss,
                                    Tensor& dlogits) {
  const int64_t rows = probs.dim(0), cols = probs.dim(1);
  const float* p = probs.data<float>();
  const int32_t* label = labels.data<int32_t>();
  const float* g = dloss.data<float>();
  float* d = dlogits.data<float>();
  const int team = team_size(rows * cols, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      d[r * cols + c] = g[r] * (p[r * cols + c] - (c == label[r] ? 1.0f : 0.0f));
    }
  }
}

}  // namespace engine::cpu
