// Picks the backend for a device. The CPU backend always exists; the CUDA backend is linked
// in only when the build found a CUDA compiler (ENGINE_WITH_CUDA).
#include "core/backend.h"

#include "core/error.h"
#include "core/profiler.h"
#include "core/sync_check.h"
#include "cpu/cpu_backend.h"
#if defined(ENGINE_WITH_CUDA)
#include "kernels/cuda_backend.h"
#endif

#include <cmath>

namespace engine {

double adam_step_size(const AdamConfig& config, int64_t t) {
  const double td = static_cast<double>(t);
  return config.learning_rate * std::sqrt(1.0 - std::pow(config.beta2, td)) /
         (1.0 - std::pow(config.beta1, td));
}

// Backends without vendor libraries (the CPU) refuse --device cudnn.
void Backend::set_vendor_libraries(bool enabled) {
  if (enabled) throw DeviceError("the " + name() + " backend has no vendor libraries (cuBLAS/cuDNN)");
}

bool device_available(Device device, std::string* why_not) {
  if (device.is_cpu()) return true;
#if defined(ENGINE_WITH_CUDA)
  return cuda::device_usable(device.index, why_not);
#else
  if (why_not) {
    *why_not = "this build has no CUDA backend (no CUDA compiler was found when it was configured)";
  }
  return false;
#endif
}

Backend& backend_for(Device device) {
  if (Backend* profiled = profiling_backend(device)) return *profiled;  // --profile
  if (Backend* checked = sync_check_backend(device)) return *checked;   // --sync-check
  if (device.is_cpu()) return cpu::backend();
  std::string why;
  if (!device_available(device, &why)) throw DeviceError("cannot use " + to_string(device) + ": " + why);
#if defined(ENGINE_WITH_CUDA)
  return cuda::backend(device.index);
#else
  throw DeviceError("cannot use " + to_string(device));
#endif
}

}  // namespace engine
