// Activations on the CPU: relu, tanh, sigmoid and their gradients (from the forward output
// y), alone and fused with a Dense layer's bias; GELU (its gradient from the input x); and
// sum_rows (the bias gradient alone).
// All are memory-bound loops; OpenMP splits them only above PARALLEL_GRAIN elements.
#include "core/ops/activation.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "cpu/cpu_device.h"

namespace engine::cpu {

void activation_forward(Activation act, const Tensor& x, Tensor& y) {
  const int64_t n = y.numel();
  const float* in = x.data<float>();
  float* out = y.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
  switch (act) {
    case Activation::Relu:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
      break;
    case Activation::Tanh:
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(in[i]);
      break;
    case Activation::Sigmoid:
      // 1 / (1 + e^-x) overflows e^-x for x < -88 to inf, which still gives the right 0.
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) out[i] = 1.0f / (1.0f + std::exp(-in[i]));
      break;
    case Activation::None:
    case Activation::Softmax:
      throw Error("activation_forward: not an elementwise activation");
  }
}

void activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx) {
  const int64_t n = dx.numel();
  const float* out = y.data<float>();
  const float* g = dy.data<float>();
  float* dg = dx.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
  switch (act) {
    case Activation::Relu:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) dg[i] = out[i] > 0.0f ? g[i] : 0.0f;
      break;
    case Activation::Tanh:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) dg[i] = g[i] * (1.0f - out[i] * out[i]);
      break;
    case Activation::Sigmoid:
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
      for (int64_t i = 0; i < n; ++i) dg[i] = g[i] * out[i] * (1.0f - out[i]);
      break;
    case Activation::None:
    case Activation::Softmax:
      throw Error("activation_backward: not an elementwise activation");
  }
}

// GELU in double inside: erf and exp of a float argument, rounded once to float at the end,
// the reference the GPU's float arithmetic is compared with.
void gelu_forward(const Tensor& x, Tensor& y) {
  const int64_t n = y.numel();
  const float* in = x.data<float>();
  float* out = y.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const double v = in[i];
    out[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v * M_SQRT1_2)));
  }
}

void gelu_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
  const int64_t n = dx.numel();
  const float* in = x.data<float>();
  const float* g = dy.data<float>();
  float* dg = dx.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
  constexpr double INV_SQRT_2PI = 0.3989422804014327;  // the normal density's 1 / sqrt(2 pi)
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const double v = in[i];
    const double cdf = 0.5 * (1.0 + std::erf(v * M_SQRT1_2));
    const double pdf = INV_SQRT_2PI * std::exp(-0.5 * v * v);
    dg[i] = static_cast<float>(g[i] * (cdf + v * pdf));
  }
}

void bias_activation_forward(Activation act, const Tensor& x, const Tensor& bias, Tensor& y) {
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

void bias_activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx,
                              Tensor& dbias) {
  activation_backward(act, y, dy, dx);
  if (dbias.defined()) column_sums(dx.data<float>(), dx.dim(0), dx.dim(1), dbias.data<float>());
}

void sum_rows(const Tensor& dy, Tensor& db) {
  column_sums(dy.data<float>(), dy.dim(0), dy.dim(1), db.data<float>());
}

}  // namespace engine::cpu
