// The random half of seed 004's augmentation, Keras'
//   ImageDataGenerator(rescale=1/255, shear_range=0.2, zoom_range=0.2, horizontal_flip=True):
// for every training image, a random shear, zoom and flip, folded into the one 2x3 matrix
// that raw::augment_images (core/ops/augment.h) resamples the image with. The resampling
// (nearest pixel, edges repeated, times 1/255) is the op's job; this file only draws matrices.
//
// The matrix takes an output pixel (row, col) to the source pixel it reads:
//   source_row = m[0] * row + m[1] * col + m[2]
//   source_col = m[3] * row + m[4] * col + m[5]
//
// How Keras builds it (random_transform in keras/preprocessing/image.py, Keras 1.x, which the
// seed's 2016 blog post ran), in (row, col) coordinates:
//  1. shear angle s, uniform in [-shear_range, shear_range], in *radians* (Keras 2 changed
//     shear_range to degrees; the seed's 0.2 means 0.2 rad = 11.5 degrees here);
//  2. zooms zx (rows) and zy (columns), each uniform in [1 - zoom_range, 1 + zoom_range],
//     drawn independently (so the aspect ratio changes too). A zoom above 1 reads a larger
//     part of the source: the picture shrinks, the "zoom" is inverted, as in Keras;
//  3. A = Shear * Zoom = [[1, -sin s], [0, cos s]] * [[zx, 0], [0, zy]]: the zoom acts on the
//     output coordinates first, then the shear: source = A * output;
//  4. about the image centre o = (H/2 - 0.5, W/2 - 0.5), the middle of the pixel grid:
//     source = o + A * (output - o). Keras 1.x offset by H/2 + 0.5 instead, a pixel past the
//     middle (later fixed in keras-preprocessing); we take the true centre, so the identity
//     draw (s = 0, zx = zy = 1) is exactly the identity matrix;
//  5. the horizontal flip, with probability 1/2, mirrors the *output* (Keras flips after
//     transforming): output column c reads what column W-1-c would have read, which folds
//     into the matrix as col -> W-1-col.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "core/rng.h"

namespace engine::datasets {

struct AugmentConfig {
  float shear_range = 0.2f;  // radians (Keras 1.x)
  float zoom_range = 0.2f;   // zooms in [1 - zoom_range, 1 + zoom_range]
  bool horizontal_flip = true;
};

// One draw of the random parameters (Keras' names).
struct AugmentParams {
  double shear = 0.0;  // radians
  double zx = 1.0;     // zoom of the row axis
  double zy = 1.0;     // zoom of the column axis
  bool flip = false;   // mirror the columns
};

// Uniform numbers one draw takes from its Generator: shear, zx, zy, flip, in this order
// (always four, whatever the config, so that streams stay aligned).
constexpr uint64_t AUGMENT_DRAWS = 4;

// The matrix of identity (no augmentation): {1, 0, 0, 0, 1, 0}.
std::array<float, 6> identity_transform();

// Draws one set of parameters from rng (AUGMENT_DRAWS numbers). A range of 0 gives shear 0
// or zoom 1 exactly; horizontal_flip = false never flips.
AugmentParams draw_augment_params(const AugmentConfig& config, Generator& rng);

// The matrix of steps 3-5 above for an image of height x width, composed in double and
// rounded to float once per entry.
std::array<float, 6> augment_matrix(const AugmentParams& params, int height, int width);

// One random transform: augment_matrix(draw_augment_params(config, rng), height, width).
std::array<float, 6> random_transform(const AugmentConfig& config, int height, int width,
                                      Generator& rng);

// The transform of sample `sample` (its index in the dataset) in epoch `epoch`: drawn from
// the Philox stream key = derive_seed(seed, epoch), counters sample * AUGMENT_DRAWS onwards,
// so it depends on nothing else: not on the number of workers, the batch it lands in or the
// order the batches are made in. Every (epoch, sample) gets its own numbers.
std::array<float, 6> transform_for(const AugmentConfig& config, int height, int width,
                                   uint64_t seed, int64_t epoch, int64_t sample);

// transform_for of every sample of a batch, packed as the (samples.size(), 6) float32
// transforms tensor that augment_images expects.
std::vector<float> transforms_for_batch(const AugmentConfig& config, int height, int width,
                                        uint64_t seed, int64_t epoch,
                                        const std::vector<int64_t>& samples);

}  // namespace engine::datasets
