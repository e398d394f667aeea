// The profiling wrapper and its report (core/profiler.h).
#include "core/profiler.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <ostream>

#include "core/error.h"

namespace engine {

OpCost matmul_cost(int64_t m, int64_t n, int64_t k, size_t element_bytes) {
  const double e = static_cast<double>(element_bytes);
  return {2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k),
          e * static_cast<double>(m * k + k * n + m * n)};
}

OpCost conv2d_cost(const Conv2dGeometry& g) {
  const double flops = 2.0 * static_cast<double>(g.gemm_m()) * static_cast<double>(g.gemm_n()) *
                       static_cast<double>(g.gemm_k());
  const double bytes =
      4.0 * static_cast<double>(numel(g.x_shape()) + numel(g.w_shape()) + numel(g.y_shape()));
  return {flops, bytes};
}

OpCost elementwise_cost(int64_t elements, double flops_per_element, int tensors) {
  const double n = static_cast<double>(elements);
  return {n * flops_per_element, 4.0 * n * tensors};
}

namespace {

constexpr size_t MAX_PENDING = 4096;             // timer pairs kept before they are read and reused
std::string si(double value, const char* unit);  // "1.23 MB": below

std::string dims(const Tensor& t) {
  std::string s;
  for (int i = 0; i < t.ndim(); ++i) s += (i ? "x" : "") + std::to_string(t.dim(i));
  return s.empty() ? "scalar" : s;
}

double tensor_bytes(std::initializer_list<const Tensor*> tensors) {
  double bytes = 0.0;
  for (const Tensor* t : tensors) bytes += t->defined() ? static_cast<double>(t->nbytes()) : 0.0;
  return bytes;
}

// Every op of the wrapped backend, timed. Memory management, fences and timers pass through.
class ProfilingBackend final : public Backend {
 public:
  explicit ProfilingBackend(Backend& inner)
      : inner_(inner), peaks_(inner.measure_peaks()), start_(std::chrono::steady_clock::now()) {
    inner_.reset_timers();
  }

  Profile collect() {
    inner_.synchronize();
    flush();
    Profile profile;
    profile.device = inner_.name();
    profile.peaks = peaks_;
    profile.ops = rows_;
    std::sort(profile.ops.begin(), profile.ops.end(),
              [](const OpProfile& a, const OpProfile& b) { return a.seconds > b.seconds; });
    for (const OpProfile& row : profile.ops) profile.op_seconds += row.seconds;
    profile.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return profile;
  }

  Device device() const override { return inner_.device(); }
  std::string name() const override { return inner_.name(); }
  CachingAllocator& allocator() override { return inner_.allocator(); }
  void copy_from_host(void* dst, const void* src, size_t bytes) override {
    timed("copy host->device", si(static_cast<double>(bytes), "B"),
          {0.0, static_cast<double>(bytes)}, [&] { inner_.copy_from_host(dst, src, bytes); });
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    timed("copy device->host", si(static_cast<double>(bytes), "B"),
          {0.0, static_cast<double>(bytes)}, [&] { inner_.copy_to_host(dst, src, bytes); });
  }
  void copy_within(void* dst, const void* src, size_t bytes) override {
    timed("copy device->device", si(static_cast<double>(bytes), "B"),
          {0.0, 2.0 * static_cast<double>(bytes)}, [&] { inner_.copy_within(dst, src, bytes); });
  }
  void synchronize() override { inner_.synchronize(); }
  void* allocate_pinned(size_t bytes) override { return inner_.allocate_pinned(bytes); }
  void free_pinned(void* pointer) override { inner_.free_pinned(pointer); }
  void copy_from_pinned_async(void* dst, const void* src, size_t bytes) override {
    timed("copy host->device (pinned, async)", si(static_cast<double>(bytes), "B"),
          {0.0, static_cast<double>(bytes)},
          [&] { inner_.copy_from_pinned_async(dst, src, bytes); });
  }
  uint64_t record_fence() override { return inner_.record_fence(); }
  void fence_wait(uint64_t fence) override { inner_.fence_wait(fence); }
  bool fence_reached(uint64_t fence) override { return inner_.fence_reached(fence); }
  // The wrapper's own timers are the inner backend's: nobody else may use them meanwhile.
  uint64_t record_timer() override { throw Error("a profiled backend's timers are in use"); }
  double timer_seconds(uint64_t, uint64_t) override {
    throw Error("a profiled backend's timers are in use");
  }
  void reset_timers() override {}
  MeasuredPeaks measure_peaks() override { return peaks_; }
  void set_tf32(bool enabled) override { inner_.set_tf32(enabled); }
  void set_vendor_libraries(bool enabled) override { inner_.set_vendor_libraries(enabled); }
  // No graphs: a replay would run the kernels without these wrappers seeing them.
  std::unique_ptr<StepGraph> capture(const std::function<void()>& step) override {
    (void)step;
    return nullptr;
  }

