// Reductions on the CPU: sum (and so mean), its backward, and the accuracy count.
#include "core/ops/reduce.h"

#include <vector>

#include "core/ops/elementwise.h"
#include "cpu/cpu_device.h"

namespace engine::cpu {
namespace {
// Partial sums over fixed chunks, added in chunk order: the result does not depend on the
// thread count (an OpenMP reduction clause combines threads in arrival order).
constexpr int64_t SUM_CHUNK = 8192;
}  // namespace

void sum(const Tensor& x, Tensor& y, float scale, bool add_to_y) {
  const int64_t n = x.numel();
  const float* in = x.data<float>();
  const int64_t chunks = (n + SUM_CHUNK - 1) / SUM_CHUNK;
  std::vector<double> partial(static_cast<size_t>(chunks), 0.0);
  const int team = team_size(n, PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t end = (c + 1) * SUM_CHUNK < n ? (c + 1) * SUM_CHUNK : n;
    double s = 0.0;
    for (int64_t i = c * SUM_CHUNK; i < end; ++i) s += in[i];
    partial[static_cast<size_t>(c)] = s;
  }
  double total = 0.0;
  for (double s : partial) total += s;
  const float scaled = static_cast<float>(total * scale);
  float& out = y.data<float>()[0];
  out = add_to_y ? out + scaled : scaled;
}

void broadcast_scalar(const Tensor& s, float scale, Tensor& y) {
  cpu::fill(y, s.data<float>()[0] * scale);
}

void count_correct(const Tensor& logits, const Tensor& labels, Tensor& count) {
  const int64_t rows = logits.dim(0), cols = logits.dim(1);
  const float* in = logits.data<float>();
  if (labels.dtype() == DType::F32) {  // a sigmoid head: threshold 0.5, i.e. logit 0
    const float* target = labels.data<float>();
    int64_t correct = 0;
    for (int64_t r = 0; r < rows; ++r) correct += (in[r] > 0.0f) == (target[r] > 0.5f) ? 1 : 0;
    count.data<float>()[0] += static_cast<float>(correct);
    return;
  }
  const int32_t* label = labels.data<int32_t>();
  int64_t correct = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * cols;
    int64_t best = 0;  // first maximum wins, like numpy/Keras argmax
    for (int64_t c = 1; c < cols; ++c) best = row[c] > row[best] ? c : best;
    correct += best == label[r] ? 1 : 0;
  }
  count.data<float>()[0] += static_cast<float>(correct);
}

}  // namespace engine::cpu
