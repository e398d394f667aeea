// The --sync-check hook (core/sync_check.h).
#include "core/sync_check.h"

#include <array>
#include <memory>
#include <string>

#include "core/device_services.h"
#include "core/dispatch.h"
#include "core/error.h"
#include "core/profiler.h"
#include "kernels/launch_site.h"

namespace engine {
namespace {

class SyncCheckHook final : public OpHook {
 public:
  explicit SyncCheckHook(DeviceServices& device) : device_(device) {}
  void around_op(const OpCall& call, const OpRun& run) override;

 private:
  DeviceServices& device_;
};

// One slot per device, as the profiler's: the CPU, then CUDA devices 0..15. Written at start-up,
// before any other thread exists.
constexpr size_t MAX_DEVICES = 17;
std::array<std::unique_ptr<SyncCheckHook>, MAX_DEVICES> g_checked;

size_t slot_of(Device device) {
  return device.is_cpu() ? 0 : static_cast<size_t>(device.index) + 1;
}

void SyncCheckHook::around_op(const OpCall& call, const OpRun& run) {
  // Cleared, so that a launch noted from here on is this op's (even from the same site as the
  // op before); put back if the op launched nothing.
  const cuda::LaunchSite* before = cuda::last_launch();
  cuda::note_launch(nullptr);
  try {
    run();
    device_.synchronize();  // a fault of this op's kernels surfaces here, not ops later
  } catch (const DeviceError& e) {
    const std::string op = std::string(call.op) + " " + call.shape;
    const cuda::LaunchSite* last = cuda::last_launch();  // the op's last kernel, if it had any
    const bool launched = last != nullptr;
    if (!launched) cuda::note_launch(before);
    const auto* cuda_error = dynamic_cast<const CudaError*>(&e);
    if (cuda_error && cuda_error->fault()) {
      throw CudaError(
          "GPU fault in op " + op + ": " + cuda_error->error() + ", in " +
              (launched ? cuda::describe(*last)
                        : std::string("no kernel of its own (a copy, or a cuBLAS/cuDNN call)")) +
              " [--sync-check]",
          cuda_error->error(), launched ? cuda::describe(*last) : std::string(), true);
    }
    // A failed launch names its kernel already; anything else gets the op's last launch.
    const bool names_kernel = cuda_error && !cuda_error->kernel().empty();
    const std::string kernel =
        launched && !names_kernel ? "; its last kernel launch: " + cuda::describe(*last) : "";
    throw DeviceError("op " + op + " failed: " + e.what() + kernel + " [--sync-check]");
  }
  if (cuda::last_launch() == nullptr) cuda::note_launch(before);
}

}  // namespace

void enable_sync_check(Device device) {
  const size_t slot = slot_of(device);
  ENGINE_CHECK(slot < MAX_DEVICES, "device ", to_string(device), " is beyond --sync-check's table");
  ENGINE_CHECK(!profiling_enabled(device),
               "enable --sync-check before --profile (the profiler would not see the checks)");
  if (g_checked[slot]) return;
  g_checked[slot] = std::make_unique<SyncCheckHook>(device_services(device));
  add_op_hook(device, g_checked[slot].get());
}

bool sync_check_enabled(Device device) {
  const size_t slot = slot_of(device);
  return slot < MAX_DEVICES && g_checked[slot] != nullptr;
}

}  // namespace engine
