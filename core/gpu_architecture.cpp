#include "core/gpu_architecture.h"

#include <cctype>

#include "core/error.h"
#include "core/ops/matmul.h"  // GPU_MATMUL_SMALL_TF32_MIN_K, _MIN_FMA

namespace engine {
namespace {

// "86-real" -> {86, sass}, "90-virtual" -> {90, ptx}, "90" -> {90, both}; false for anything
// that is not a number with an optional suffix ("all", "native", "90a-real").
struct Entry {
  int capability = 0;
  bool sass = false, ptx = false;
};
bool parse_entry(const std::string& text, Entry& e) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits < 2 || digits > 3) return false;
  e.capability = std::stoi(text.substr(0, digits));
  const std::string suffix = text.substr(digits);
  e.sass = suffix.empty() || suffix == "-real";
  e.ptx = suffix.empty() || suffix == "-virtual";
  return e.sass || e.ptx;
}

std::vector<std::string> entries_of(const std::string& architectures) {
  std::vector<std::string> out;
  std::string current;
  for (const char c : architectures + ";") {
    if (c == ';' || c == ' ') {
      if (!current.empty()) out.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  return out;
}

std::string capability_text(int major, int minor) { return detail::concat(major, ".", minor); }

// What the build holds, for a reader: "sm_75 sm_80 compute_90".
std::string holdings(const std::string& architectures) {
  std::string out;
  for (const std::string& text : entries_of(architectures)) {
    Entry e;
    if (!parse_entry(text, e)) {
      out += (out.empty() ? "" : " ") + text;
      continue;
    }
    if (e.sass) out += detail::concat(out.empty() ? "" : " ", "sm_", e.capability);
    if (e.ptx) out += detail::concat(out.empty() ? "" : " ", "compute_", e.capability, " (PTX)");
  }
  return out.empty() ? std::string("nothing") : out;
}

// Three 23,040-byte stages of the TF32 conv pipeline's largest tiling (256 x 32 tiles:
// kernels/conv/implicit_gemm.cuh checks the figure), and what the driver keeps per block.
constexpr int64_t CONV_TF32_THREE_STAGES_BYTES = 3 * 23040;
constexpr int64_t RESERVED_SHARED_PER_BLOCK = 1024;

}  // namespace

BuildMatch match_build(const std::string& architectures, int major, int minor) {
  const int own = major * 10 + minor;
  // The newest of each kind that fits, as the driver picks: machine code first.
  int best_sass = -1, best_ptx = -1;
  std::string unknown;
  for (const std::string& text : entries_of(architectures)) {
    Entry e;
    if (!parse_entry(text, e)) {
      if (unknown.empty()) unknown = text;
      continue;
    }
    // Machine code runs within its major version, on the same or a later minor.
    if (e.sass && e.capability / 10 == major && e.capability <= own && e.capability > best_sass)
      best_sass = e.capability;
    if (e.ptx && e.capability <= own && e.capability > best_ptx) best_ptx = e.capability;
  }
  if (best_sass >= 0) return {CodePath::Sass, detail::concat("sm_", best_sass)};
  if (best_ptx >= 0) return {CodePath::PtxJit, detail::concat("compute_", best_ptx)};
  if (!unknown.empty()) return {CodePath::Unknown, unknown};
  return {};
}

std::string no_code_refusal(const GpuDescription& gpu, const std::string& architectures) {
  return detail::concat(gpu.name, " (compute capability ", capability_text(gpu.major, gpu.minor),
                        ") has no code in this build, which holds ", holdings(architectures),
                        "; rebuild for it: cmake -B build -DCMAKE_CUDA_ARCHITECTURES=",
                        gpu.capability(), " && cmake --build build");
}

std::string refusal(const GpuDescription& gpu, const std::string& architectures) {
  if (gpu.capability() < OLDEST_CAPABILITY) {
    return detail::concat(gpu.name, " (compute capability ", capability_text(gpu.major, gpu.minor),
                          ") is older than the oldest GPU this engine supports (compute "
                          "capability 7.5, Turing); run on the CPU with --cpu");
  }
  if (match_build(architectures, gpu.major, gpu.minor).path == CodePath::None) {
    return no_code_refusal(gpu, architectures);
  }
  return {};
}

KernelChoice choose_kernels(const GpuDescription& gpu, bool sm90a_built) {
  KernelChoice c;
  const int cc = gpu.capability();
  c.tf32_mma = cc >= 80;
  c.cp_async = cc >= 80;
  // sm_90a code is not forward compatible: it runs on 9.0 and nothing else.
  c.wgmma_tma = sm90a_built && cc == 90;
  // The conv kernels promise two blocks per SM (__launch_bounds__(256, 2)): the 3-stage
  // pipeline where two of its blocks fit the SM's shared memory (A100 164 KB, H100 228 KB);
  // on 100 KB SMs (RTX 30/40, L4) one would fit, so the two-stage kernel keeps two.
  const bool two_pipelined_blocks =
      2 * (CONV_TF32_THREE_STAGES_BYTES + RESERVED_SHARED_PER_BLOCK) <= gpu.shared_bytes_per_multiprocessor &&
      CONV_TF32_THREE_STAGES_BYTES <= gpu.shared_bytes_per_block;
  c.conv_tf32_stages = c.cp_async && two_pipelined_blocks ? 3 : 2;
  return c;
}

std::vector<std::pair<std::string, std::string>> kernel_families(const KernelChoice& c, bool tf32) {
  std::vector<std::pair<std::string, std::string>> families;
  const bool tensor_cores = tf32 && c.tf32_mma;
  if (tf32 && !c.tf32_mma) {
    families.emplace_back("tf32", "no TF32 tensor cores below compute capability 8.0: FP32 instead");
  }
  std::string matmul = tensor_cores ? detail::concat("split-K for small outputs (FP32 FMA; TF32 mma.sync from K = ",
                                                     GPU_MATMUL_SMALL_TF32_MIN_K, " or ", GPU_MATMUL_SMALL_TF32_MIN_FMA >> 20,
                                                     " M multiply-adds on); for large ones ")
                                     : "FP32 FMA split-K for small outputs; for large ones ";
  if (tensor_cores) {
    matmul += c.wgmma_tma ? "TF32 wgmma + TMA (sm_90a), mma.sync where a wave of tiles is not filled or the "
                                      "output is a few rows, wide or deep"
                          : "TF32 mma.sync (sm_80+)";
  } else {
    matmul += c.cp_async ? "FP32 warp tiles, cp.async big tiles (sm_80+)"
                         : "FP32 warp tiles (no cp.async below sm_80)";
  }
  families.emplace_back("matmul", matmul);
  const std::string mma_sync = detail::concat(
      "TF32 mma.sync implicit GEMM (sm_80+), ",
      c.conv_tf32_stages >= 3 ? detail::concat(c.conv_tf32_stages, "-stage cp.async pipeline")
                              : std::string("next tile staged in registers"));
  families.emplace_back(
      "conv", !tensor_cores ? std::string("FP32 FMA implicit GEMM")
              : c.wgmma_tma ? "TF32 wgmma + TMA (sm_90a) for stride-1 passes gathering 32, 64, ... channels "
                              "(forward, filter gradient: in_c; backward-data: out_c); else " + mma_sync
                            : mma_sync);
  return families;
}

int capability_cap(const char* text) {
  if (text == nullptr || *text == '\0') return 0;
  const std::string value(text);
  int major = -1, minor = -1;
  if (value.size() == 3 && std::isdigit(static_cast<unsigned char>(value[0])) && value[1] == '.' &&
      std::isdigit(static_cast<unsigned char>(value[2]))) {
    major = value[0] - '0';
    minor = value[2] - '0';
  } else if (value.size() == 2 && std::isdigit(static_cast<unsigned char>(value[0])) &&
             std::isdigit(static_cast<unsigned char>(value[1]))) {
    major = value[0] - '0';
    minor = value[1] - '0';
  }
  ENGINE_CHECK(major * 10 + minor >= OLDEST_CAPABILITY, "ENGINE_MAX_COMPUTE_CAPABILITY=", value,
               ": a compute capability such as 8.0 or 75, at least 7.5");
  return major * 10 + minor;
}

GpuDescription capped(GpuDescription gpu, int cap) {
  if (cap > 0 && cap < gpu.capability()) {
    gpu.major = cap / 10;
    gpu.minor = cap % 10;
  }
  return gpu;
}

}  // namespace engine
