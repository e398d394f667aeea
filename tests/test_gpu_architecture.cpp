// core/gpu_architecture.h on made-up GPUs: which build runs where, the refusal a learner sees,
// and the kernel families each generation gets. Runs without a GPU (CI).
#include <doctest/doctest.h>

#include <string>

#include "core/error.h"
#include "core/gpu_architecture.h"

using namespace engine;

namespace {

const std::string FAT = "75-real 80-real 86-real 89-real 90-real 90-virtual";

GpuDescription gpu(const char* name, int major, int minor, int64_t shared_per_sm_kb) {
  GpuDescription g;
  g.name = name;
  g.major = major;
  g.minor = minor;
  g.multiprocessors = 40;
  g.shared_bytes_per_multiprocessor = shared_per_sm_kb << 10;
  g.shared_bytes_per_block = (shared_per_sm_kb - 1) << 10;
  g.memory_bytes = int64_t{8} << 30;
  return g;
}

std::string family(const KernelChoice& c, bool tf32, const std::string& name) {
  for (const auto& [op, kernels] : kernel_families(c, tf32))
    if (op == name) return kernels;
  return "(none)";
}

}  // namespace

TEST_CASE("match_build: machine code within a major version, PTX for anything newer") {
  struct Row {
    const char* architectures;
    int major, minor;
    CodePath path;
    const char* arch;
  };
  const Row rows[] = {
      {"75-real 80-real 86-real 89-real 90-real 90-virtual", 8, 6, CodePath::Sass, "sm_86"},
      {"75-real;80-real;86-real;89-real;90-real;90-virtual", 7, 5, CodePath::Sass, "sm_75"},
      {"80-real", 8, 6, CodePath::Sass, "sm_80"},     // sm_80 code runs on 8.6 and 8.9
      {"80-real", 9, 0, CodePath::None, ""},          // ... but not on Hopper
      {"86-real", 8, 0, CodePath::None, ""},          // nor on an older minor
      {"90", 8, 6, CodePath::None, ""},               // the old default, on an RTX 30
      {"80-virtual", 9, 0, CodePath::PtxJit, "compute_80"},
      {"75-real 90-virtual", 10, 0, CodePath::PtxJit, "compute_90"},  // a future GPU
      {"90-virtual", 8, 9, CodePath::None, ""},       // PTX runs on newer GPUs only
      {"all", 8, 6, CodePath::Unknown, "all"},
  };
  for (const Row& r : rows) {
    INFO(r.architectures, " on ", r.major, ".", r.minor);
    const BuildMatch m = match_build(r.architectures, r.major, r.minor);
    CHECK(m.path == r.path);
    if (r.path != CodePath::None) CHECK(m.arch == r.arch);
  }
}

TEST_CASE("refusal: one line naming the GPU, its capability, the build's code and the rebuild") {
  const GpuDescription rtx3060 = gpu("NVIDIA GeForce RTX 3060", 8, 6, 100);
  CHECK(refusal(rtx3060, FAT).empty());
  CHECK(refusal(rtx3060, "80-virtual").empty());
  const std::string why = refusal(rtx3060, "90-real");
  CHECK(why ==
        "NVIDIA GeForce RTX 3060 (compute capability 8.6) has no code in this build, which holds "
        "sm_90; rebuild for it: cmake -B build -DCMAKE_CUDA_ARCHITECTURES=86 && cmake --build build");
  CHECK(why.find('\n') == std::string::npos);
  CHECK(refusal(gpu("NVIDIA H100 80GB HBM3", 9, 0, 228), "80-real;86-real").find(
            "which holds sm_80 sm_86; rebuild for it: cmake -B build "
            "-DCMAKE_CUDA_ARCHITECTURES=90") != std::string::npos);
  CHECK(refusal(rtx3060, "90-virtual").find("which holds compute_90 (PTX);") != std::string::npos);
  const std::string old = refusal(gpu("NVIDIA GeForce GTX 1080", 6, 1, 96), FAT);
  CHECK(old.find("GTX 1080 (compute capability 6.1) is older than") != std::string::npos);
  CHECK(old.find("--cpu") != std::string::npos);
}

