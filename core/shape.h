// Shapes are small vectors of extents; tensors are always contiguous row-major, so the
// strides follow from the shape (the last dimension varies fastest).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace engine {

using Shape = std::vector<int64_t>;

// Number of elements; 1 for a scalar (empty shape).
int64_t numel(const Shape& shape);

// Row-major strides in elements, e.g. (2, 3, 4) -> (12, 4, 1).
std::vector<int64_t> contiguous_strides(const Shape& shape);

// "(2, 3, 4)"; used in every shape error message.
std::string to_string(const Shape& shape);

}  // namespace engine
