// Keras' ImageDataGenerator augmentation on the device. Implementations: cpu/augment.cpp,
// kernels/augment.cu.
#pragma once
#include "core/tensor.h"

namespace engine {

namespace raw {
// Shear, zoom, horizontal flip and rescale as one affine resampling per image:
//   out[n, r, c, ch] = scale * images[n, clamp(round(m0*r + m1*c + m2)),
//                                         clamp(round(m3*r + m4*c + m5)), ch]
// images U8 (N, H, W, C); transforms F32 (N, 6): per image the 2x3 matrix (m0..m5) taking an
// output pixel (row, col) to the source pixel it reads; nearest-neighbour sampling and,
// outside the image, the nearest edge pixel (Keras fill_mode='nearest'); out F32 (N, H, W, C).
// round(x) = floorf(x + 0.5f), the order of the float operations and the clamp are written
// once in core/affine_sample.h, so both implementations read the same pixels, bit for bit.
// Checks its shapes itself (detail::check_augment_images). The matrices are drawn by
// datasets/augment.h.
void augment_images(const Tensor& images, const Tensor& transforms, Tensor& out, float scale);
}  // namespace raw

namespace cpu {
void augment_images(const Tensor& images, const Tensor& transforms, Tensor& out, float scale);
}  // namespace cpu

namespace cuda {
void augment_images(const Tensor& images, const Tensor& transforms, Tensor& out, float scale);
}  // namespace cuda

}  // namespace engine
