// Picks the backend for a device. The CPU backend always exists; the CUDA backend is linked
// in only when the build found a CUDA compiler (ENGINE_WITH_CUDA).
#include "core/backend.h"

#include "core/error.h"
#include "cpu/cpu_backend.h"

namespace engine {

bool device_available(Device device, std::string* why_not) {
  if (device.is_cpu()) return true;
  if (why_not) {
    *why_not = "this build has no GPU backend: the engine's CUDA kernels are not built yet";
  }
  return false;
}

Backend& backend_for(Device device) {
  if (device.is_cpu()) return cpu::backend();
  std::string why;
  device_available(device, &why);
  throw Error("cannot use " + to_string(device) + ": " + why);
}

}  // namespace engine
