// The hooks of the dispatch point (core/dispatch.h).
#include "core/dispatch.h"

#include <array>
#include <vector>

#include "core/error.h"

namespace engine {
namespace {

// One slot per device: the CPU, then CUDA devices 0..15. Written at start-up, before any other
// thread exists; read at every op.
constexpr size_t MAX_DEVICES = 17;
std::array<std::vector<OpHook*>, MAX_DEVICES> g_hooks;

size_t slot_of(Device device) { return device.is_cpu() ? 0 : static_cast<size_t>(device.index) + 1; }

// Runs hooks[0..count) around `run`, the last one outermost.
void run_through(const std::vector<OpHook*>& hooks, size_t count, const OpCall& call,
                 const OpRun& run) {
  if (count == 0) {
    run();
    return;
  }
  auto inner = [&] { run_through(hooks, count - 1, call, run); };
  hooks[count - 1]->around_op(call, OpRun(inner));
}

}  // namespace

void add_op_hook(Device device, OpHook* hook) {
  const size_t slot = slot_of(device);
  ENGINE_CHECK(slot < MAX_DEVICES, "device ", to_string(device), " is beyond the op hooks' table");
  g_hooks[slot].push_back(hook);
}

bool has_op_hooks(Device device) {
  const size_t slot = slot_of(device);
  return slot < MAX_DEVICES && !g_hooks[slot].empty();
}

void copy_bytes(DeviceServices& device, Copy kind, void* dst, const void* src, size_t bytes) {
  const auto describe = [&] {
    static constexpr const char* NAMES[] = {"copy host->device", "copy device->host",
                                            "copy device->device", "copy host->device (pinned, async)"};
    const double moved = static_cast<double>(bytes) * (kind == Copy::within_device ? 2.0 : 1.0);
    return OpCall{NAMES[static_cast<int>(kind)], si(static_cast<double>(bytes), "B"), {0.0, moved}};
  };
  run_op(device.device(), describe, [&] {
    switch (kind) {
      case Copy::host_to_device: device.copy_from_host(dst, src, bytes); break;
      case Copy::device_to_host: device.copy_to_host(dst, src, bytes); break;
      case Copy::within_device: device.copy_within(dst, src, bytes); break;
      case Copy::pinned_host_to_device_async: device.copy_from_pinned_async(dst, src, bytes); break;
    }
  });
}

namespace detail {

void run_hooked(Device device, const OpCall& call, const OpRun& run) {
  const std::vector<OpHook*>& hooks = g_hooks[slot_of(device)];
  run_through(hooks, hooks.size(), call, run);
}

void no_cuda_in_this_build() { throw DeviceError("this build has no CUDA backend"); }

}  // namespace detail
}  // namespace engine
