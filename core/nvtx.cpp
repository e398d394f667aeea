#include "core/nvtx.h"

#if defined(ENGINE_WITH_NVTX)
#include <nvtx3/nvToolsExt.h>

namespace engine {
namespace {
// The domain is created on first use and lives as long as the process.
nvtxDomainHandle_t engine_domain() {
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA("engine");
  return domain;
}
}  // namespace

NvtxRange::NvtxRange(const char* name) {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = name;
  nvtxDomainRangePushEx(engine_domain(), &attributes);
}

NvtxRange::~NvtxRange() { nvtxDomainRangePop(engine_domain()); }

}  // namespace engine

#else

namespace engine {
NvtxRange::NvtxRange(const char*) {}
NvtxRange::~NvtxRange() {}
}  // namespace engine

#endif
