// Asks the driver about the GPU once and makes the engine's kernel choices from the answer
// (device_caps.h). ENGINE_CUDA_ARCHITECTURES and ENGINE_WITH_SM90A come from
// kernels/CMakeLists.txt.
#include <cstdlib>

#include "kernels/conv/implicit_gemm.h"
#include "kernels/cuda_check.h"
#include "kernels/device_caps.h"

#ifndef ENGINE_CUDA_ARCHITECTURES
#error "kernels/CMakeLists.txt defines ENGINE_CUDA_ARCHITECTURES for this file"
#endif

namespace engine::cuda {
namespace {

// The smallest kernel there is: whether the driver finds code for this GPU in the binary.
__global__ void probe_kernel() {}

}  // namespace

const char* built_architectures() { return ENGINE_CUDA_ARCHITECTURES; }

GpuDescription describe_device(int index) {
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, index));
  GpuDescription gpu;
  gpu.name = prop.name;
  gpu.major = prop.major;
  gpu.minor = prop.minor;
  gpu.multiprocessors = prop.multiProcessorCount;
  gpu.shared_bytes_per_block = static_cast<int64_t>(prop.sharedMemPerBlockOptin);
  gpu.shared_bytes_per_multiprocessor = static_cast<int64_t>(prop.sharedMemPerMultiprocessor);
  gpu.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  return gpu;
}

std::string launch_refusal(int index) {
  const GpuDescription gpu = describe_device(index);
  std::string why = refusal(gpu, built_architectures());
  if (!why.empty()) return why;
  // The list says there is code; the driver has the last word (it also loads the code, and
  // compiles PTX here, for this one small kernel only).
  int previous = 0;
  CHECK_CUDA(cudaGetDevice(&previous));
  CHECK_CUDA(cudaSetDevice(index));
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, probe_kernel);
  CHECK_CUDA(cudaSetDevice(previous));
  if (status == cudaErrorNoKernelImageForDevice || status == cudaErrorInvalidDeviceFunction) {
    (void)cudaGetLastError();
    return no_code_refusal(gpu, built_architectures());
  }
  CHECK_CUDA(status);
  return {};
}

const DeviceCaps& device_caps() {
  static const DeviceCaps caps = [] {
    int index = 0;
    CHECK_CUDA(cudaGetDevice(&index));
    DeviceCaps c;
    c.gpu = describe_device(index);
    c.chosen = capped(c.gpu, capability_cap(std::getenv("ENGINE_MAX_COMPUTE_CAPABILITY")));
    c.kernels = choose_kernels(c.chosen, ENGINE_WITH_SM90A != 0);
    // A knob to compare the pipelined TF32 conv kernel with the two-stage one end to end
    // (kernel_bench, the CNN apps); the run header then names the stages it asked for.
    c.kernels.conv_tf32_stages =
        conv::tf32_stages_setting(std::getenv("ENGINE_CONV_TF32_STAGES"), c.kernels.conv_tf32_stages);
    c.code = match_build(built_architectures(), c.gpu.major, c.gpu.minor);
    return c;
  }();
  return caps;
}

}  // namespace engine::cuda
