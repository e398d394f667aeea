// Where a tensor's memory lives, and so which implementation runs its ops (core/dispatch.h).
#pragma once
#include <string>

namespace engine {

enum class DeviceType { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;

  static Device cpu() { return {DeviceType::CPU, 0}; }
  static Device cuda(int index = 0) { return {DeviceType::CUDA, index}; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// "cpu" or "cuda:0".
std::string to_string(const Device& device);

}  // namespace engine
