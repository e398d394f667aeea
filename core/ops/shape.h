// Shape changes: views of the same data, no device work.
#pragma once
#include "core/tensor.h"

namespace engine {

Tensor reshape(const Tensor& x, const Shape& shape);  // same data, new shape (a view)
Tensor flatten(const Tensor& x);                       // (N, ...) -> (N, prod(...))

}  // namespace engine