  void fill(Tensor& y, float value) override {
    timed("fill", dims(y), {0.0, tensor_bytes({&y})}, [&] { inner_.fill(y, value); });
  }
  void matmul(const Tensor& a, bool ta, const Tensor& b, bool tb, Tensor& c, float alpha,
              float beta) override {
    const int64_t m = c.dim(0), n = c.dim(1), k = ta ? a.dim(0) : a.dim(1);
    const std::string shape = dims(a) + (ta ? "^T" : "") + " @ " + dims(b) + (tb ? "^T" : "");
    timed("matmul", shape, matmul_cost(m, n, k),
          [&] { inner_.matmul(a, ta, b, tb, c, alpha, beta); });
  }
  void bias_activation_forward(Activation act, const Tensor& x, const Tensor& bias,
                               Tensor& y) override {
    timed("bias_activation_forward", dims(x), mixed_cost(y, 2.0, {&x, &bias, &y}),
          [&] { inner_.bias_activation_forward(act, x, bias, y); });
  }
  void bias_activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx,
                                Tensor& dbias) override {
    timed("bias_activation_backward", dims(y), mixed_cost(y, 2.0, {&y, &dy, &dx, &dbias}),
          [&] { inner_.bias_activation_backward(act, y, dy, dx, dbias); });
  }
  void sum_rows(const Tensor& dy, Tensor& db) override {
    timed("sum_rows", dims(dy), mixed_cost(dy, 1.0, {&dy, &db}), [&] { inner_.sum_rows(dy, db); });
  }
  void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) override {
    timed("binary", dims(y), elementwise_cost(y.numel(), 1.0, 3),
          [&] { inner_.binary(op, a, b, y); });
  }
  void axpby(float alpha, const Tensor& x, float beta, Tensor& y) override {
    timed("axpby", dims(y), elementwise_cost(y.numel(), 3.0, 3),
          [&] { inner_.axpby(alpha, x, beta, y); });
  }
  void activation_forward(Activation act, const Tensor& x, Tensor& y) override {
    timed("activation_forward", dims(x), elementwise_cost(y.numel(), 1.0, 2),
          [&] { inner_.activation_forward(act, x, y); });
  }
  void activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx) override {
    timed("activation_backward", dims(y), elementwise_cost(y.numel(), 2.0, 3),
          [&] { inner_.activation_backward(act, y, dy, dx); });
  }
  void softmax_forward(const Tensor& x, Tensor& y, bool log) override {
    timed("softmax_forward", dims(x), elementwise_cost(y.numel(), 4.0, 2),
          [&] { inner_.softmax_forward(x, y, log); });
  }
  void softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log) override {
    timed("softmax_backward", dims(y), elementwise_cost(y.numel(), 3.0, 3),
          [&] { inner_.softmax_backward(y, dy, dx, log); });
  }
  void softmax_cross_entropy_forward(const Tensor& logits, const Tensor& labels, Tensor& probs,
                                     Tensor& loss) override {
    timed("softmax_cross_entropy_forward", dims(logits),
          mixed_cost(logits, 4.0, {&logits, &labels, &probs, &loss}),
          [&] { inner_.softmax_cross_entropy_forward(logits, labels, probs, loss); });
  }
  void softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels,
                                      const Tensor& dloss, Tensor& dlogits) override {
    timed("softmax_cross_entropy_backward", dims(probs),
          mixed_cost(probs, 2.0, {&probs, &labels, &dloss, &dlogits}),
          [&] { inner_.softmax_cross_entropy_backward(probs, labels, dloss, dlogits); });
  }
  void binary_cross_entropy_forward(const Tensor& p, const Tensor& target, Tensor& loss) override {
    timed("binary_cross_entropy_forward", dims(p), elementwise_cost(p.numel(), 8.0, 3),
          [&] { inner_.binary_cross_entropy_forward(p, target, loss); });
  }
  void binary_cross_entropy_backward(const Tensor& p, const Tensor& target, const Tensor& dloss,
                                     Tensor& dp) override {
    timed("binary_cross_entropy_backward", dims(p), elementwise_cost(p.numel(), 8.0, 4),
          [&] { inner_.binary_cross_entropy_backward(p, target, dloss, dp); });
  }
  void sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& target,
                                     Tensor& loss) override {
    timed("sigmoid_cross_entropy_forward", dims(logits), elementwise_cost(logits.numel(), 6.0, 3),
          [&] { inner_.sigmoid_cross_entropy_forward(logits, target, loss); });
  }
  void sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& target,
                                      const Tensor& dloss, Tensor& dlogits) override {
    timed("sigmoid_cross_entropy_backward", dims(logits), elementwise_cost(logits.numel(), 5.0, 4),
          [&] { inner_.sigmoid_cross_entropy_backward(logits, target, dloss, dlogits); });
  }
  void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed,
                       const Tensor& step) override {
    timed("dropout_forward", dims(x), elementwise_cost(x.numel(), 2.0, 2),
          [&] { inner_.dropout_forward(x, y, rate, seed, step); });
  }
  void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed,
                        const Tensor& step) override {
    timed("dropout_backward", dims(dy), elementwise_cost(dy.numel(), 2.0, 2),
          [&] { inner_.dropout_backward(dy, dx, rate, seed, step); });
  }
  void random_normal(Tensor& y, float mean, float stddev, uint64_t seed) override {
    timed("random_normal", dims(y), elementwise_cost(y.numel(), 20.0, 1),
          [&] { inner_.random_normal(y, mean, stddev, seed); });
  }
  void sum(const Tensor& x, Tensor& y, float scale) override {
    timed("sum", dims(x), mixed_cost(x, 1.0, {&x}), [&] { inner_.sum(x, y, scale); });
  }
  void broadcast_scalar(const Tensor& s, float scale, Tensor& y) override {
    timed("broadcast_scalar", dims(y), mixed_cost(y, 1.0, {&y}),
          [&] { inner_.broadcast_scalar(s, scale, y); });
  }
  void gather_rows(const Tensor& x, const Tensor& index, Tensor& y) override {
    timed("gather_rows", dims(y), {0.0, 2.0 * tensor_bytes({&y}) + tensor_bytes({&index})},
          [&] { inner_.gather_rows(x, index, y); });
  }
  void augment_images(const Tensor& images, const Tensor& transforms, Tensor& out,
                      float scale) override {
    // Per output value: two 3-term affine coordinates and a scale: ~10 FLOPs.
    timed("augment_images", dims(out),
          {10.0 * static_cast<double>(out.numel()), tensor_bytes({&images, &transforms, &out})},
          [&] { inner_.augment_images(images, transforms, out, scale); });
  }
  void count_correct(const Tensor& logits, const Tensor& labels, Tensor& count) override {
    timed("count_correct", dims(logits), mixed_cost(logits, 1.0, {&logits}),
          [&] { inner_.count_correct(logits, labels, count); });
  }
  void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr,
                  float momentum) override {
    timed("sgd_update", dims(param), elementwise_cost(param.numel(), 4.0, 5),
          [&] { inner_.sgd_update(param, grad, velocity, lr, momentum); });
  }
  void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v,
                   const AdamConfig& config, const Tensor& step) override {
    // Read p, g, m, v; write p, m, v: 7 arrays; ~12 FLOPs with a square root.
    timed("adam_update", dims(param), elementwise_cost(param.numel(), 12.0, 7),
          [&] { inner_.adam_update(param, grad, m, v, config, step); });
  }
  void increment(Tensor& counter) override {
    timed("increment", "scalar", {1.0, 8.0}, [&] { inner_.increment(counter); });
  }
  void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                      Tensor& y) override {
    timed("conv2d_forward", conv_shape(g), conv2d_cost(g),
          [&] { inner_.conv2d_forward(g, x, w, y); });
  }
  void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                            Tensor& dx) override {
    timed("conv2d_backward_data", conv_shape(g), conv2d_cost(g),
          [&] { inner_.conv2d_backward_data(g, dy, w, dx); });
  }
  void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                              Tensor& dw) override {
    timed("conv2d_backward_filter", conv_shape(g), conv2d_cost(g),
          [&] { inner_.conv2d_backward_filter(g, x, dy, dw); });
  }
  void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y) override {
    timed(
        "max_pool2d_forward", dims(x),
        {static_cast<double>(numel(g.y_shape()) * g.kernel_h * g.kernel_w), tensor_bytes({&x, &y})},
        [&] { inner_.max_pool2d_forward(g, x, y); });
  }
  void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                           const Tensor& dy, Tensor& dx) override {
    timed("max_pool2d_backward", dims(x),
          {static_cast<double>(numel(g.y_shape()) * g.kernel_h * g.kernel_w),
           tensor_bytes({&x, &y, &dy, &dx})},
          [&] { inner_.max_pool2d_backward(g, x, y, dy, dx); });
  }
  void rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square, float lr, float rho,
                      float epsilon) override {
    timed("rmsprop_update", dims(param), elementwise_cost(param.numel(), 8.0, 5),
          [&] { inner_.rmsprop_update(param, grad, mean_square, lr, rho, epsilon); });
  }
  void adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                       Tensor& mean_square_delta, float lr, float rho, float epsilon) override {
    timed("adadelta_update", dims(param), elementwise_cost(param.numel(), 14.0, 7), [&] {
      inner_.adadelta_update(param, grad, mean_square, mean_square_delta, lr, rho, epsilon);
    });
  }
  void elementwise_jvp(Activation act, const Tensor& y, const Tensor& t, Tensor& out) override {
    timed("elementwise_jvp", dims(t), elementwise_cost(t.numel(), 2.0, 3),
          [&] { inner_.elementwise_jvp(act, y, t, out); });
  }
  void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                    const Walk3d& from, const Walk3d& to) override {
    const double moved = 2.0 * 4.0 * static_cast<double>(extent[0] * extent[1] * extent[2]);
    timed("strided_copy", dims(y), {0.0, moved},
          [&] { inner_.strided_copy(x, y, extent, from, to); });
  }

 private:
  struct Pending {
    size_t row;
    uint64_t start, end;
  };

  // Ops whose tensors differ in size (a bias, a row of labels): FLOPs per element of
  // `shape_of`, bytes of the listed tensors. Ops over equal-sized arrays use elementwise_cost.
  static OpCost mixed_cost(const Tensor& shape_of, double flops_per_element,
                           std::initializer_list<const Tensor*> tensors) {
    return {flops_per_element * static_cast<double>(shape_of.numel()), tensor_bytes(tensors)};
  }
  static std::string conv_shape(const Conv2dGeometry& g) {
    return std::to_string(g.batch) + "x" + std::to_string(g.in_h) + "x" + std::to_string(g.in_w) +
           "x" + std::to_string(g.in_c) + " * " + std::to_string(g.kernel_h) + "x" +
           std::to_string(g.kernel_w) + "x" + std::to_string(g.out_c);
  }

  template <typename Call>
  void timed(const char* op, const std::string& shape, const OpCost& cost, Call&& call) {
    const std::string key = std::string(op) + '\0' + shape;
    auto found = index_.find(key);
    if (found == index_.end()) {
      found = index_.emplace(key, rows_.size()).first;
      rows_.push_back({op, shape, 0, 0.0, cost});
    }
    const uint64_t start = inner_.record_timer();
    call();
    pending_.push_back({found->second, start, inner_.record_timer()});
    if (pending_.size() >= MAX_PENDING) flush();
  }

  // Reads every pending pair of timers (waiting for the device) and frees them for reuse.
  void flush() {
    for (const Pending& p : pending_) {
      rows_[p.row].seconds += inner_.timer_seconds(p.start, p.end);
      rows_[p.row].calls += 1;
    }
    pending_.clear();
    inner_.reset_timers();
  }

  Backend& inner_;
  MeasuredPeaks peaks_;
  std::chrono::steady_clock::time_point start_;
  std::map<std::string, size_t> index_;
  std::vector<OpProfile> rows_;
  std::vector<Pending> pending_;
};

