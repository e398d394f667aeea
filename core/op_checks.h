// Input checks shared by the ops in core/ops/*.cpp. Each throws engine::Error with
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

// augment_images (core/ops/augment.h): images U8 (N, H, W, C), transforms F32 (N, 6), out F32
// (N, H, W, C), all on one device. raw::augment_images calls this first. H and W stay below 2^24 so
// that pixel coordinates are exact floats (core/affine_sample.h).
inline void check_augment_images(const Tensor& images, const Tensor& transforms,
                                 const Tensor& out) {
  const char* op = "augment_images";
  ENGINE_CHECK(images.defined() && transforms.defined() && out.defined(), op,
               ": undefined tensor");
  ENGINE_CHECK(images.dtype() == DType::U8, op, ": images must be uint8, got ",
               to_string(images.dtype()));
  check_ndim(op, images, 4, "images (N, H, W, C)");
  check_defined_float(op, transforms, "transforms");
  ENGINE_CHECK(transforms.ndim() == 2 && transforms.dim(0) == images.dim(0) &&
                   transforms.dim(1) == 6,
               op, ": transforms must be (", images.dim(0), ", 6) for images ",
               to_string(images.shape()), ", got ", to_string(transforms.shape()));
  check_defined_float(op, out, "out");
  check_same_shape(op, images, out);
  check_same_device(op, images, transforms);
  check_same_device(op, images, out);
  constexpr int64_t MAX_SIDE = int64_t{1} << 24;
  ENGINE_CHECK(images.dim(1) < MAX_SIDE && images.dim(2) < MAX_SIDE && images.dim(3) < MAX_SIDE,
               op, ": image sides must be below 2^24, got ", to_string(images.shape()));
  // The kernels count images and the values of one row in int.
  constexpr int64_t MAX_INT = (int64_t{1} << 31) - 1;
  ENGINE_CHECK(images.dim(0) <= MAX_INT && images.dim(2) * images.dim(3) <= MAX_INT, op,
               ": at most 2^31 - 1 images, and values per image row, got ",
               to_string(images.shape()));
}

}  // namespace engine::detail
