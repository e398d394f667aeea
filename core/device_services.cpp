// Finds the services of a device. The CPU's always exist; a GPU's are linked in only when the
// build found a CUDA compiler (ENGINE_WITH_CUDA).
#include "core/device_services.h"

#include "core/error.h"
#include "cpu/cpu_device.h"
#if defined(ENGINE_WITH_CUDA)
#include "kernels/cuda_device.h"
#endif

namespace engine {

// Devices without vendor libraries (the CPU) refuse --device cudnn.
void DeviceServices::set_vendor_libraries(bool enabled) {
  if (enabled) throw DeviceError("the " + name() + " device has no vendor libraries (cuBLAS/cuDNN)");
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

DeviceServices& device_services(Device device) {
  if (device.is_cpu()) return cpu::device();
  std::string why;
  if (!device_available(device, &why)) throw DeviceError("cannot use " + to_string(device) + ": " + why);
#if defined(ENGINE_WITH_CUDA)
  return cuda::device(device.index);
#else
  throw DeviceError("cannot use " + to_string(device));
#endif
}

}  // namespace engine
