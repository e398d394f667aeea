// NVTX ranges in the engine's own domain ("engine"), so Nsight users can pick out one part
// of a run: `ncu --nvtx --nvtx-include "engine@train_step/" ...`. The ranges are no-ops where
// the build has no NVTX headers (a machine without the CUDA toolkit).
#pragma once

namespace engine {

class NvtxRange {
 public:
  explicit NvtxRange(const char* name);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace engine
