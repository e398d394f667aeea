// A GPU's device services (kernels/cuda_device.h): memory, copies, fences, timers, graph
// recording, and device discovery. The ops are in kernels/<family>.cu.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/dispatch.h"
#include "core/ops/fused_mlp.h"
#include "kernels/cuda_device.h"
#include "kernels/device_caps.h"
#include "kernels/device_probe.h"
#include "kernels/launch.h"
#include "kernels/matmul/small_splitk.h"

namespace engine::cuda {
namespace {

// 256-byte alignment: what cudaMalloc itself guarantees, so 16-byte vector loads are safe
// from any tensor's start.
constexpr size_t ALIGNMENT = 256;
// Host copies are staged through this much pinned memory: pinned pages let the copy engine
// read host memory directly (pageable memory is copied twice, through a driver buffer).
constexpr size_t STAGING_BYTES = size_t{8} << 20;
// Fences in flight at once: a prefetch queue holds a handful of batches.
constexpr size_t FENCE_EVENTS = 32;

cudaStream_t g_stream = nullptr;

// A recorded step: the graph, its executable form and the memory pool it owns.
class CudaStepGraph final : public StepGraph {
 public:
  CudaStepGraph(cudaGraph_t graph, cudaGraphExec_t exec, int64_t kernels,
                std::shared_ptr<CachingAllocator::Pool> pool, CachingAllocator& allocator)
      : graph_(graph), exec_(exec), kernels_(kernels), pool_(std::move(pool)), allocator_(allocator) {}
  ~CudaStepGraph() override {
    // Destructors must not throw: a failure here can only be reported, not handled.
    cudaStreamSynchronize(g_stream);
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
    allocator_.release_private_pool(pool_);
  }
  void replay() override {
    CHECK_CUDA(cudaGraphLaunch(exec_, g_stream));
    // A fault inside the replay is laid at the graph: its kernels are not launched one by one.
    NOTE_LAUNCH_SITE("the replayed CUDA graph of a training step (--no-graph launches its "
                     "kernels one by one)");
  }
  int64_t kernel_count() const override { return kernels_; }

 private:
  cudaGraph_t graph_;
  cudaGraphExec_t exec_;
  int64_t kernels_;
  std::shared_ptr<CachingAllocator::Pool> pool_;
  CachingAllocator& allocator_;
};

int64_t count_kernel_nodes(cudaGraph_t graph) {
  size_t n = 0;
  CHECK_CUDA(cudaGraphGetNodes(graph, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  CHECK_CUDA(cudaGraphGetNodes(graph, nodes.data(), &n));
  int64_t kernels = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    CHECK_CUDA(cudaGraphNodeGetType(node, &type));
    kernels += type == cudaGraphNodeTypeKernel ? 1 : 0;
  }
  return kernels;
}

// One user's timers (DeviceServices::make_timers): events recorded on the stream, created as
// needed and reused after reset(), so a profile's steady state creates none. Blocking: a host
// thread waiting in seconds() sleeps instead of spinning.
class CudaTimers final : public DeviceTimers {
 public:
  CudaTimers() = default;
  CudaTimers(const CudaTimers&) = delete;
  CudaTimers& operator=(const CudaTimers&) = delete;
  ~CudaTimers() override {
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
  }

  uint64_t record() override {
    if (used_ == events_.size()) {
      cudaEvent_t event = nullptr;
      CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventBlockingSync));
      events_.push_back(event);
    }
    CHECK_CUDA(cudaEventRecord(events_[used_], g_stream));
    return used_++;
  }

  double seconds(uint64_t start, uint64_t end) override {
    ENGINE_CHECK(start < used_ && end < used_, "timer ", start, " or ", end,
                 " was not recorded since the last reset");
    CHECK_CUDA(cudaEventSynchronize(events_[end]));
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, events_[start], events_[end]));
    return static_cast<double>(ms) * 1e-3;
  }

  void reset() override { used_ = 0; }

 private:
  std::vector<cudaEvent_t> events_;
  size_t used_ = 0;  // events_[0, used_) hold this round's timestamps
};

}  // namespace

