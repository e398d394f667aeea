// augment_images on the GPU: Keras' shear / zoom / flip augmentation with rescale, one
// nearest-neighbour affine resampling per image (core/ops/augment.h has the formula; the CPU
// reference is cpu/augment.cpp). Both implementations take the source pixel of every output
// pixel from core/affine_sample.h, whose device path rounds each multiply and add on its own
// (__fmul_rn, __fadd_rn: never fused into an FMA), so the two results match bit for bit.
//
// Napkin math, seed-004 batch (32 images of 150 x 150 x 3): 2.16 M output values.
//   bytes: 2.16 MB of uint8 read (each source byte about once: the transforms are near the
//          identity, neighbouring threads read neighbouring bytes) + 8.64 MB of float written
//          = 10.8 MB -> ~3.6 us at 3 TB/s (H100), about as long as the launch itself.
//   instructions: ~60 per value (a 32-bit divide by C, two coordinates of ~11 each, 64-bit
//          addresses, a convert and a multiply): 130 M thread-instructions, ~4 us at the
//          ~33 T/s an H100 issues (132 SMs x 128 lanes x 1.98 GHz): about the memory time, so
//          expect ~4-8 us, plus the launch. A thread per pixel would compute each coordinate
//          once instead of C times, at the price of strided (12-byte) stores per instruction.
// The layout is chosen for the writes: one thread per output *value* (n, r, c, ch),
// consecutive threads writing consecutive floats of one output row, every warp's store one
// run of 128 contiguous bytes. The source reads are gathers (the matrix decides where), but
// within a warp they fall on one or two source rows, mostly in the same sectors.
//
// Grid: x walks the W*C values of an output row, y the rows, z the images (y and z stride
// when an input has more than 65,535 rows or images), so no thread divides a 64-bit index.
#include <algorithm>

#include "core/affine_sample.h"
#include "core/ops/augment.h"
#include "kernels/launch.h"

namespace engine::cuda {
namespace {

constexpr int THREADS = 128;         // 4 blocks cover a 150 x 3 = 450-value row
constexpr unsigned MAX_GRID_YZ = 65535;  // the hardware limit of gridDim.y and gridDim.z

// images: (count, height, width, channels) uint8; transforms: (count, 6); out: like images,
// float. row_values = width * channels (< 2^31, checked on the host).
__global__ void augment_images_kernel(const uint8_t* __restrict__ images,
                                      const float* __restrict__ transforms,
                                      float* __restrict__ out, int count, int height, int width,
                                      int channels, float scale) {
  const int row_values = width * channels;
  const int value = blockIdx.x * blockDim.x + threadIdx.x;  // (c, ch) within the output row
  if (value >= row_values) return;
  const int c = value / channels;
  const int ch = value - c * channels;
  const int64_t image_values = int64_t{height} * row_values;
  for (int n = blockIdx.z; n < count; n += gridDim.z) {
    const float* m = transforms + int64_t{n} * 6;  // the same 24 bytes for the whole block
    const uint8_t* image = images + n * image_values;
    for (int r = blockIdx.y; r < height; r += gridDim.y) {
      const int source_row = affine_source_index(m[0], m[1], m[2], r, c, height);
      const int source_col = affine_source_index(m[3], m[4], m[5], r, c, width);
      const uint8_t pixel = image[int64_t{source_row} * row_values + source_col * channels + ch];
      out[n * image_values + int64_t{r} * row_values + value] =
          __fmul_rn(scale, static_cast<float>(pixel));
    }
  }
}

}  // namespace

void augment_images(const Tensor& images, const Tensor& transforms, Tensor& out, float scale) {
  if (out.numel() == 0) return;
  // < 2^31: raw::augment_images (core/ops/augment.cpp) checked the shapes.
  const auto count = static_cast<int>(images.dim(0));
  const auto height = static_cast<int>(images.dim(1));
  const auto width = static_cast<int>(images.dim(2));
  const auto channels = static_cast<int>(images.dim(3));
  const dim3 grid(blocks_for(int64_t{width} * channels, THREADS, INT32_MAX),
                  std::min(static_cast<unsigned>(height), MAX_GRID_YZ),
                  std::min(static_cast<unsigned>(count), MAX_GRID_YZ));
  augment_images_kernel<<<grid, THREADS, 0, stream()>>>(images.data<uint8_t>(),
                                                        transforms.data<float>(),
                                                        out.data<float>(), count, height, width,
                                                        channels, scale);
  CHECK_LAUNCH();
}

}  // namespace engine::cuda
