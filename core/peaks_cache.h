// A device's measured peaks, probed once and kept on disk per device (issue 8: "run once and
// cached per device with its name and driver"). The probe (DeviceServices::measure_peaks) takes
// 0.1-0.5 s on a GPU and a few seconds on a busy CPU; every --profile run and every tool that
// prints "% of peak" would pay it again, and two runs of the same binary could divide by
// slightly different peaks. The cache makes the denominators fixed per machine.
//
// The key is the device's name, which says what the peaks depend on: the GPU model, its SM
// count and the driver ("NVIDIA H100 80GB HBM3 (compute capability 9.0, sm_90, 132 SMs,
// 81079 MiB, driver 13.0)"), or the CPU's thread count and BLAS. A new driver or
// another --threads is another entry.
//
// Where: $ENGINE_CACHE_DIR, else $XDG_CACHE_HOME/engine, else $HOME/.cache/engine, file
// device_peaks.tsv: one line per device, tab-separated, readable and editable by hand:
//   name  FP32 FLOP/s  copy B/s  launch s  host->device B/s  device->host B/s  when measured
// ENGINE_REMEASURE_PEAKS=1 probes again and replaces the device's line. A line that does not
// parse is dropped (with a warning) and measured again; a cache that cannot be written costs
// only the next run's probe.
#pragma once
#include <functional>
#include <string>

#include "core/device_services.h"

namespace engine {

// The peaks of `device`, from the cache or measured (and then cached).
MeasuredPeaks cached_peaks(DeviceServices& device);

// The same with the parts named, for the tests: `key` the device's name, `measure` the probe,
// `path` the cache file ("" = no cache: measure every time).
MeasuredPeaks cached_peaks(const std::string& key, const std::function<MeasuredPeaks()>& measure,
                           const std::string& path);

// The cache file as described above, or "" when no directory for it is known.
std::string peaks_cache_path();

}  // namespace engine
