// Input checks shared by the op front-ends in core/ops_*.cpp. Each throws engine::Error with
// the op's name and the offending shapes.
#pragma once
#include "core/error.h"
#include "core/tensor.h"

namespace engine::detail {

inline void check_defined_float(const char* op, const Tensor& t, const char* what) {
  ENGINE_CHECK(t.defined(), op, ": ", what, " is undefined");
  ENGINE_CHECK(t.dtype() == DType::F32, op, ": ", what, " must be float32, got ",
               to_string(t.dtype()));
}

inline void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  ENGINE_CHECK(a.device() == b.device(), op, ": inputs on different devices (",
               to_string(a.device()), " and ", to_string(b.device()), ")");
}

inline void check_same_shape(const char* op, const Tensor& a, const Tensor& b) {
  ENGINE_CHECK(a.shape() == b.shape(), op, ": shapes ", to_string(a.shape()), " and ",
               to_string(b.shape()), " differ");
}

inline void check_ndim(const char* op, const Tensor& t, int ndim, const char* what) {
  ENGINE_CHECK(t.ndim() == ndim, op, ": ", what, " must be ", ndim, "-D, got shape ",
               to_string(t.shape()));
}

}  // namespace engine::detail
