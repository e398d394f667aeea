// --sync-check: find the op a GPU fault happened in.
//
// Kernels run asynchronously, so a fault inside one (an illegal address, a launch failure)
// surfaces at the next call that waits for the device, ops later; by itself the error can only
// name the last kernel launched before it was seen (kernels/launch_site.h).
// enable_sync_check(device) adds a hook at the dispatch point (core/dispatch.h) that waits
// for the device after every op and copy, so a fault surfaces in the op that caused it, and
// rethrows it as one line naming the op, its operands' sizes, the kernel and CUDA's words:
//   GPU fault in op strided_copy 256: an illegal memory access was encountered
//   (cudaErrorIllegalAddress), in strided_copy_kernel launched at kernels/strided_copy.cu:92
//   [--sync-check]
// Any other DeviceError out of an op (out of memory inside it, a bad launch) gets the op's name
// and its last kernel launch put in front of its own line the same way. Apps exit with status 2.
//
// The cost: a wait for the device after every op (a host round trip on top of each launch) and
// no CUDA graph: every step is launched op by op, and the device idles between ops while the
// host waits, so a step takes several times as long as a replayed graph (measured:
// docs/results/mnist_mlp.md, "What --sync-check costs"). Use it to find a fault, not to time
// anything. On the CPU, where an op is done when it returns, the wait is free and nothing
// changes.
#pragma once
#include "core/device.h"

namespace engine {

// From now on, every op and copy on `device` is checked. Call it at start-up, before
// enable_profiling (which then times the checked ops).
void enable_sync_check(Device device);
bool sync_check_enabled(Device device);

}  // namespace engine