TEST_CASE("choose_kernels: each generation gets its own families") {
  const KernelChoice turing = choose_kernels(gpu("NVIDIA GeForce RTX 2060", 7, 5, 64), false);
  CHECK_FALSE(turing.tf32_mma);
  CHECK_FALSE(turing.cp_async);
  CHECK_FALSE(turing.wgmma_tma);
  CHECK(family(turing, true, "tf32").find("FP32 instead") != std::string::npos);
  CHECK(family(turing, true, "conv") == "FP32 FMA implicit GEMM");
  CHECK(family(turing, false, "matmul").find("no cp.async below sm_80") != std::string::npos);

  const KernelChoice a100 = choose_kernels(gpu("NVIDIA A100-SXM4-40GB", 8, 0, 164), true);
  CHECK(a100.tf32_mma);
  CHECK(a100.cp_async);
  CHECK_FALSE(a100.wgmma_tma);  // sm_90a code runs on 9.0 alone
  CHECK(a100.conv_tf32_stages == 3);
  CHECK(family(a100, true, "matmul").find("TF32 mma.sync") != std::string::npos);
  CHECK(family(a100, true, "tf32") == "(none)");

  // 100 KB per SM: one 3-stage conv block would fit, not the two its launch bounds promise.
  const KernelChoice rtx4090 = choose_kernels(gpu("NVIDIA GeForce RTX 4090", 8, 9, 100), true);
  CHECK(rtx4090.conv_tf32_stages == 2);
  CHECK(family(rtx4090, true, "conv").find("staged in registers") != std::string::npos);

  const GpuDescription h100 = gpu("NVIDIA H100 80GB HBM3", 9, 0, 228);
  CHECK(choose_kernels(h100, true).wgmma_tma);
  CHECK_FALSE(choose_kernels(h100, false).wgmma_tma);  // a build without sm_90a code
  CHECK(family(choose_kernels(h100, true), true, "matmul").find("wgmma + TMA") != std::string::npos);
  CHECK(family(choose_kernels(h100, true), false, "matmul").find("FP32") != std::string::npos);
  CHECK(family(choose_kernels(h100, true), true, "matmul").find("TF32 mma.sync from K = 2048 or 64 M multiply-adds") != std::string::npos);
  // The convolutions: TMA + wgmma for what the Hopper kernel takes, mma.sync for the rest; a
  // build without sm_90a code, or FP32, names neither.
  const std::string hopper_conv = family(choose_kernels(h100, true), true, "conv");
  CHECK(hopper_conv.find("wgmma + TMA") != std::string::npos);
  CHECK(hopper_conv.find("mma.sync") != std::string::npos);
  CHECK(hopper_conv.find("filter gradient") != std::string::npos);
  CHECK(family(choose_kernels(h100, false), true, "conv").find("wgmma") == std::string::npos);
  CHECK(family(choose_kernels(h100, true), false, "conv") == "FP32 FMA implicit GEMM");
}

TEST_CASE("ENGINE_MAX_COMPUTE_CAPABILITY caps the choice, never raises it") {
  CHECK(capability_cap(nullptr) == 0);
  CHECK(capability_cap("") == 0);
  CHECK(capability_cap("8.0") == 80);
  CHECK(capability_cap("75") == 75);
  for (const char* bad : {"7.0", "6.1", "eight", "8.", "800", " 80", "9.0a"}) {
    INFO(bad);
    CHECK_THROWS_WITH_AS(capability_cap(bad), doctest::Contains("ENGINE_MAX_COMPUTE_CAPABILITY"), Error);
  }
  const GpuDescription h100 = gpu("NVIDIA H100 80GB HBM3", 9, 0, 228);
  CHECK(capped(h100, 80).capability() == 80);
  CHECK(capped(h100, 0).capability() == 90);
  CHECK(capped(gpu("NVIDIA GeForce RTX 2060", 7, 5, 64), 80).capability() == 75);
  const KernelChoice as_sm80 = choose_kernels(capped(h100, 80), true);
  CHECK_FALSE(as_sm80.wgmma_tma);
  CHECK(as_sm80.tf32_mma);
  const KernelChoice as_sm75 = choose_kernels(capped(h100, 75), true);
  CHECK_FALSE(as_sm75.tf32_mma);
  CHECK_FALSE(as_sm75.cp_async);
}
