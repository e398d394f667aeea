// Seed 004's random augmentation transforms (datasets/augment.h explains the composition).
#include "datasets/augment.h"

#include <cmath>

#include "core/error.h"

namespace engine::datasets {
namespace {

void check_config(const AugmentConfig& config) {
  ENGINE_CHECK(std::isfinite(config.shear_range) && config.shear_range >= 0.0f,
               "augmentation: shear_range must be a finite number >= 0, got ",
               config.shear_range);
  ENGINE_CHECK(std::isfinite(config.zoom_range) && config.zoom_range >= 0.0f,
               "augmentation: zoom_range must be a finite number >= 0, got ", config.zoom_range);
}

// Uniform in [low, high) from one [0, 1) draw; exactly `low` when low == high.
double uniform_in(double low, double high, float u) { return low + (high - low) * u; }

}  // namespace

std::array<float, 6> identity_transform() { return {1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f}; }

AugmentParams draw_augment_params(const AugmentConfig& config, Generator& rng) {
  check_config(config);
  // Always four draws, in this order, used or not (AUGMENT_DRAWS).
  const float u_shear = rng.uniform(), u_zx = rng.uniform(), u_zy = rng.uniform();
  const float u_flip = rng.uniform();
  AugmentParams p;
  const double shear = config.shear_range, zoom = config.zoom_range;
  p.shear = shear == 0.0 ? 0.0 : uniform_in(-shear, shear, u_shear);
  p.zx = zoom == 0.0 ? 1.0 : uniform_in(1.0 - zoom, 1.0 + zoom, u_zx);
  p.zy = zoom == 0.0 ? 1.0 : uniform_in(1.0 - zoom, 1.0 + zoom, u_zy);
  p.flip = config.horizontal_flip && u_flip < 0.5f;
  return p;
}

std::array<float, 6> augment_matrix(const AugmentParams& p, int height, int width) {
  ENGINE_CHECK(height > 0 && width > 0, "augmentation: image of ", height, " x ", width);
  // Step 3: A = [[1, -sin s], [0, cos s]] * [[zx, 0], [0, zy]].
  const double a00 = p.zx, a01 = -std::sin(p.shear) * p.zy;
  const double a10 = 0.0, a11 = std::cos(p.shear) * p.zy;
  // Step 4: source = o + A (output - o) = A output + (o - A o).
  const double o_row = height / 2.0 - 0.5, o_col = width / 2.0 - 0.5;
  double m[6] = {a00, a01, o_row - a00 * o_row - a01 * o_col,
                 a10, a11, o_col - a10 * o_row - a11 * o_col};
  // Step 5: output column c reads what column W-1-c would: substitute col -> (W-1) - col.
  if (p.flip) {
    const double last = width - 1.0;
    m[2] += m[1] * last;
    m[1] = -m[1];
    m[5] += m[4] * last;
    m[4] = -m[4];
  }
  std::array<float, 6> out{};
  for (int i = 0; i < 6; ++i) out[static_cast<size_t>(i)] = static_cast<float>(m[i]);
  return out;
}

std::array<float, 6> random_transform(const AugmentConfig& config, int height, int width,
                                      Generator& rng) {
  return augment_matrix(draw_augment_params(config, rng), height, width);
}

std::array<float, 6> transform_for(const AugmentConfig& config, int height, int width,
                                   uint64_t seed, int64_t epoch, int64_t sample) {
  ENGINE_CHECK(epoch >= 0 && sample >= 0, "transform_for: epoch ", epoch, " and sample ",
               sample, " must be >= 0");
  Generator rng(derive_seed(seed, static_cast<uint64_t>(epoch)));
  rng.set_offset(static_cast<uint64_t>(sample) * AUGMENT_DRAWS);
  return random_transform(config, height, width, rng);
}

std::vector<float> transforms_for_batch(const AugmentConfig& config, int height, int width,
                                        uint64_t seed, int64_t epoch,
                                        const std::vector<int64_t>& samples) {
  std::vector<float> out;
  out.reserve(samples.size() * 6);
  for (int64_t sample : samples) {
    const std::array<float, 6> m = transform_for(config, height, width, seed, epoch, sample);
    out.insert(out.end(), m.begin(), m.end());
  }
  return out;
}

}  // namespace engine::datasets
