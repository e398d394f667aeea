// Memory and threading for the CPU backend.
#include "cpu/cpu_backend.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace engine::cpu {
namespace {
// 64-byte alignment: one cache line, and what AVX-512 loads like.
constexpr size_t ALIGNMENT = 64;
}  // namespace

CpuBackend::CpuBackend()
    : allocator_("cpu", ALIGNMENT,
                 [](size_t bytes) { return std::aligned_alloc(ALIGNMENT, bytes); },
                 [](void* ptr) { std::free(ptr); }) {
  // Our OpenMP team parallelises sgemm (cpu/matmul.cpp), so OpenBLAS runs on one thread.
  // In OpenBLAS' OpenMP build this call also sets OpenMP's team size to 1: keep ours.
  const int threads = omp_get_max_threads();
  openblas_set_num_threads(1);
  omp_set_num_threads(threads);
}

std::string CpuBackend::name() const {
  return "cpu (" + std::to_string(num_threads()) + " threads, " + blas_config() + ")";
}

void CpuBackend::copy_from_host(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuBackend::copy_to_host(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void* CpuBackend::allocate_pinned(size_t bytes) {
  void* pointer = std::aligned_alloc(ALIGNMENT, (std::max<size_t>(bytes, 1) + ALIGNMENT - 1) /
                                                    ALIGNMENT * ALIGNMENT);
  ENGINE_CHECK(pointer != nullptr, "out of host memory: ", bytes >> 20, " MiB asked for input buffers");
  return pointer;
}
void CpuBackend::free_pinned(void* pointer) { std::free(pointer); }
void CpuBackend::copy_from_pinned_async(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuBackend::copy_within(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memmove(dst, src, bytes);
}

void CpuBackend::fill(Tensor& y, float value) {
  const int64_t n = y.numel();
  if (y.dtype() == DType::I32) {
    int32_t* out = y.data<int32_t>();
    const auto v = static_cast<int32_t>(value);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
    return;
  }
  if (y.dtype() == DType::U8) {
    if (n > 0) std::memset(y.data<uint8_t>(), saturate_u8(value), static_cast<size_t>(n));
    return;
  }
  float* out = y.data<float>();
  const int team = team_size(n, PARALLEL_GRAIN);
#pragma omp parallel for simd num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = value;
}

CpuBackend& backend() {
  // Never destroyed: tensors in static storage may outlive any other owner.
  static CpuBackend* instance = new CpuBackend();
  return *instance;
}

void set_num_threads(int threads) {
  ENGINE_CHECK(threads >= 1, "--threads must be at least 1, got ", threads);
  omp_set_num_threads(threads);  // OpenBLAS stays single-threaded: see cpu/matmul.cpp
}

int num_threads() { return omp_get_max_threads(); }

std::string blas_config() {
  const char* config = openblas_get_config();  // starts with "OpenBLAS <version>"
  return config ? config : "OpenBLAS (unknown build)";
}

}  // namespace engine::cpu