// One slot per device: the CPU, then CUDA devices 0..15. Written once at start-up, before any
// other thread exists; read on every backend_for.
constexpr size_t MAX_DEVICES = 17;
std::array<std::unique_ptr<ProfilingBackend>, MAX_DEVICES> g_profiled;

size_t slot_of(Device device) {
  const size_t slot = device.is_cpu() ? 0 : static_cast<size_t>(device.index) + 1;
  ENGINE_CHECK(slot < MAX_DEVICES, "device ", to_string(device), " is beyond the profiler's table");
  return slot;
}

std::string si(double value, const char* unit) {
  char text[32];
  if (value >= 1e12)
    std::snprintf(text, sizeof text, "%.2f T%s", value / 1e12, unit);
  else if (value >= 1e9)
    std::snprintf(text, sizeof text, "%.2f G%s", value / 1e9, unit);
  else if (value >= 1e6)
    std::snprintf(text, sizeof text, "%.2f M%s", value / 1e6, unit);
  else if (value >= 1e3)
    std::snprintf(text, sizeof text, "%.2f k%s", value / 1e3, unit);
  else
    std::snprintf(text, sizeof text, "%.0f %s", value, unit);
  return text;
}

}  // namespace

void enable_profiling(Device device) {
  const size_t slot = slot_of(device);
  if (g_profiled[slot]) return;
  Backend& plain = backend_for(device);
  g_profiled[slot] = std::make_unique<ProfilingBackend>(plain);
}

