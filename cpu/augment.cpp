// augment_images on the CPU: the reference for kernels/augment.cu. Every output pixel asks
// core/affine_sample.h which source pixel it reads, then copies that pixel's channels,
// converted to float and multiplied by `scale` (Keras' rescale=1/255).
//
// Napkin math, seed-004 batch (32 images of 150 x 150 x 3): 2.16 MB of bytes read and 8.6 MB
// of floats written, ~1 ms at a core's ~10 GB/s. But per pixel there are also two source
// coordinates (4 multiplies, 6 adds, 4 compares, 2 converts) and 3 converts and multiplies,
// all scalar (the read from a computed address does not vectorise): ~15 cycles per pixel,
// 0.72 M pixels, ~3.5 ms at 3 GHz, so the loop is compute-bound (measured on one core:
// docs/results/dogs_vs_cats.md, "The loader"). cpu::augment_images splits the rows over the
// team; data-loading workers call augment_image on one image each.
//
// The file is compiled with -ffp-contract=off (cpu/CMakeLists.txt): the coordinates must be
// rounded operation by operation, exactly as the GPU computes them.
#include "core/ops/augment.h"

#include "core/affine_sample.h"
#include "cpu/cpu_device.h"

namespace engine {
namespace {

// Output row r of one image: (width, channels) floats at dst_row.
void augment_row(const uint8_t* src, int height, int width, int channels, const float m[6],
                 float scale, int r, float* dst_row) {
  for (int c = 0; c < width; ++c) {
    const int source_row = affine_source_index(m[0], m[1], m[2], r, c, height);
    const int source_col = affine_source_index(m[3], m[4], m[5], r, c, width);
    const uint8_t* pixel =
        src + (static_cast<int64_t>(source_row) * width + source_col) * channels;
    float* out = dst_row + static_cast<int64_t>(c) * channels;
    for (int ch = 0; ch < channels; ++ch) out[ch] = scale * static_cast<float>(pixel[ch]);
  }
}

}  // namespace

// Declared in core/affine_sample.h.
void augment_image(const uint8_t* src, int height, int width, int channels, const float m[6],
                   float scale, float* dst) {
  const int64_t row_floats = static_cast<int64_t>(width) * channels;
  for (int r = 0; r < height; ++r) {
    augment_row(src, height, width, channels, m, scale, r, dst + r * row_floats);
  }
}

namespace cpu {

void augment_images(const Tensor& images, const Tensor& transforms, Tensor& out, float scale) {
  // raw::augment_images (core/ops/augment.cpp) checked the shapes these loops trust.
  const int64_t count = images.dim(0);
  const auto height = static_cast<int>(images.dim(1));
  const auto width = static_cast<int>(images.dim(2));
  const auto channels = static_cast<int>(images.dim(3));
  if (out.numel() == 0) return;
  const int64_t image_bytes = static_cast<int64_t>(height) * width * channels;
  const int64_t row_floats = static_cast<int64_t>(width) * channels;
  const uint8_t* src = images.data<uint8_t>();
  const float* m = transforms.data<float>();
  float* dst = out.data<float>();
  // One work item per output row of every image: 32 x 150 = 4,800 rows for a seed-004 batch,
  // plenty to share among the team.
  const int64_t rows = count * height;
  const int team = team_size(out.numel(), PARALLEL_GRAIN);
#pragma omp parallel for num_threads(team) if (parallel : team > 1) schedule(static)
  for (int64_t item = 0; item < rows; ++item) {
    const int64_t n = item / height;
    const auto r = static_cast<int>(item - n * height);
    augment_row(src + n * image_bytes, height, width, channels, m + n * 6, scale, r,
                dst + item * row_floats);
  }
}

}  // namespace cpu
}  // namespace engine
