#include "core/device.h"

namespace engine {

std::string to_string(const Device& device) {
  return device.is_cpu() ? "cpu" : "cuda:" + std::to_string(device.index);
}

}  // namespace engine