bool profiling_enabled(Device device) { return profiling_backend(device) != nullptr; }

Backend* profiling_backend(Device device) {
  const size_t slot = device.is_cpu() ? 0 : static_cast<size_t>(device.index) + 1;
  return slot < MAX_DEVICES ? g_profiled[slot].get() : nullptr;
}

std::vector<Device> profiled_devices() {
  std::vector<Device> devices;
  for (size_t slot = 0; slot < MAX_DEVICES; ++slot) {
    if (g_profiled[slot]) devices.push_back(g_profiled[slot]->device());
  }
  return devices;
}

Profile collect_profile(Device device) {
  const size_t slot = slot_of(device);
  ENGINE_CHECK(g_profiled[slot] != nullptr, "no profile: profiling was not enabled on ",
               to_string(device));
  return g_profiled[slot]->collect();
}

std::string verdict(const OpProfile& row, const MeasuredPeaks& peaks) {
  if (row.calls == 0) return "-";
  const double per_call = row.seconds / static_cast<double>(row.calls);
  if (per_call < 3.0 * peaks.launch_seconds) return "launch-bound";
  const double ridge = peaks.flops_per_s / peaks.bytes_per_s;  // FLOPs per byte
  const double intensity = row.cost.bytes > 0 ? row.cost.flops / row.cost.bytes : 1e30;
  return intensity > ridge ? "compute-bound" : "memory-bound";
}

