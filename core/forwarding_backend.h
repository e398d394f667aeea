// A Backend that hands every call on to another one: the base of the wrappers that watch the
// ops go by. --profile (core/profiler.cpp) times each op; --sync-check (core/sync_check.h)
// synchronises after each one and names the op a device fault happened in.
//
// Every op and every copy reaches the inner backend through around_op(), which a wrapper
// overrides, with the op's name, its operands' sizes and its cost (core/op_cost.h), worked out
// once here for every op of core/backend.h. Memory, fences, timers and settings pass straight
// through. A wrapper records no CUDA graphs (capture returns nullptr, so fit launches op by
// op): a replay runs the kernels without calling the ops, and the wrapper would not see them.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/backend.h"
#include "core/op_cost.h"

namespace engine {

// One op call, as a wrapper sees it.
struct OpCall {
  const char* op;     // "matmul"
  std::string shape;  // its operands' sizes: "32x784 @ 784x128"
  OpCost cost;        // its FLOPs and bytes, from the shapes
};

// The inner backend's call, for around_op to run once: a reference to a callable, without
// std::function's allocation.
class OpRun {
 public:
  template <typename Call>
  explicit OpRun(Call& call)
      : call_(&call), run_([](void* c) { (*static_cast<Call*>(c))(); }) {}
  void operator()() const { run_(call_); }

 private:
  void* call_;
  void (*run_)(void*);
};

class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(Backend& inner) : inner_(inner) {}
  Backend& inner() const { return inner_; }

  // ---- passed straight through -------------------------------------------------------------
  Device device() const override { return inner_.device(); }
  std::string name() const override { return inner_.name(); }
  CachingAllocator& allocator() override { return inner_.allocator(); }
  void synchronize() override { inner_.synchronize(); }
  DeviceMemory memory_info() override { return inner_.memory_info(); }
  void* allocate_pinned(size_t bytes) override { return inner_.allocate_pinned(bytes); }
  void free_pinned(void* pointer) override { inner_.free_pinned(pointer); }
  uint64_t record_fence() override { return inner_.record_fence(); }
  void fence_wait(uint64_t fence) override { inner_.fence_wait(fence); }
  bool fence_reached(uint64_t fence) override { return inner_.fence_reached(fence); }
  uint64_t record_timer() override { return inner_.record_timer(); }
  double timer_seconds(uint64_t start, uint64_t end) override {
    return inner_.timer_seconds(start, end);
  }
  void reset_timers() override { inner_.reset_timers(); }
  MeasuredPeaks measure_peaks() override { return inner_.measure_peaks(); }
  void set_tf32(bool enabled) override { inner_.set_tf32(enabled); }
  std::vector<std::pair<std::string, std::string>> kernel_families() const override {
    return inner_.kernel_families();
  }
  void set_vendor_libraries(bool enabled) override { inner_.set_vendor_libraries(enabled); }
  std::unique_ptr<StepGraph> capture(const std::function<void()>& step) override {
    (void)step;
    return nullptr;
  }

  // ---- through around_op -----------------------------------------------------------------
  void copy_from_host(void* dst, const void* src, size_t bytes) override;
  void copy_to_host(void* dst, const void* src, size_t bytes) override;
  void copy_within(void* dst, const void* src, size_t bytes) override;
  void copy_from_pinned_async(void* dst, const void* src, size_t bytes) override;

  void fill(Tensor& y, float value) override;
  void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c,
              float alpha, float beta) override;
  void bias_activation_forward(Activation act, const Tensor& x, const Tensor& bias,
                               Tensor& y) override;
  void bias_activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx,
                                Tensor& dbias) override;
  void sum_rows(const Tensor& dy, Tensor& db) override;
  void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) override;
  void axpby(float alpha, const Tensor& x, float beta, Tensor& y) override;
  void activation_forward(Activation act, const Tensor& x, Tensor& y) override;
  void activation_backward(Activation act, const Tensor& y, const Tensor& dy, Tensor& dx) override;
  void softmax_forward(const Tensor& x, Tensor& y, bool log) override;
  void softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log) override;
  void softmax_cross_entropy_forward(const Tensor& logits, const Tensor& labels, Tensor& probs,
                                     Tensor& loss) override;
  void softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels,
                                      const Tensor& dloss, Tensor& dlogits) override;
  void binary_cross_entropy_forward(const Tensor& p, const Tensor& target, Tensor& loss) override;
  void binary_cross_entropy_backward(const Tensor& p, const Tensor& target, const Tensor& dloss,
                                     Tensor& dp) override;
  void sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& target,
                                     Tensor& loss) override;
  void sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& target,
                                      const Tensor& dloss, Tensor& dlogits) override;
  void dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed,
                       const Tensor& step) override;
  void dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed,
                        const Tensor& step) override;
  void random_normal(Tensor& y, float mean, float stddev, uint64_t seed) override;
  void sum(const Tensor& x, Tensor& y, float scale) override;
  void broadcast_scalar(const Tensor& s, float scale, Tensor& y) override;
  void gather_rows(const Tensor& x, const Tensor& index, Tensor& y) override;
  void augment_images(const Tensor& images, const Tensor& transforms, Tensor& out,
                      float scale) override;
  void count_correct(const Tensor& logits, const Tensor& labels, Tensor& count) override;
  void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr,
                  float momentum) override;
  void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v,
                   const AdamConfig& config, const Tensor& step) override;
  void increment(Tensor& counter) override;
  void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y) override;
  void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                            Tensor& dx) override;
  void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                              Tensor& dw) override;
  void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y) override;
  void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                           const Tensor& dy, Tensor& dx) override;
  void rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square, float lr, float rho,
                      float epsilon) override;
  void adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                       Tensor& mean_square_delta, float lr, float rho, float epsilon) override;
  void elementwise_jvp(Activation act, const Tensor& y, const Tensor& t, Tensor& out) override;
  void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                    const Walk3d& from, const Walk3d& to) override;

 protected:
  // Every op and copy comes here; `run` makes the inner backend's call, and a wrapper calls it
  // exactly once (or lets an exception out).
  virtual void around_op(const OpCall& call, const OpRun& run) = 0;

 private:
  template <typename Call>
  void forward(const char* op, std::string shape, const OpCost& cost, Call&& call);

  Backend& inner_;
};

}  // namespace engine
