// What a GPU can run, as data. The CUDA device code describes its GPU once (kernels/device_caps.cu);
// everything that depends on the hardware is decided from that description here, in one place:
// whether this build has code the GPU can run, and which family of kernels each op family uses.
// Pure functions, so CI tests them without a GPU (tests/test_gpu_architecture.cpp).
//
//   compute capability  examples                       what the engine uses there
//   7.5 (Turing)         RTX 20, T4, GTX 16              FP32 FMA kernels; no TF32, no cp.async
//   8.0, 8.6, 8.9        A100, RTX 30, RTX 40, L4         + TF32 mma.sync, cp.async pipelines
//   9.0 (Hopper)         H100, H200                       + wgmma and TMA (sm_90a code)
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace engine {

struct GpuDescription {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  int64_t shared_bytes_per_block = 0;  // the opt-in maximum of one block
  int64_t shared_bytes_per_multiprocessor = 0;
  int64_t memory_bytes = 0;
  int capability() const { return major * 10 + minor; }  // 8.6 -> 86
};

// The oldest GPU the engine supports: Turing, the oldest generation the default build carries
// code for (cmake/EngineCudaArchitectures.cmake) and CUDA 13, which the project is tested with,
// still compiles for (it dropped Maxwell, Pascal and Volta). Nothing older is built or tested.
constexpr int OLDEST_CAPABILITY = 75;

// How a GPU of capability major.minor runs a build for `architectures` (CMake's list, entries
// separated by ';' or spaces: "86-real" machine code, "90-virtual" PTX, "90" both):
// machine code (SASS) for the same major and a minor no higher runs as it is; else PTX for a
// capability no higher is compiled by the driver at first use (JIT).
enum class CodePath { Sass, PtxJit, None, Unknown };  // Unknown: an entry such as "all"
struct BuildMatch {
  CodePath path = CodePath::None;
  std::string arch;  // the entry used: "sm_86" or "compute_80"
};
BuildMatch match_build(const std::string& architectures, int major, int minor);

// The one-line refusal for a GPU this engine or this build cannot run on: older than
// OLDEST_CAPABILITY, or no code for it in `architectures`. Empty when it can run.
std::string refusal(const GpuDescription& gpu, const std::string& architectures);
// The refusal's text for a GPU the build has no code for, also when the driver found that out
// (a launch failed with "no kernel image") where match_build expected otherwise.
std::string no_code_refusal(const GpuDescription& gpu, const std::string& architectures);

// The hardware-dependent choices, made once from the description.
struct KernelChoice {
  bool tf32_mma = false;     // mma.sync TF32 tensor cores: sm_80+
  bool cp_async = false;     // cp.async copies global -> shared: sm_80+
  bool wgmma_tma = false;    // wgmma + TMA + clusters: sm_90a code on exactly 9.0
  int conv_tf32_stages = 2;  // 2: registers stage the next tile; 3: a cp.async pipeline
};
// `sm90a_built`: whether this build has the Hopper-only kernels (kernels/CMakeLists.txt).
KernelChoice choose_kernels(const GpuDescription& gpu, bool sm90a_built);

// Op family -> the kernels it uses on this GPU, for the run header and --json.
std::vector<std::pair<std::string, std::string>> kernel_families(const KernelChoice& choice,
                                                                 bool tf32);

// ENGINE_MAX_COMPUTE_CAPABILITY: "8.0" (or "80") makes the choice as if the GPU had at most
// that capability, so one H100 runs every path (tests, benchmarks). Null or empty: no cap (0).
// Anything else is an engine::Error naming the variable.
int capability_cap(const char* text);
// The description the choice sees: major.minor lowered to `cap` when that is lower.
GpuDescription capped(GpuDescription gpu, int cap);

}  // namespace engine
