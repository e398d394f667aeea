// Where the last kernel was launched from. Kernels run asynchronously: a fault inside one (an
// illegal address, a launch failure) surfaces later, at whichever CUDA call synchronises next,
// and that call alone cannot say which kernel it was. So CHECK_LAUNCH() (kernels/cuda_check.h),
// which follows every launch, also notes the launch's site here, and an error message names
// the last kernel queued before the fault was seen (kernels/cuda_device.cu, throw_cuda_error);
// --sync-check (core/sync_check.h) narrows it down to the op.
//
// The cost, on every launch of the hot path: one store of a pointer to a constant made at
// compile time (the site's file, line and name live in static storage: nothing is built,
// nothing is locked). Process-wide rather than per thread: the GPU's work is all queued on
// one stream, so the last launch into that queue is what a fault seen on any thread follows.
//
// No CUDA headers here: the CPU-only build's --sync-check hook and its tests read it too.
#pragma once
#include <atomic>
#include <cstring>
#include <string>

namespace engine::cuda {

struct LaunchSite {
  const char* file;    // __FILE__ of the launch
  int line;            // __LINE__ of its CHECK_LAUNCH
  const char* kernel;  // CHECK_LAUNCH_NAMED's name, nullptr for CHECK_LAUNCH()
};

inline std::atomic<const LaunchSite*> g_last_launch{nullptr};

inline void note_launch(const LaunchSite* site) {
  g_last_launch.store(site, std::memory_order_relaxed);
}
// The site of the last launch that CHECK_LAUNCH saw succeed; nullptr before the first.
inline const LaunchSite* last_launch() { return g_last_launch.load(std::memory_order_relaxed); }

// A source path from its last "kernels/" on, else its last two parts (the build passes
// absolute paths to the compiler): "kernels/softmax.cu", "tests/test_fault_reporting.cpp".
inline const char* short_path(const char* file) {
  const char* from = nullptr;
  for (const char* p = std::strstr(file, "kernels/"); p; p = std::strstr(p + 1, "kernels/")) {
    from = p;
  }
  if (from) return from;
  const char* last = std::strrchr(file, '/');
  if (!last) return file;
  for (const char* p = last - 1; p >= file; --p) {
    if (*p == '/') return p + 1;
  }
  return file;
}

// "strided_copy_kernel launched at kernels/strided_copy.cu:92", or without a name
// "the kernel launched at kernels/softmax.cu:118".
inline std::string describe(const LaunchSite& site) {
  std::string text = site.kernel ? std::string(site.kernel) : std::string("the kernel");
  return text + " launched at " + short_path(site.file) + ":" + std::to_string(site.line);
}

}  // namespace engine::cuda

// Notes a launch site without checking anything: for launches that CHECK_LAUNCH cannot follow
// (a replayed CUDA graph) and for tests that stand in for a kernel.
#define NOTE_LAUNCH_SITE(kernel_name)                                                       \
  do {                                                                                      \
    static constexpr ::engine::cuda::LaunchSite engine_launch_site_{__FILE__, __LINE__,     \
                                                                    kernel_name};           \
    ::engine::cuda::note_launch(&engine_launch_site_);                                      \
  } while (0)
