#include "core/system_info.h"
#include "nn/observers/observers.h"

namespace engine::nn {

void MemoryRecord::epoch_finished(FitRun& run, EpochRecord& record) {
  const AllocatorStats stats = run.device.allocator().stats();
  record.memory = EpochMemory{host_rss_bytes(), stats.current_bytes,
                              stats.current_bytes + stats.cached_bytes};
}

}  // namespace engine::nn
