// Measured, not assumed: the device's FP32 FMA rate, its device-to-device copy bandwidth, its
// host <-> device copy rates and the time one kernel launch takes: the ceilings every kernel's
// "% of peak" is divided by, measured once per device and cached (core/peaks_cache.h).
#pragma once
#include <cuda_runtime.h>

namespace engine::cuda {

struct DevicePeaks {
  double fp32_flops = 0.0;       // FLOP/s of independent FMA chains on every SM
  double copy_bytes_per_s = 0.0;  // bytes read + written per second by a large cudaMemcpy
  double launch_seconds = 0.0;    // one empty kernel in a stream of back-to-back launches
  double host_to_device_bytes_per_s = 0.0;  // a large cudaMemcpy from pinned host memory
  double device_to_host_bytes_per_s = 0.0;  // ... and back into it
};

// Runs the five probes on `stream` (~100 ms in all) and returns their medians.
DevicePeaks measure_device_peaks(cudaStream_t stream);

}  // namespace engine::cuda
