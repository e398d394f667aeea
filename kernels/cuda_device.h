// A GPU's device services (core/device_services.h): memory from the caching allocator over
// cudaMalloc, host copies through a pinned staging buffer, fences and timers as CUDA events,
// whole-step graph capture, and the settings the ops read (TF32, --device cudnn). All work,
// every op's kernels included, is queued in order on one stream (kernels/launch.h: stream()).
//
// The ops are not here: each is a free function cuda::X of its family, declared in
// core/ops/<family>.h and defined in kernels/<family>.cu; the vendor-library variants
// (vendor::matmul, vendor::conv2d_*, vendor::max_pool2d_*) are in kernels/vendor/. An op finds
// the settings of its tensors' GPU with device_of(tensor) below.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/device_services.h"
#include "core/tensor.h"

struct CUevent_st;

namespace engine::cuda {

class CudaDevice final : public DeviceServices {
 public:
  explicit CudaDevice(int device_index);
  ~CudaDevice() override;
  Device device() const override { return Device::cuda(device_index_); }
  int index() const { return device_index_; }  // the CUDA device number
  // "NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs, 81079 MiB, driver 13.0)",
  // with " + cuBLAS ... + cuDNN ..." appended while the vendor libraries are on.
  std::string name() const override;

  // ---- memory ------------------------------------------------------------------------
  CachingAllocator& allocator() override { return allocator_; }
  void copy_from_host(void* dst, const void* src, size_t bytes) override;
  void copy_to_host(void* dst, const void* src, size_t bytes) override;
  void copy_within(void* dst, const void* src, size_t bytes) override;
  void synchronize() override;
  DeviceMemory memory_info() override;  // cudaMemGetInfo, plus the allocator's cached blocks

  // ---- input prefetch ------------------------------------------------------------------
  void* allocate_pinned(size_t bytes) override;
  void free_pinned(void* pointer) override;
  void copy_from_pinned_async(void* dst, const void* src, size_t bytes) override;
  uint64_t record_fence() override;
  void fence_wait(uint64_t fence) override;
  bool fence_reached(uint64_t fence) override;

  // ---- measurement ---------------------------------------------------------------------
  std::unique_ptr<DeviceTimers> make_timers() override;  // CUDA events on the stream
  MeasuredPeaks measure_peaks() override;

  // ---- settings --------------------------------------------------------------------------
  // TF32 only where the GPU has TF32 tensor cores (device_caps.h); elsewhere FP32, and
  // kernel_families() says so in the run header.
  void set_tf32(bool enabled) override;
  // --device cudnn (kernels/vendor/vendor_libraries.cu): throws DeviceError when this build or
  // this machine has no usable cuDNN. While on, the dispatch point (core/dispatch.h) runs
  // vendor::matmul, vendor::conv2d_* and vendor::max_pool2d_* instead of our kernels, and
  // name() lists the libraries.
  void set_vendor_libraries(bool enabled) override;
  bool vendor_libraries() const override { return vendor_; }
  std::vector<std::pair<std::string, std::string>> kernel_families() const override;
  // The L2 cache, SMs and shared memory a block, where the GPU has cooperative launches
  // (kernels/fused_mlp.cu).
  FusedMlpRoom fused_mlp_room() const override;

  // ---- whole-step replay ---------------------------------------------------------------
  // nullptr while an op hook watches this device (--profile, --sync-check).
  std::unique_ptr<StepGraph> capture(const std::function<void()>& step) override;

  // ---- what the ops read (kernels/*.cu, kernels/vendor/) -----------------------------------
  // Whether matmuls and convolutions run on TF32 tensor cores: set_tf32(true) on a GPU that
  // has them.
  bool tf32() const override { return tf32_; }
  // matmul's split-K tile counters (kernels/matmul/small_splitk.h): zeroed once when the
  // device is made, and left at zero by every call, so they cost nothing per call and survive
  // graph capture.
  unsigned* splitk_counters() const { return splitk_counters_; }

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
  // record_fence's events, reused in turn (kernels/cuda_device.cu says why that is safe).
  std::vector<CUevent_st*> fences_;  // cudaEvent_t, without including the CUDA headers here
  uint64_t fences_recorded_ = 0;
  unsigned* splitk_counters_ = nullptr;
};

// Whether CUDA device `index` can be used; `why_not` gets a one-line reason when not
// (no driver, a driver too old for this runtime, no device, no such index).
bool device_usable(int index, std::string* why_not);

// The services of device `index`, created on first use (device_services() in core/ calls it).
CudaDevice& device(int index);

// The GPU a tensor lives on, for an op to read its settings: the tensor's services are a
// CudaDevice whenever the tensor is on a GPU, which is the only way a call reaches kernels/.
inline CudaDevice& device_of(const Tensor& t) { return static_cast<CudaDevice&>(t.services()); }

}  // namespace engine::cuda
