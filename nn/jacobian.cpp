// jacobian(): records f once, then fills J by one of the strategies of nn/jacobian.h.
//
// Layouts, flat and row-major. Dense J is (M, D) with M = f(x).numel(), D = x.numel(). In the
// per-sample view x is (N, I) and f(x) is (N, O) (rows flattened), dense J is (N, O, N, I)
// and the blocks alone are (N, O, I). Every placement below is one strided_copy (a 3-D walk,
// core/ops/strided_copy.h): one-hot bases, tangent chunks into columns, blocks onto the diagonal.
#include "nn/jacobian.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>

#include "core/autograd.h"
#include "core/device_services.h"
#include "core/error.h"
#include "core/linearize.h"
#include "core/nvtx.h"
#include "core/ops.h"
#include "nn/memory_estimate.h"
#include "nn/progress.h"

namespace engine::nn {
namespace {

using Clock = std::chrono::steady_clock;

// The loop's estimate: passes after the warm-up are timed until this much time has gone by
// (or MAX_TIMED_PASSES have run), at least MIN_TIMED_PASSES of them.
constexpr double ESTIMATE_SECONDS = 0.25;
constexpr int64_t MIN_TIMED_PASSES = 3;
constexpr int64_t MAX_TIMED_PASSES = 200;

struct Sizes {
  Shape x_shape, y_shape;
  int64_t D = 0, M = 0;        // x.numel(), f(x).numel()
  int64_t N = 0, I = 0, O = 0;  // per-sample: rows, x row width, f(x) row width
};

Shape joined(const Shape& a, const Shape& b) {
  Shape out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

Shape blocks_shape(const Sizes& s) {
  Shape out{s.N};
  out.insert(out.end(), s.y_shape.begin() + 1, s.y_shape.end());
  out.insert(out.end(), s.x_shape.begin() + 1, s.x_shape.end());
  return out;
}

// The allocator's peak over phases of the call: reset_peak() starts a phase, and the
// call's own peak is kept across the resets.
class MemoryMeter {
 public:
  explicit MemoryMeter(CachingAllocator& allocator)
      : allocator_(allocator), call_base_(allocator.stats().current_bytes) {
    allocator_.reset_peak();
  }
  void begin_phase() {
    call_peak_ = std::max(call_peak_, allocator_.stats().peak_bytes);
    phase_base_ = allocator_.stats().current_bytes;
    allocator_.reset_peak();
  }
  size_t phase_bytes() const { return allocator_.stats().peak_bytes - phase_base_; }
  size_t call_bytes() const {
    const size_t peak = std::max(call_peak_, allocator_.stats().peak_bytes);
    return peak > call_base_ ? peak - call_base_ : 0;
  }

 private:
  CachingAllocator& allocator_;
  size_t call_base_;
  size_t call_peak_ = 0;
  size_t phase_base_ = 0;
};

// K one-hot vectors stacked, (K, *shape), seen as (K, R, C): element [k, r, start + k] is 1 in
// every one of the R rows (R = 1: a plain one-hot; R = N: the per-sample basis), all else 0.
Tensor one_hot_basis(int64_t K, const Shape& shape, int64_t R, int64_t C, int64_t start,
                     const Tensor& one) {
  Tensor basis = Tensor::zeros(stacked_shape(K, shape), DType::F32, one.device());
  raw::strided_copy(one, basis, {K, R, 1}, Walk3d{0, {0, 0, 0}}, Walk3d{start, {R * C + 1, C, 0}});
  return basis;
}

// Runs chunk(start, count) over [0, total) directions. The first chunk holds one direction;
// its measured working set sizes the others to fit memory_limit (nn/jacobian.h says why K
// directions need at most K times that).
void run_chunks(int64_t total, size_t memory_limit, MemoryMeter& meter, JacobianStats& stats,
                const std::function<void(int64_t, int64_t)>& chunk) {
  int64_t per_chunk = 1;
  for (int64_t start = 0; start < total;) {
    const int64_t count = std::min(per_chunk, total - start);
    meter.begin_phase();
    chunk(start, count);
    const size_t used = meter.phase_bytes();
    stats.working_set_bytes = std::max(stats.working_set_bytes, used);
    stats.directions_per_chunk = std::max(stats.directions_per_chunk, count);
    ++stats.chunks;
    if (start == 0) {
      per_chunk = std::max<int64_t>(1, static_cast<int64_t>(memory_limit / std::max<size_t>(used, 1)));
    }
    start += count;
  }
  stats.directions = total;
}

// One backward pass per element of f(x): the seed is a one-hot cotangent whose 1 moves along.
bool run_loop(const Linearization& lin, const Sizes& s, Tensor& dense, const JacobianOptions& o,
              JacobianStats& stats) {
  DeviceServices& device = dense.services();
  Tensor seed = Tensor::zeros(stacked_shape(1, s.y_shape), DType::F32, dense.device());
  const Tensor flat_seed = seed.view({s.M});
  auto pass = [&](int64_t i) {
    Tensor hot = flat_seed.slice(i, {1});
    raw::fill(hot, 1.0f);
    const Tensor row = lin.vjp(1, seed);  // (1, *x_shape): row i of J (the seed itself if f(x) = x)
    dense.slice(i * s.D, row.shape()).copy_from(row);
    raw::fill(hot, 0.0f);
  };
  stats.strategy = "loop";
  stats.directions = stats.chunks = s.M;
  stats.directions_per_chunk = 1;
  LoopEstimate& estimate = stats.loop;
  estimate.passes = s.M;

  pass(0);  // warm-up: first allocations
  device.synchronize();
  int64_t done = 1;
  const Clock::time_point timed_start = Clock::now();
  while (done < s.M && done - 1 < MAX_TIMED_PASSES &&
         (done - 1 < MIN_TIMED_PASSES || seconds_since(timed_start) < ESTIMATE_SECONDS)) {
    pass(done++);
  }
  device.synchronize();
  estimate.timed_passes = done - 1;
  estimate.seconds_per_pass =
      estimate.timed_passes > 0 ? seconds_since(timed_start) / static_cast<double>(estimate.timed_passes) : 0.0;
  estimate.total_seconds = estimate.seconds_per_pass * static_cast<double>(s.M);
  if (o.confirm_loop && !o.confirm_loop(estimate)) return false;

  std::unique_ptr<ProgressBar> bar;
  if (o.progress) bar = std::make_unique<ProgressBar>(*o.progress, s.M, ProgressBar::stdout_is_terminal());
  for (; done < s.M; ++done) {
    pass(done);
    if (bar && bar->due(done + 1)) bar->update(done + 1, {});
  }
  if (bar) bar->finish({});
  return true;
}

// Bytes of `floats` 4-byte floats, counted in double (a J can have more elements than an
// int64_t holds) and capped at the largest size_t.
size_t float_bytes(double floats) {
  const double bytes = floats * sizeof(float);
  const auto most = static_cast<double>(std::numeric_limits<size_t>::max());
  return bytes >= most ? std::numeric_limits<size_t>::max() : static_cast<size_t>(bytes);
}

// What to change when J does not fit: the blocks alone where they would help, or fewer rows.
std::string jacobian_memory_hint(const Shape& x_shape, const Shape& y_shape,
                                 const JacobianOptions& options) {
  if (!options.rowwise || options.blocks || options.mode == JacobianMode::Loop) {
    return "fewer rows of x (--val)";
  }
  JacobianOptions blocks = options;
  blocks.blocks = true;
  return "the diagonal blocks alone (--blocks) take " +
         memory_size(estimate_jacobian_memory(x_shape, y_shape, blocks).result) +
         "; or fewer rows of x (--val)";
}

}  // namespace

size_t JacobianMemory::total() const {
  return result > std::numeric_limits<size_t>::max() - dense ? std::numeric_limits<size_t>::max()
                                                             : result + dense;
}

JacobianMemory estimate_jacobian_memory(const Shape& x_shape, const Shape& y_shape,
                                        const JacobianOptions& options) {
  const auto x = static_cast<double>(numel(x_shape)), y = static_cast<double>(numel(y_shape));
  const double rows = options.blocks ? static_cast<double>(x_shape.at(0)) : 1.0;
  JacobianMemory need;
  need.result = float_bytes(x * y / rows);
  need.dense = options.mode == JacobianMode::Loop && options.blocks ? float_bytes(x * y) : 0;
  return need;
}

void check_jacobian_memory(const Shape& x_shape, const Shape& y_shape,
                           const JacobianOptions& options, Device device) {
  const JacobianMemory need = estimate_jacobian_memory(x_shape, y_shape, options);
  std::string parts = (options.blocks ? "its diagonal blocks " : "J ") + memory_size(need.result);
  if (need.dense > 0) parts += ", the dense J they are taken from " + memory_size(need.dense);
  Shape shape = y_shape;
  shape.insert(shape.end(), x_shape.begin(), x_shape.end());
  check_memory(need.total(), "J of shape " + engine::to_string(shape) + " (" + parts + ")",
               device_services(device).memory_info(), 0, device,
               jacobian_memory_hint(x_shape, y_shape, options));
}

const char* to_string(JacobianMode mode) {
  switch (mode) {
    case JacobianMode::Auto: return "auto";
    case JacobianMode::Loop: return "loop";
    case JacobianMode::Reverse: return "reverse";
    case JacobianMode::Forward: return "forward";
  }
  return "?";
}

Tensor jacobian(const std::function<Tensor(const Tensor&)>& f, const Tensor& x,
                const JacobianOptions& o, JacobianStats* stats_out) {
  ENGINE_CHECK(x.defined() && x.dtype() == DType::F32, "jacobian: x must be a float tensor");
  ENGINE_CHECK(!o.blocks || o.rowwise, "jacobian: blocks need a rowwise function (rowwise = true)");
  NvtxRange range("jacobian");
  JacobianStats stats;
  MemoryMeter meter(x.services().allocator());

  // Record f once on a copy of x that requires grad (even inside a NoGradGuard).
  Tensor leaf = x.clone();
  leaf.set_requires_grad(true);
  Tensor y;
  {
    GradModeGuard grad_on(true);
    y = f(leaf);
  }
  const Linearization lin(leaf, y);
  Sizes s;
  s.x_shape = x.shape();
  s.y_shape = y.shape();
  s.D = x.numel();
  s.M = y.numel();
  if (o.rowwise) {
    ENGINE_CHECK(x.ndim() >= 1 && y.ndim() >= 1 && x.dim(0) == y.dim(0),
                 "jacobian: rowwise needs x and f(x) with the same number of rows, got ",
                 engine::to_string(x.shape()), " and ", engine::to_string(y.shape()));
    s.N = x.dim(0);
    s.I = s.N > 0 ? s.D / s.N : 0;
    s.O = s.N > 0 ? s.M / s.N : 0;
  }
  const Shape dense_shape = joined(s.y_shape, s.x_shape);
  const Shape result_shape = o.blocks ? blocks_shape(s) : dense_shape;
  const Device device = x.device();

  // Which strategy: the loop only when asked; else per-sample if declared, and forward or
  // reverse by the number of directions each needs.
  std::string no_forward;
  const bool forward_ok = lin.forward_supported(&no_forward);
  const bool per_sample = o.rowwise && o.mode != JacobianMode::Loop;
  const int64_t forward_directions = per_sample ? s.I : s.D;
  const int64_t reverse_directions = per_sample ? s.O : s.M;
  bool forward = o.mode == JacobianMode::Forward;
  if (o.mode == JacobianMode::Auto) forward = forward_ok && forward_directions <= reverse_directions;
  ENGINE_CHECK(!forward || forward_ok, "jacobian: forward mode needs a forward-mode rule for every op, and '",
               no_forward, "' has none (use reverse or auto)");

  check_jacobian_memory(s.x_shape, s.y_shape, o, device);
  Tensor result = Tensor::empty(result_shape, DType::F32, device);
  stats.result_bytes = result.nbytes();
  const Tensor one = Tensor::full({1}, 1.0f, device);

  if (s.M == 0 || s.D == 0) {
    stats.strategy = "none: an empty Jacobian";
  } else if (!lin.depends_on_x()) {
    stats.strategy = "none: f(x) does not depend on x";
    raw::fill(result, 0.0f);
  } else if (o.mode == JacobianMode::Loop) {
    // Blocks from the loop: the dense J first, then its diagonal.
    Tensor dense = o.blocks ? Tensor::empty(dense_shape, DType::F32, device) : result;
    meter.begin_phase();
    if (!run_loop(lin, s, dense, o, stats)) {
      stats.completed = false;
      stats.peak_bytes = meter.call_bytes();
      if (stats_out) *stats_out = stats;
      return Tensor();
    }
    stats.working_set_bytes = meter.phase_bytes();
    if (o.blocks) {
      raw::strided_copy(dense, result, {s.N, s.O, s.I}, Walk3d{0, {s.O * s.N * s.I + s.I, s.N * s.I, 1}},
                   Walk3d{0, {s.O * s.I, s.I, 1}});
    }
  } else if (per_sample) {
    // Dense: zeros, and each chunk's blocks land on the diagonal; blocks: every element is
    // written by some chunk. Element (n, o, i) of a block is at n*bn + o*bo + i*bi in J.
    const int64_t bn = o.blocks ? s.O * s.I : s.O * s.N * s.I + s.I;
    const int64_t bo = o.blocks ? s.I : s.N * s.I;
    if (!o.blocks) raw::fill(result, 0.0f);
    if (forward) {
      stats.strategy = "forward, per-sample";
      // Tangent k puts a 1 on input column i = start + k of every row; its image holds
      // d f(x)[n, o] / d x[n, i] for every n and o: (K, N, O).
      run_chunks(s.I, o.memory_limit, meter, stats, [&](int64_t start, int64_t K) {
        const Tensor out = lin.jvp(K, one_hot_basis(K, s.x_shape, s.N, s.I, start, one));
        raw::strided_copy(out, result, {K, s.N, s.O}, Walk3d{0, {s.N * s.O, s.O, 1}},
                     Walk3d{start, {1, bn, bo}});
      });
    } else {
      stats.strategy = "reverse, per-sample";
      // Cotangent k puts a 1 on output column o = start + k of every row; its image holds
      // d f(x)[n, o] / d x[n, i] for every n and i: (K, N, I).
      run_chunks(s.O, o.memory_limit, meter, stats, [&](int64_t start, int64_t K) {
        const Tensor in = lin.vjp(K, one_hot_basis(K, s.y_shape, s.N, s.O, start, one));
        raw::strided_copy(in, result, {K, s.N, s.I}, Walk3d{0, {s.N * s.I, s.I, 1}},
                     Walk3d{start * bo, {bo, bn, 1}});
      });
    }
  } else {
    Tensor dense = result;  // (M, D); blocks need rowwise, which never comes here
    if (forward) {
      stats.strategy = "forward, dense";
      // Tangent k is the one-hot of x's element start + k; its image is column start + k.
      run_chunks(s.D, o.memory_limit, meter, stats, [&](int64_t start, int64_t K) {
        const Tensor out = lin.jvp(K, one_hot_basis(K, s.x_shape, 1, s.D, start, one));
        raw::strided_copy(out, dense, {K, s.M, 1}, Walk3d{0, {s.M, 1, 0}}, Walk3d{start, {1, s.D, 0}});
      });
    } else {
      stats.strategy = "reverse, dense";
      // Cotangent k is the one-hot of f(x)'s element start + k; its image is row start + k.
      run_chunks(s.M, o.memory_limit, meter, stats, [&](int64_t start, int64_t K) {
        const Tensor rows = lin.vjp(K, one_hot_basis(K, s.y_shape, 1, s.M, start, one));
        dense.slice(start * s.D, rows.shape()).copy_from(rows);
      });
    }
  }
  stats.peak_bytes = meter.call_bytes();
  if (stats_out) *stats_out = stats;
  return result;
}

}  // namespace engine::nn
