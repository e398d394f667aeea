// The CPU backend: OpenBLAS sgemm for matmul, OpenMP loops for everything else.
// Each op family lives in a file of its own (core/backend.h lists which); this header only
// declares the class.
#pragma once
#include <chrono>
#include <vector>

#include "core/backend.h"

namespace engine::cpu {

// Elements of an elementwise loop below which it runs on one thread: waking threads costs
// microseconds, more than a small loop takes (batch 32 x 128 = 4,096 elements is about a
// microsecond of work).
constexpr int64_t PARALLEL_GRAIN = 32768;

int num_threads();

// The team for a loop of `work` units: one thread below `grain`, otherwise all --threads.
// All or nothing, never a team sized to the work: libgomp keeps one pool, and a region that
// asks for a different number of threads than the last one re-docks the pool, putting
// threads to sleep and waking them again through the kernel: teams sized to the work made the
// seed-000 step much slower (measured: docs/results/mnist_mlp.md, "The CPU backend's thread
// team").
// Loops write `if (parallel : team > 1)`: a plain `if` on `parallel for simd` also switches
// off the simd part when false (OpenMP 5), which made Adam's loop scalar and 2x slower.
inline int team_size(int64_t work, int64_t grain) { return work < grain ? 1 : num_threads(); }

class CpuBackend final : public Backend {
 public:
  CpuBackend();
  Device device() const override { return Device::cpu(); }
  std::string name() const override;

  CachingAllocator& allocator() override { return allocator_; }
  void copy_from_host(void* dst, const void* src, size_t bytes) override;
  void copy_to_host(void* dst, const void* src, size_t bytes) override;
  void copy_within(void* dst, const void* src, size_t bytes) override;
  void synchronize() override {}
  // Plain memory and a copy done at once: the CPU computes where the data already is.
  void* allocate_pinned(size_t bytes) override;
  void free_pinned(void* pointer) override;
  DeviceMemory memory_info() override;  // the host's memory
  void copy_from_pinned_async(void* dst, const void* src, size_t bytes) override;
  uint64_t record_fence() override { return 0; }
  void fence_wait(uint64_t fence) override { (void)fence; }
  bool fence_reached(uint64_t fence) override { return (void)fence, true; }
  uint64_t record_timer() override;
  double timer_seconds(uint64_t start, uint64_t end) override;
  void reset_timers() override { timers_.clear(); }
  MeasuredPeaks measure_peaks() override;

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
                      float scale) override;  // cpu/augment.cpp
  void count_correct(const Tensor& logits, const Tensor& labels, Tensor& count) override;
  void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr,
                  float momentum) override;
  void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v,
                   const AdamConfig& config, const Tensor& step) override;
  void increment(Tensor& counter) override;
  void rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square, float lr, float rho,
                      float epsilon) override;
  void adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                       Tensor& mean_square_delta, float lr, float rho, float epsilon) override;
  void conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w, Tensor& y) override;
  void conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy, const Tensor& w,
                            Tensor& dx) override;
  void conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x, const Tensor& dy,
                              Tensor& dw) override;
  void max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y) override;
  void max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x, const Tensor& y,
                           const Tensor& dy, Tensor& dx) override;
  void elementwise_jvp(Activation act, const Tensor& y, const Tensor& t, Tensor& out) override;
  void strided_copy(const Tensor& x, Tensor& y, const std::array<int64_t, 3>& extent,
                    const Walk3d& from, const Walk3d& to) override;

 private:
  CachingAllocator allocator_;
  std::vector<std::chrono::steady_clock::time_point> timers_;
};

// The process-wide CPU backend.
CpuBackend& backend();

// --threads N: the OpenMP team size, which also splits every sgemm (cpu/matmul.cpp).
void set_num_threads(int threads);
// c = alpha op(a) op(b) + beta c on the calling thread (row-major, leading dimensions in
// elements): the building block of ops that split their work over the team themselves
// (matmul, conv2d).
void sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
           int64_t ldc);
// OpenBLAS' own description of its build, e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ... OpenMP".
std::string blas_config();

}  // namespace engine::cpu