namespace {

// Errors that mean a kernel faulted: the context is lost, and every later call reports the
// same error ("sticky"), wherever it is made. Everything else is the failing call's own.
bool is_fault(cudaError_t status) {
  switch (status) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

std::string error_text(cudaError_t status) {
  return detail::concat(cudaGetErrorString(status), " (", cudaGetErrorName(status), ")");
}

// A fault, seen by `reported_by`: the last kernel launched before it is where to look.
[[noreturn]] void throw_fault(cudaError_t status, const std::string& reported_by) {
  const LaunchSite* last = last_launch();
  const std::string kernel = last ? describe(*last) : std::string();
  throw CudaError(
      detail::concat("GPU fault: ", error_text(status), ", reported by ", reported_by,
                     "; the last kernel launched before that: ",
                     last ? kernel : std::string("none recorded"),
                     " (kernels run asynchronously, so it may be an earlier one: rerun with "
                     "--sync-check to find the op exactly)"),
      error_text(status), kernel, true);
}

}  // namespace

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  const std::string where = detail::concat(call, " at ", short_path(file), ":", line);
  if (is_fault(status)) throw_fault(status, where);
  throw CudaError(detail::concat("CUDA error: ", call, " failed at ", short_path(file), ":", line,
                                 ": ", cudaGetErrorString(status)),
                  error_text(status), std::string(), false);
}

[[noreturn]] void throw_launch_error(cudaError_t status, const LaunchSite* site) {
  // A fault of a kernel queued earlier, found by this launch's check.
  if (is_fault(status)) throw_fault(status, "the check after " + describe(*site));
  throw CudaError(detail::concat("CUDA error: ", describe(*site), " failed to start: ",
                                 error_text(status)),
                  error_text(status), describe(*site), false);
}

cudaStream_t stream() { return g_stream; }

int multiprocessor_count() { return device_caps().gpu.multiprocessors; }

CudaDevice::CudaDevice(int device_index)
    : device_index_(device_index),
      allocator_("cuda:" + std::to_string(device_index), ALIGNMENT,
                 [](size_t bytes) -> void* {
                   void* ptr = nullptr;
                   const cudaError_t status = cudaMalloc(&ptr, bytes);
                   if (status == cudaErrorMemoryAllocation) {
                     (void)cudaGetLastError();  // clear it: the allocator reports the failure
                     return nullptr;
                   }
                   CHECK_CUDA(status);
                   return ptr;
                 },
                 [](void* ptr) { cudaFree(ptr); }) {
  CHECK_CUDA(cudaSetDevice(device_index));
  CHECK_CUDA(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaMallocHost(&staging_, STAGING_BYTES));
  fences_.resize(FENCE_EVENTS);
  for (cudaEvent_t& event : fences_) {
    // Blocking: a waiting host thread sleeps instead of spinning on a core that the input
    // pipeline's workers need.
    CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventBlockingSync));
  }
  // On the device's stream, which does not wait for the legacy default stream's cudaMemset.
  const size_t counter_bytes = sizeof(unsigned) * gemm::SMALL_SPLITK_COUNTERS;
  CHECK_CUDA(cudaMalloc(&splitk_counters_, counter_bytes));
  CHECK_CUDA(cudaMemsetAsync(splitk_counters_, 0, counter_bytes, g_stream));
  int driver = 0;
  CHECK_CUDA(cudaDriverGetVersion(&driver));
  const DeviceCaps& caps = device_caps();
  const GpuDescription& gpu = caps.gpu;
  // How the kernels got here: machine code, or PTX the driver compiles at first use (a cost
  // of the first steps, cached by the driver in ~/.nv/ComputeCache for the next run).
  const std::string code = caps.code.path == CodePath::PtxJit
                               ? detail::concat("PTX ", caps.code.arch, ", JIT-compiled")
                               : caps.code.path == CodePath::Sass ? caps.code.arch
                                                                  : "built for " + caps.code.arch;
  const std::string cap = caps.chosen.capability() == gpu.capability()
                              ? std::string()
                              : detail::concat(", kernels chosen as for ", caps.chosen.major, ".",
                                               caps.chosen.minor, " (ENGINE_MAX_COMPUTE_CAPABILITY)");
  name_ = detail::concat(gpu.name, " (compute capability ", gpu.major, ".", gpu.minor, ", ",
                         code, ", ", gpu.multiprocessors, " SMs, ", gpu.memory_bytes >> 20,
                         " MiB, driver ", driver / 1000, ".", (driver % 1000) / 10, cap, ")");
}

