// Provokes a real illegal memory access inside an engine op, for tests/test_gpu_fault.sh: the
// GPU's strided_copy (cuda::strided_copy), called through the op hooks (core/dispatch.h, so
// --sync-check sees it) but past raw::strided_copy's bounds checks, reads from an
// offset far beyond its input. A fault kills the process's CUDA context, so each run is its own
// process. Runs through the apps' run_app with their device flags, so --sync-check, the message
// and the exit status (2) are the apps' own. Exits 77 without a usable GPU.
//
// Before the fault it records and replays a CUDA graph (without --sync-check) and holds tensors,
// so the unwinding after the fault runs their destructors against a dead context: they must
// neither throw nor hang.
#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "apps/common/app_flags.h"
#include "apps/common/app_options.h"
#include "core/device_services.h"
#include "core/dispatch.h"
#include "core/op_cost.h"
#include "core/ops/elementwise.h"
#include "core/ops/strided_copy.h"
#include "core/tensor.h"

using namespace engine;

int main(int argc, char** argv) {
  std::string why;
  if (!device_available(Device::cuda(), &why)) {
    std::fprintf(stderr, "*** GPU TEST SKIPPED: no GPU: %s ***\n", why.c_str());
    return 77;
  }
  apps::Flags flags{"Provokes an illegal memory access in strided_copy", "gpu_fault_probe"};
  apps::CommonOptions options;
  apps::add_device_flags(flags, options);
  return apps::run_app(flags, argc, argv, [&]() {
    options.gpu = true;
    const Device device = apps::apply_common_options(options);
    DeviceServices& gpu = device_services(device);
    Tensor x = Tensor::zeros({256}, DType::F32, device);
    Tensor y = Tensor::zeros({256}, DType::F32, device);
    // A recorded step (nullptr under --sync-check, whose hook makes the device record none).
    std::unique_ptr<StepGraph> graph = gpu.capture([&] { raw::fill(y, 2.0f); });
    if (graph) graph->replay();
    raw::fill(x, 1.0f);
    gpu.synchronize();  // everything so far was fine
    // 2^40 elements (4 TiB) past x: no allocation of any GPU is there.
    const Walk3d far_away{int64_t{1} << 40, {0, 0, 1}};
    const Walk3d along_y{0, {0, 0, 1}};
    const std::array<int64_t, 3> extent{1, 1, 256};
    // raw::strided_copy would refuse the walk: the GPU's copy itself, through the op hooks as
    // raw::strided_copy describes it ("strided_copy 256").
    run_op(device, [&] { return OpCall{"strided_copy", dims(y), {0.0, 2.0 * 4.0 * 256.0}}; },
           [&] { cuda::strided_copy(x, y, extent, far_away, along_y); });
    gpu.synchronize();
    std::printf("no fault: the out-of-bounds strided_copy did not fail\n");
    return 1;
  });
}