void print_profile(std::ostream& out, const Profile& p, size_t rows) {
  char line[512];
  out << "\nProfile (--profile) on " << p.device << ": device time per op, from timers around "
      << "each call\n";
  std::snprintf(line, sizeof line,
                "Measured peaks: %s FP32, %s copy bandwidth, %.1f us launch floor; ridge point "
                "%.1f FLOP/byte\n",
                si(p.peaks.flops_per_s, "FLOP/s").c_str(), si(p.peaks.bytes_per_s, "B/s").c_str(),
                p.peaks.launch_seconds * 1e6, p.peaks.flops_per_s / p.peaks.bytes_per_s);
  out << line;
  std::snprintf(line, sizeof line, "%-31s %-34s %8s %9s %6s %10s %10s %9s %9s %6s  %s\n", "op",
                "shape", "calls", "total s", "%", "FLOP/call", "bytes/call", "GFLOP/s", "GB/s",
                "%peak", "verdict");
  out << line;
  double rest_seconds = 0.0;
  int64_t rest_calls = 0;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const OpProfile& r = p.ops[i];
    if (i >= rows) {
      rest_seconds += r.seconds;
      rest_calls += r.calls;
      continue;
    }
    const double per_call = r.calls ? r.seconds / static_cast<double>(r.calls) : 0.0;
    const double flops_rate = per_call > 0 ? r.cost.flops / per_call : 0.0;
    const double bytes_rate = per_call > 0 ? r.cost.bytes / per_call : 0.0;
    const std::string v = verdict(r, p.peaks);
    const double peak_share =
        v == "compute-bound" ? flops_rate / p.peaks.flops_per_s : bytes_rate / p.peaks.bytes_per_s;
    std::snprintf(line, sizeof line,
                  "%-31.31s %-34.34s %8lld %9.4f %5.1f%% %10s %10s %9.1f %9.1f %5.1f%%  %s\n",
                  r.op.c_str(), r.shape.c_str(), static_cast<long long>(r.calls), r.seconds,
                  p.op_seconds > 0 ? 100.0 * r.seconds / p.op_seconds : 0.0,
                  si(r.cost.flops, "").c_str(), si(r.cost.bytes, "B").c_str(), flops_rate / 1e9,
                  bytes_rate / 1e9, 100.0 * peak_share, v.c_str());
    out << line;
  }
  if (rest_calls > 0) {
    std::snprintf(line, sizeof line, "%-31s %-34s %8lld %9.4f %5.1f%%\n", "(the other ops)", "",
                  static_cast<long long>(rest_calls), rest_seconds,
                  p.op_seconds > 0 ? 100.0 * rest_seconds / p.op_seconds : 0.0);
    out << line;
  }
  std::snprintf(line, sizeof line,
                "Ops took %.3f s of device time in %.3f s of wall time since profiling began "
                "(%.0f%%); the rest is the host: launches, data, printing, waiting.\n",
                p.op_seconds, p.wall_seconds,
                p.wall_seconds > 0 ? 100.0 * p.op_seconds / p.wall_seconds : 0.0);
  out << line;
  out << "Verdicts: launch-bound = under 3x the launch floor per call; compute-bound = more "
         "FLOPs per byte than the ridge point (%peak of FLOP/s); memory-bound = fewer (%peak "
         "of bandwidth). A profiled GPU run launches op by op (no CUDA graph).\n";
}

}  // namespace engine