// Below sm_80 there are no TF32 tensor cores: FP32, and the run header's kernel families say
// so (kernel_families keeps the request to report it).
void CudaDevice::set_tf32(bool enabled) {
  tf32_requested_ = enabled;
  tf32_ = enabled && device_caps().kernels.tf32_mma;
}

DeviceServices::FusedMlpRoom CudaDevice::fused_mlp_room() const {
  if (!fused_mlp_supported()) return {};
  int l2_bytes = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device_index_));
  return {l2_bytes, multiprocessor_count(), device_caps().gpu.shared_bytes_per_block};
}

std::vector<std::pair<std::string, std::string>> CudaDevice::kernel_families() const {
  if (vendor_) return {{"matmul", "cuBLAS"}, {"conv", "cuDNN"}, {"pool", "cuDNN"}};
  return engine::kernel_families(device_caps().kernels, tf32_requested_);
}

CudaDevice::~CudaDevice() {
  cudaStreamSynchronize(g_stream);
  allocator_.release_cached();
  cudaFree(splitk_counters_);
  cudaFreeHost(staging_);
  for (cudaEvent_t event : fences_) cudaEventDestroy(event);
}

std::string CudaDevice::name() const {
  return vendor_ ? name_ + " + " + vendor_libraries_ : name_;
}

void CudaDevice::copy_from_host(void* dst, const void* src, size_t bytes) {
  std::lock_guard<std::mutex> lock(staging_mutex_);
  for (size_t done = 0; done < bytes; done += STAGING_BYTES) {
    const size_t chunk = std::min(STAGING_BYTES, bytes - done);
    // The staging buffer is reused for the next chunk, so wait for this copy to finish.
    CHECK_CUDA(cudaStreamSynchronize(g_stream));
    std::memcpy(staging_, static_cast<const char*>(src) + done, chunk);
    CHECK_CUDA(cudaMemcpyAsync(static_cast<char*>(dst) + done, staging_, chunk,
                               cudaMemcpyHostToDevice, g_stream));
  }
  // Return with the copy complete: the caller may free or change `src` at once.
  CHECK_CUDA(cudaStreamSynchronize(g_stream));
}

void CudaDevice::copy_to_host(void* dst, const void* src, size_t bytes) {
  std::lock_guard<std::mutex> lock(staging_mutex_);
  for (size_t done = 0; done < bytes; done += STAGING_BYTES) {
    const size_t chunk = std::min(STAGING_BYTES, bytes - done);
    CHECK_CUDA(cudaMemcpyAsync(staging_, static_cast<const char*>(src) + done, chunk,
                               cudaMemcpyDeviceToHost, g_stream));
    CHECK_CUDA(cudaStreamSynchronize(g_stream));  // the host reads the result now
    std::memcpy(static_cast<char*>(dst) + done, staging_, chunk);
  }
}

void CudaDevice::copy_within(void* dst, const void* src, size_t bytes) {
  if (bytes) CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, g_stream));
}

void CudaDevice::synchronize() { CHECK_CUDA(cudaStreamSynchronize(g_stream)); }

DeviceMemory CudaDevice::memory_info() {
  size_t free = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free, &total));
  return {free + allocator_.stats().cached_bytes, total};
}

void* CudaDevice::allocate_pinned(size_t bytes) {
  void* pointer = nullptr;
  const cudaError_t status = cudaMallocHost(&pointer, bytes);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw DeviceError(detail::concat("out of page-locked host memory: ", bytes >> 20,
                                     " MiB asked for input buffers"));
  }
  CHECK_CUDA(status);
  return pointer;
}

void CudaDevice::free_pinned(void* pointer) { cudaFreeHost(pointer); }

void CudaDevice::copy_from_pinned_async(void* dst, const void* src, size_t bytes) {
  if (bytes) CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, g_stream));
}

// Fence n is event n % FENCE_EVENTS. Once the event has been recorded again for a later fence,
// waiting on it waits for that later point: longer than asked, never shorter, so reuse is safe.
uint64_t CudaDevice::record_fence() {
  const uint64_t fence = fences_recorded_++;
  CHECK_CUDA(cudaEventRecord(fences_[fence % FENCE_EVENTS], g_stream));
  return fence;
}

