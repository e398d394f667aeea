#include "core/shape.h"

#include "core/error.h"

namespace engine {

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t extent : shape) {
    ENGINE_CHECK(extent >= 0, "negative extent in shape ", to_string(shape));
    n *= extent;
  }
  return n;
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::string to_string(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

}  // namespace engine
