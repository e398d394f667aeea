// The GPU, described once, and the kernel choices made from it
// (core/gpu_architecture.h). Every hardware-dependent choice in kernels/ reads device_caps():
// wgmma/TMA vs mma.sync vs FP32 FMA, cp.async, the conv pipeline's stages, the SM count.
// Two environment variables change the choice, for tests and benchmarks:
// ENGINE_MAX_COMPUTE_CAPABILITY (choose as for an older GPU) and ENGINE_CONV_TF32_STAGES.
#pragma once
#include <string>

#include "core/gpu_architecture.h"

namespace engine::cuda {

struct DeviceCaps {
  GpuDescription gpu;     // as the driver reports it
  GpuDescription chosen;  // what the choice saw: gpu under ENGINE_MAX_COMPUTE_CAPABILITY's cap
  KernelChoice kernels;
  BuildMatch code;        // which of the build's code the GPU runs (SASS or PTX JIT)
};

// The current device, asked once (cudaGetDevice: CudaDevice has set it). Throws if no
// device can be asked.
const DeviceCaps& device_caps();

// Device `index` as the driver reports it: no cap, no choice.
GpuDescription describe_device(int index);

// The build's architecture list, as CMake was given it ("75-real 80-real ... 90-virtual").
const char* built_architectures();

// Empty when this build can launch kernels on device `index`; else the one-line refusal
// (core/gpu_architecture.h), also when the driver finds no code where the list promised some.
std::string launch_refusal(int index);

}  // namespace engine::cuda