void CudaDevice::fence_wait(uint64_t fence) {
  CHECK_CUDA(cudaEventSynchronize(fences_[fence % FENCE_EVENTS]));
}

std::unique_ptr<DeviceTimers> CudaDevice::make_timers() { return std::make_unique<CudaTimers>(); }

MeasuredPeaks CudaDevice::measure_peaks() {
  const DevicePeaks peaks = measure_device_peaks(g_stream);
  return {peaks.fp32_flops, peaks.copy_bytes_per_s, peaks.launch_seconds,
          peaks.host_to_device_bytes_per_s, peaks.device_to_host_bytes_per_s};
}

bool CudaDevice::fence_reached(uint64_t fence) {
  const cudaError_t status = cudaEventQuery(fences_[fence % FENCE_EVENTS]);
  if (status == cudaErrorNotReady) return false;
  CHECK_CUDA(status);
  return true;
}

std::unique_ptr<StepGraph> CudaDevice::capture(const std::function<void()>& step) {
  // A replay launches the recorded kernels without calling the ops, so a hook (--profile,
  // --sync-check) would see nothing: the caller runs its steps op by op instead.
  if (has_op_hooks(device())) return nullptr;
  // Relaxed mode: the allocator may call cudaMalloc while the step is being recorded.
  std::shared_ptr<CachingAllocator::Pool> pool = allocator_.begin_private_pool();
  CHECK_CUDA(cudaStreamBeginCapture(g_stream, cudaStreamCaptureModeRelaxed));
  cudaGraph_t graph = nullptr;
  try {
    step();
  } catch (...) {
    cudaStreamEndCapture(g_stream, &graph);  // leave the stream usable
    if (graph) cudaGraphDestroy(graph);
    allocator_.end_private_pool();
    allocator_.release_private_pool(pool);
    throw;
  }
  const cudaError_t ended = cudaStreamEndCapture(g_stream, &graph);
  allocator_.end_private_pool();
  if (ended != cudaSuccess) allocator_.release_private_pool(pool);
  CHECK_CUDA(ended);
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  return std::make_unique<CudaStepGraph>(graph, exec, count_kernel_nodes(graph), std::move(pool),
                                         allocator_);
}

namespace {

// Asks the driver once: the answer cannot change while the process runs, and the device is
// looked up for every tensor the GPU allocates.
std::string probe_device(int index) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  std::string why;
  if (status == cudaErrorNoDevice || (status == cudaSuccess && count == 0)) {
    why = "no CUDA device found";
  } else if (status == cudaErrorInsufficientDriver) {
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);  // 0 when no driver is installed at all
    why = driver == 0 ? std::string("no NVIDIA driver is installed (no GPU on this machine?)")
                      : detail::concat("the NVIDIA driver (CUDA ", driver / 1000, ".",
                                       (driver % 1000) / 10, ") is older than this build's CUDA runtime ",
                                       runtime / 1000, ".", (runtime % 1000) / 10);
  } else if (status != cudaSuccess) {
    why = detail::concat("the CUDA driver cannot be used: ", cudaGetErrorString(status));
  } else if (index < 0 || index >= count) {
    why = detail::concat("there is no CUDA device ", index, " (", count, " found)");
  } else {
    // A GPU older than the engine supports, or one this build has no code for.
    try {
      why = launch_refusal(index);
    } catch (const CudaError& e) {
      why = e.what();
    }
  }
  (void)cudaGetLastError();  // a failed probe must not poison later calls
  return why;
}

}  // namespace

bool device_usable(int index, std::string* why_not) {
  static std::mutex mutex;
  static std::map<int, std::string> answers;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = answers.find(index);
  if (it == answers.end()) it = answers.emplace(index, probe_device(index)).first;
  if (it->second.empty()) return true;
  if (why_not) *why_not = it->second;
  return false;
}

CudaDevice& device(int index) {
  // One device, the first one asked for; never destroyed, since tensors in static storage may
  // outlive any other owner.
  static CudaDevice* instance = new CudaDevice(index);
  if (instance->device().index != index) {
    throw DeviceError(detail::concat("this build drives one GPU per process (cuda:",
                                     instance->device().index, "), not cuda:", index));
  }
  return *instance;
}

}  // namespace engine::cuda
