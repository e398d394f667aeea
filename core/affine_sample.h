// The coordinate arithmetic of augment_images (core/ops/augment.h), written once for the CPU
// (cpu/augment.cpp) and the GPU (kernels/augment.cu) so that both read the same source pixel
// for every output pixel, bit for bit.
//
// An output pixel (r, c) of an H x W image reads the source pixel
//   row = clamp(round(m0*r + m1*c + m2), 0, H-1),  col = clamp(round(m3*r + m4*c + m5), 0, W-1)
// with the float operations in exactly this order and each one rounded on its own:
//   x = ((m0 * r) + (m1 * c)) + m2;   round(x) = floorf(x + 0.5f)   (halves round up)
// and the clamp done on the float before it becomes an int (so a huge or NaN coordinate is
// harmless; NaN reads index 0). Clamping to the edge is Keras' fill_mode='nearest'.
//
// Why "each one rounded on its own": a compiler may fuse a*b + c into one FMA, rounded once.
// nvcc does that by default in device code, so the device path below spells out __fmul_rn
// and __fadd_rn, which are never fused. The host path is plain C++: the engine builds as ISO
// C++17 (CMAKE_CXX_EXTENSIONS OFF), where GCC does not contract, and cpu/CMakeLists.txt
// compiles cpu/augment.cpp with -ffp-contract=off as well, for compilers that would.
// r and c are below 2^24, so converting them to float is exact.
#pragma once
#include <cstdint>

#include "core/host_device.h"

namespace engine {

// a * b and a + b, each rounded to float once, never fused into an FMA.
ENGINE_HOST_DEVICE float mul_unfused(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
ENGINE_HOST_DEVICE float add_unfused(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// The source index along one axis of length `size` (> 0) for output pixel (r, c), from one
// row (a, b, t) of the 2x3 matrix: clamp(floorf(((a*r) + (b*c)) + t + 0.5f), 0, size-1).
// Computed without floorf (a library call on baseline x86-64): y = x + 0.5 is first clamped
// to [0, size], where truncation toward zero *is* floor; an index of `size` (y at the top
// end) becomes size - 1. A NaN fails `y > 0` and reads pixel 0.
ENGINE_HOST_DEVICE int affine_source_index(float a, float b, float t, int r, int c, int size) {
  const float x = add_unfused(add_unfused(mul_unfused(a, static_cast<float>(r)),
                                          mul_unfused(b, static_cast<float>(c))),
                              t);
  const float y = add_unfused(x, 0.5f);
  const float limit = static_cast<float>(size);
  const float inside = y > 0.0f ? (y < limit ? y : limit) : 0.0f;
  const int index = static_cast<int>(inside);  // floor(y), as inside >= 0
  return index < size ? index : size - 1;
}

// One whole image on the host, the CPU reference and the building block of
// cpu::augment_images; also what data-loading worker threads call on one image each
// (it uses no OpenMP and no tensors, only the pointers it is given):
//   dst[r, c, ch] = scale * src[row(r, c), col(r, c), ch]
// with (row, col) = the source pixel of output pixel (r, c) under the 2x3 matrix m, by the
// rule above. src: uint8 (height, width, channels); dst: float (height, width, channels),
// not overlapping src. Declared here so that datasets/ (which may include only core/) can
// call it; defined in cpu/augment.cpp, which is compiled with -ffp-contract=off.
void augment_image(const uint8_t* src, int height, int width, int channels, const float m[6],
                   float scale, float* dst);

}  // namespace engine
