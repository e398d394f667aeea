// The CUDA backend: every op of core/backend.h as a hand-written kernel, all launched in order
// on one stream. With --device cudnn (set_vendor_libraries) matmul runs on cuBLAS and the
// convolutions and max pooling on cuDNN (kernels/vendor/); everything else stays on our
// kernels. Each op family lives in a file of its own (core/backend.h lists which); this header
// only declares the class. Memory comes from the caching allocator over cudaMalloc; host
// copies go through a pinned staging buffer.
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "core/backend.h"

struct CUevent_st;

namespace engine::cuda {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device_index);
  ~CudaBackend() override;
  Device device() const override { return Device::cuda(device_index_); }
  // "NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)"
  std::string name() const override;

  CachingAllocator& allocator() override { return allocator_; }
  void copy_from_host(void* dst, const void* src, size_t bytes) override;
  void copy_to_host(void* dst, const void* src, size_t bytes) override;
  void copy_within(void* dst, const void* src, size_t bytes) override;
  void synchronize() override;
  DeviceMemory memory_info() override;  // cudaMemGetInfo, plus the allocator's cached blocks
  void* allocate_pinned(size_t bytes) override;
  void free_pinned(void* pointer) override;
  void copy_from_pinned_async(void* dst, const void* src, size_t bytes) override;
  uint64_t record_fence() override;
  void fence_wait(uint64_t fence) override;
  bool fence_reached(uint64_t fence) override;
  uint64_t record_timer() override;
  double timer_seconds(uint64_t start, uint64_t end) override;
  void reset_timers() override { timers_used_ = 0; }
  MeasuredPeaks measure_peaks() override;
  // TF32 only where the GPU has TF32 tensor cores (device_caps.h); elsewhere FP32, and
  // kernel_families() says so in the run header.
  void set_tf32(bool enabled) override;
  std::vector<std::pair<std::string, std::string>> kernel_families() const override;
  // --device cudnn (kernels/vendor/vendor_libraries.cu): throws DeviceError when this build or
  // this machine has no usable cuDNN. While on, matmul, the convolutions and max pooling hand
  // their calls to kernels/vendor/ (each checks vendor() first), and name() lists the libraries.
  void set_vendor_libraries(bool enabled) override;
  bool vendor() const { return vendor_; }
  std::unique_ptr<StepGraph> capture(const std::function<void()>& step) override;

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
                      float scale) override;  // kernels/augment.cu
  void count_correct(const Tensor& logits, const Tensor& labels, Tensor& count) override;
  void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr,
                  float momentum) override;
  void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v,
                   const AdamConfig& config, const Tensor& step) override;
  void increment(Tensor& counter) override;
  // Convolutions (kernels/conv2d.cu: implicit GEMMs, kernels/conv/), max pooling
  // (kernels/pool.cu), RMSprop and Adadelta (kernels/optimizers.cu).
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

 private:
  int device_index_;
  std::string name_;
  bool tf32_ = false;            // TF32 in use
  bool tf32_requested_ = false;  // asked for (set_tf32), also where the GPU has none
  bool vendor_ = false;
  std::string vendor_libraries_;  // "cuBLAS 13.1.0 + cuDNN 9.14.0", once cuDNN was found usable
  CachingAllocator allocator_;
  std::mutex staging_mutex_;
  void* staging_ = nullptr;  // pinned host memory, STAGING_BYTES long
  // record_fence's events, reused in turn (kernels/cuda_backend.cu says why that is safe).
  std::vector<CUevent_st*> fences_;  // cudaEvent_t, without including the CUDA headers here
  uint64_t fences_recorded_ = 0;
  std::vector<CUevent_st*> timers_;  // record_timer's events, created as needed
  size_t timers_used_ = 0;
  // matmul's split-K tile counters (kernels/matmul/small_splitk.h): zeroed once here, and left
  // at zero by every call, so they cost nothing per call and survive graph capture.
  unsigned* splitk_counters_ = nullptr;
};

// Whether CUDA device `index` can be used; `why_not` gets a one-line reason when not
// (no driver, a driver too old for this runtime, no device, no such index).
bool device_usable(int index, std::string* why_not);

// The backend of device `index`, created on first use.
CudaBackend& backend(int index);

}  // namespace engine::cuda
