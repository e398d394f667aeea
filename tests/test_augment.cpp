// Seed 004's image augmentation on the CPU: the uint8 dtype that carries the pixels, the
// augment_images op (cpu/augment.cpp, core/affine_sample.h) and the random transforms
// (datasets/augment.h).
//
// The resampling is checked on images whose pixel values name their own position, so every
// output value says which source pixel was read, against source pixels worked out by hand
// in the comments (not recomputed with the engine's formula). The random draws are checked
// by their statistics over 10,000 samples; the bounds are several standard errors wide, so
// a correct generator fails them far less than once in a million runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/affine_sample.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "datasets/augment.h"

using engine::DType;
using engine::Generator;
using engine::Tensor;
using engine::datasets::AugmentConfig;
using engine::datasets::AugmentParams;
using Matrix = std::array<float, 6>;
namespace raw = engine::raw;

namespace {

const float NaN = std::numeric_limits<float>::quiet_NaN();
constexpr float RESCALE = 1.0f / 255.0f;

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  Generator rng(seed);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = static_cast<uint8_t>(rng.below(256));
  return out;
}

// An image whose one channel holds row * width + col: the value read names the pixel.
std::vector<uint8_t> position_image(int height, int width) {
  std::vector<uint8_t> out(static_cast<size_t>(height * width));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i);
  return out;
}

// The source pixel (row, col) that each output pixel of a position image read (scale 1).
struct Pixel {
  int row, col;
};
std::vector<Pixel> pixels_read(int height, int width, const Matrix& m) {
  const std::vector<uint8_t> src = position_image(height, width);
  std::vector<float> dst(src.size(), NaN);
  engine::augment_image(src.data(), height, width, 1, m.data(), 1.0f, dst.data());
  std::vector<Pixel> out;
  for (float v : dst) {
    const int i = static_cast<int>(v);
    REQUIRE(static_cast<float>(i) == v);  // written, and a whole number
    out.push_back({i / width, i % width});
  }
  return out;
}

}  // namespace

TEST_CASE("uint8 tensors: size, names, copies, fill, gather; float-only uses refuse them") {
  CHECK(engine::element_size(DType::U8) == 1);
  CHECK(std::string(engine::to_string(DType::U8)) == "uint8");
  const std::vector<uint8_t> bytes = random_bytes(2 * 3 * 5, 1);
  Tensor t = Tensor::from_bytes(bytes, {2, 3, 5});
  CHECK(t.dtype() == DType::U8);
  CHECK(t.nbytes() == 30);
  CHECK(t.to_bytes() == bytes);
  CHECK(t.clone().to_bytes() == bytes);
  // A slice's offset counts bytes: elements 7 .. 10.
  CHECK(t.slice(7, {4}).to_bytes() == std::vector<uint8_t>(bytes.begin() + 7, bytes.begin() + 11));
  // Odd sizes leave the allocator's alignment intact for the next tensor.
  Tensor odd = Tensor::from_bytes({1, 2, 3}, {3});
  Tensor f = Tensor::full({3}, 2.0f);
  CHECK(reinterpret_cast<uintptr_t>(f.raw_data()) % 16 == 0);
  CHECK(odd.to_bytes() == std::vector<uint8_t>{1, 2, 3});
  // fill saturates to [0, 255] and truncates like the int32 conversion.
  Tensor z = Tensor::zeros({5}, DType::U8);
  CHECK(z.to_bytes() == std::vector<uint8_t>(5, 0));
  raw::fill(z, 300.0f);
  CHECK(z.to_bytes() == std::vector<uint8_t>(5, 255));
  raw::fill(z, 7.9f);
  CHECK(z.to_bytes() == std::vector<uint8_t>(5, 7));
  raw::fill(z, -3.0f);
  CHECK(z.to_bytes() == std::vector<uint8_t>(5, 0));
  // Rows of odd byte counts gather whole.
  Tensor rows = engine::gather_rows(t.view({2, 15}), Tensor::from_ints({1, 0, 1}, {3}));
  std::vector<uint8_t> expect(bytes.begin() + 15, bytes.end());
  expect.insert(expect.end(), bytes.begin(), bytes.begin() + 15);
  expect.insert(expect.end(), bytes.begin() + 15, bytes.end());
  CHECK(rows.to_bytes() == expect);
  // What only float (or 4-byte) tensors can do says so.
  CHECK_THROWS_AS(t.to_vector(), engine::Error);
  CHECK_THROWS_AS(t.data<float>(), engine::Error);
  CHECK_THROWS_AS(f.to_bytes(), engine::Error);
  CHECK_THROWS_AS(t.set_requires_grad(true), engine::Error);
  CHECK_THROWS_AS(Tensor::from_bytes({1, 2}, {3}), engine::Error);
  Tensor y = Tensor::from_bytes(bytes, {2, 3, 5});
  CHECK_THROWS_AS(raw::strided_copy(t, y, {1, 1, 4}, {}, {}), engine::Error);
  CHECK_THROWS_AS(engine::relu(t), engine::Error);
}

TEST_CASE("augment_image: the identity matrix copies the image times scale, exactly") {
  const int height = 7, width = 13, channels = 3;
  const std::vector<uint8_t> src = random_bytes(7 * 13 * 3, 2);
  std::vector<float> dst(src.size(), NaN);
  const Matrix m = engine::datasets::identity_transform();
  CHECK(m == Matrix{1, 0, 0, 0, 1, 0});
  engine::augment_image(src.data(), height, width, channels, m.data(), RESCALE, dst.data());
  for (size_t i = 0; i < src.size(); ++i) CHECK(dst[i] == RESCALE * static_cast<float>(src[i]));
}

TEST_CASE("augment_image: a horizontal flip mirrors the columns, every channel") {
  const int height = 5, width = 6, channels = 3;
  const std::vector<uint8_t> src = random_bytes(5 * 6 * 3, 3);
  AugmentParams flip;
  flip.flip = true;
  const Matrix m = engine::datasets::augment_matrix(flip, height, width);
  CHECK(m == Matrix{1, 0, 0, 0, -1, 5});  // col -> 5 - col
  std::vector<float> dst(src.size(), NaN);
  engine::augment_image(src.data(), height, width, channels, m.data(), 1.0f, dst.data());
  for (int r = 0; r < height; ++r) {
    for (int c = 0; c < width; ++c) {
      for (int ch = 0; ch < channels; ++ch) {
        const size_t out = static_cast<size_t>((r * width + c) * channels + ch);
        const size_t in = static_cast<size_t>((r * width + (width - 1 - c)) * channels + ch);
        CHECK(dst[out] == static_cast<float>(src[in]));
      }
    }
  }
}

TEST_CASE("augment_image: zoom about the centre reads the expected pixels") {
  // 8 x 8, centre 3.5: source = 3.5 + z (output - 3.5) on each axis, rounded half up.
  AugmentParams p;
  SUBCASE("z = 0.5 (the picture is magnified 2x)") {
    // 1.75 + 0.5 r = 1.75, 2.25, 2.75, 3.25, 3.75, 4.25, 4.75, 5.25
    p.zx = p.zy = 0.5;
    const Matrix m = engine::datasets::augment_matrix(p, 8, 8);
    CHECK(m == Matrix{0.5f, 0, 1.75f, 0, 0.5f, 1.75f});
    const int expect[8] = {2, 2, 3, 3, 4, 4, 5, 5};
    const std::vector<Pixel> read = pixels_read(8, 8, m);
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) {
        CHECK(read[static_cast<size_t>(r * 8 + c)].row == expect[r]);
        CHECK(read[static_cast<size_t>(r * 8 + c)].col == expect[c]);
      }
    }
  }
  SUBCASE("z = 2 (the picture shrinks; the border repeats the edge pixels)") {
    // 2 r - 3.5 = -3.5, -1.5, 0.5, 2.5, 4.5, 6.5, 8.5, 10.5: below 0 -> 0, above 7 -> 7.
    p.zx = p.zy = 2.0;
    const Matrix m = engine::datasets::augment_matrix(p, 8, 8);
    CHECK(m == Matrix{2, 0, -3.5f, 0, 2, -3.5f});
    const int expect[8] = {0, 0, 1, 3, 5, 7, 7, 7};
    const std::vector<Pixel> read = pixels_read(8, 8, m);
    for (int r = 0; r < 8; ++r) {
      for (int c = 0; c < 8; ++c) {
        CHECK(read[static_cast<size_t>(r * 8 + c)].row == expect[r]);
        CHECK(read[static_cast<size_t>(r * 8 + c)].col == expect[c]);
      }
    }
  }
  SUBCASE("rows and columns zoom independently, about a centre between pixels") {
    // 5 rows (centre 2), 4 columns (centre 1.5): zx = 0.5 -> 1 + 0.5 r = 1, 1.5, 2, 2.5, 3
    // -> rows 1, 2, 2, 3, 3; zy = 1 -> columns unchanged.
    p.zx = 0.5;
    const Matrix m = engine::datasets::augment_matrix(p, 5, 4);
    const int expect_row[5] = {1, 2, 2, 3, 3};
    const std::vector<Pixel> read = pixels_read(5, 4, m);
    for (int r = 0; r < 5; ++r) {
      for (int c = 0; c < 4; ++c) {
        CHECK(read[static_cast<size_t>(r * 4 + c)].row == expect_row[r]);
        CHECK(read[static_cast<size_t>(r * 4 + c)].col == c);
      }
    }
  }
}

TEST_CASE("augment_image: points outside the image take the nearest edge pixel") {
  SUBCASE("a shift far beyond the top right corner reads the corner pixel") {
    const Matrix m = {1, 0, -100, 0, 1, 100};
    for (const Pixel& p : pixels_read(6, 9, m)) {
      CHECK(p.row == 0);
      CHECK(p.col == 8);
    }
  }
  SUBCASE("a shift of 2 rows down repeats the last row") {
    const Matrix m = {1, 0, 2, 0, 1, 0};  // output row r reads row r + 2, at most 4
    const std::vector<Pixel> read = pixels_read(5, 3, m);
    for (int r = 0; r < 5; ++r) {
      for (int c = 0; c < 3; ++c) {
        CHECK(read[static_cast<size_t>(r * 3 + c)].row == std::min(r + 2, 4));
        CHECK(read[static_cast<size_t>(r * 3 + c)].col == c);
      }
    }
  }
  SUBCASE("halves round up, and a coordinate of NaN reads pixel 0") {
    // row: 0.5 r - 0.5 = -0.5 (-> 0), 0 (0), 0.5 (1), 1 (1); col: NaN -> 0
    const Matrix m = {0.5f, 0, -0.5f, 0, 0, NaN};
    const std::vector<Pixel> read = pixels_read(4, 2, m);
    const int expect[4] = {0, 0, 1, 1};
    for (int r = 0; r < 4; ++r) {
      for (int c = 0; c < 2; ++c) {
        CHECK(read[static_cast<size_t>(r * 2 + c)].row == expect[r]);
        CHECK(read[static_cast<size_t>(r * 2 + c)].col == 0);
      }
    }
  }
}

TEST_CASE("augment_matrix: shear, and the centre stays put") {
  // Shear alone: source row = r - sin(s) (c - o_col), source col = o_col + cos(s) (c - o_col).
  AugmentParams p;
  p.shear = 0.2;
  const Matrix m = engine::datasets::augment_matrix(p, 150, 150);
  CHECK(m[0] == 1.0f);
  CHECK(m[1] == doctest::Approx(-std::sin(0.2)));
  CHECK(m[3] == 0.0f);
  CHECK(m[4] == doctest::Approx(std::cos(0.2)));
  // Any draw without a flip maps the centre (74.5, 74.5) of a 150 x 150 image to itself.
  Generator rng(9);
  for (int i = 0; i < 100; ++i) {
    AugmentParams q = engine::datasets::draw_augment_params(AugmentConfig{}, rng);
    q.flip = false;
    const Matrix a = engine::datasets::augment_matrix(q, 150, 150);
    CHECK(a[0] * 74.5 + a[1] * 74.5 + a[2] == doctest::Approx(74.5).epsilon(1e-5));
    CHECK(a[3] * 74.5 + a[4] * 74.5 + a[5] == doctest::Approx(74.5).epsilon(1e-5));
  }
  CHECK_THROWS_AS(engine::datasets::augment_matrix(p, 0, 5), engine::Error);
}

TEST_CASE("transform_for: deterministic, and different for every sample, epoch and seed") {
  const AugmentConfig config;
  const Matrix a = engine::datasets::transform_for(config, 150, 150, 42, 3, 17);
  CHECK(a == engine::datasets::transform_for(config, 150, 150, 42, 3, 17));
  CHECK(a != engine::datasets::transform_for(config, 150, 150, 42, 3, 18));
  CHECK(a != engine::datasets::transform_for(config, 150, 150, 42, 4, 17));
  CHECK(a != engine::datasets::transform_for(config, 150, 150, 43, 3, 17));
  // The batch helper packs the same matrices, in order.
  const std::vector<float> batch =
      engine::datasets::transforms_for_batch(config, 150, 150, 42, 3, {17, 5});
  REQUIRE(batch.size() == 12);
  const Matrix b = engine::datasets::transform_for(config, 150, 150, 42, 3, 5);
  for (size_t i = 0; i < 6; ++i) {
    CHECK(batch[i] == a[i]);
    CHECK(batch[6 + i] == b[i]);
  }
  CHECK_THROWS_AS(engine::datasets::transform_for(config, 150, 150, 42, -1, 0), engine::Error);
  CHECK_THROWS_AS(engine::datasets::transform_for(config, 150, 150, 42, 0, -1), engine::Error);
  AugmentConfig bad;
  bad.zoom_range = -0.1f;
  CHECK_THROWS_AS(engine::datasets::transform_for(bad, 150, 150, 42, 0, 0), engine::Error);
}

TEST_CASE("transform_for: 10,000 draws stay in range with the right statistics") {
  // Each matrix is taken apart again: without a flip, m1 = -sin(s) zy and m4 = cos(s) zy; a
  // flip negates both. So flip = (m4 < 0), zx = m0, zy = hypot(m1, m4), s = atan(-m1 / m4).
  const AugmentConfig config;  // shear 0.2 rad, zoom 0.2, flips
  const int n = 10000;
  const double tol = 1e-6;  // the float rounding of the matrix entries
  int flips = 0;
  double sum_shear = 0, sum_zx = 0, sum_zy = 0, sum_zxzy = 0, sum_zx2 = 0, sum_zy2 = 0;
  double min_shear = 1, max_shear = -1, min_zoom = 2, max_zoom = 0;
  for (int i = 0; i < n; ++i) {
    const Matrix m = engine::datasets::transform_for(config, 150, 150, 2024, 0, i);
    CHECK(m[3] == 0.0f);  // the shear is vertical: source columns never depend on rows
    const bool flip = m[4] < 0;
    const double zx = m[0], zy = std::hypot(double{m[1]}, double{m[4]});
    const double shear = std::atan(-double{m[1]} / m[4]);
    flips += flip;
    CHECK(std::abs(shear) <= 0.2 + tol);
    CHECK(zx >= 0.8 - tol);
    CHECK(zx <= 1.2 + tol);
    CHECK(zy >= 0.8 - tol);
    CHECK(zy <= 1.2 + tol);
    sum_shear += shear;
    sum_zx += zx;
    sum_zy += zy;
    sum_zxzy += zx * zy;
    sum_zx2 += zx * zx;
    sum_zy2 += zy * zy;
    min_shear = std::min(min_shear, shear);
    max_shear = std::max(max_shear, shear);
    min_zoom = std::min({min_zoom, zx, zy});
    max_zoom = std::max({max_zoom, zx, zy});
  }
  // Flip: binomial(10,000, 1/2), standard deviation 50; 5 sigma = 250.
  CHECK(std::abs(flips - n / 2) < 250);
  // Uniform on [-0.2, 0.2]: sd 0.2/sqrt(3) = 0.115, of the mean 0.00115; 5 sigma ~ 0.006.
  CHECK(std::abs(sum_shear / n) < 0.006);
  CHECK(std::abs(sum_zx / n - 1.0) < 0.006);
  CHECK(std::abs(sum_zy / n - 1.0) < 0.006);
  // The whole range is used: 10,000 uniform draws come within 0.001 of each end.
  CHECK(min_shear < -0.199);
  CHECK(max_shear > 0.199);
  CHECK(min_zoom < 0.801);
  CHECK(max_zoom > 1.199);
  // zx and zy are independent: correlation ~ N(0, 1/sqrt(n) = 0.01); 5 sigma = 0.05.
  const double cov = sum_zxzy / n - (sum_zx / n) * (sum_zy / n);
  const double var_x = sum_zx2 / n - (sum_zx / n) * (sum_zx / n);
  const double var_y = sum_zy2 / n - (sum_zy / n) * (sum_zy / n);
  CHECK(std::abs(cov / std::sqrt(var_x * var_y)) < 0.05);
}

TEST_CASE("draw_augment_params: zero ranges and no flip give the identity") {
  AugmentConfig none;
  none.shear_range = 0;
  none.zoom_range = 0;
  none.horizontal_flip = false;
  Generator rng(5);
  for (int i = 0; i < 100; ++i) {
    const Matrix m = engine::datasets::random_transform(none, 150, 150, rng);
    CHECK(m == engine::datasets::identity_transform());
  }
  // Four numbers per draw, whatever the config.
  CHECK(rng.offset() == 100 * engine::datasets::AUGMENT_DRAWS);
  // Flips only: half of them mirror.
  AugmentConfig flips_only = none;
  flips_only.horizontal_flip = true;
  int flips = 0;
  for (int i = 0; i < 1000; ++i) {
    flips += engine::datasets::draw_augment_params(flips_only, rng).flip;
  }
  CHECK(std::abs(flips - 500) < 80);  // binomial sd 15.8: 5 sigma
}

TEST_CASE("cpu::augment_images equals augment_image on each image") {
  const int count = 5, height = 9, width = 11, channels = 3;
  const size_t image_bytes = static_cast<size_t>(height * width * channels);
  const std::vector<uint8_t> bytes = random_bytes(count * image_bytes, 6);
  std::vector<int64_t> samples = {0, 1, 2, 3, 4};
  AugmentConfig wild;  // large enough that many pixels fall outside
  wild.shear_range = 1.0f;
  wild.zoom_range = 0.9f;
  const std::vector<float> m =
      engine::datasets::transforms_for_batch(wild, height, width, 7, 0, samples);
  Tensor images = Tensor::from_bytes(bytes, {count, height, width, channels});
  Tensor transforms = Tensor::from_vector(m, {count, 6});
  Tensor out = Tensor::full({count, height, width, channels}, NaN);
  engine::cpu::augment_images(images, transforms, out, RESCALE);
  const std::vector<float> got = out.to_vector();
  std::vector<float> expect(image_bytes);
  for (size_t n = 0; n < static_cast<size_t>(count); ++n) {
    engine::augment_image(bytes.data() + n * image_bytes, height, width, channels,
                               m.data() + n * 6, RESCALE, expect.data());
    for (size_t i = 0; i < image_bytes; ++i) CHECK(got[n * image_bytes + i] == expect[i]);
  }
  // An empty batch is fine.
  Tensor none = Tensor::empty({0, height, width, channels}, DType::U8);
  Tensor none_out = Tensor::empty({0, height, width, channels});
  engine::cpu::augment_images(none, Tensor::empty({0, 6}), none_out, RESCALE);
}

TEST_CASE("augment_images: bad shapes and dtypes raise engine::Error") {
  Tensor images = Tensor::zeros({2, 4, 5, 3}, DType::U8);
  Tensor transforms = Tensor::zeros({2, 6});
  Tensor out = Tensor::zeros({2, 4, 5, 3});
  raw::augment_images(images, transforms, out, 1.0f);  // the good call
  Tensor float_images = Tensor::zeros({2, 4, 5, 3});
  CHECK_THROWS_AS(raw::augment_images(float_images, transforms, out, 1.0f), engine::Error);
  Tensor flat = Tensor::zeros({2, 60}, DType::U8);
  CHECK_THROWS_AS(raw::augment_images(flat, transforms, out, 1.0f), engine::Error);
  Tensor five = Tensor::zeros({2, 5});
  CHECK_THROWS_AS(raw::augment_images(images, five, out, 1.0f), engine::Error);
  Tensor three = Tensor::zeros({3, 6});
  CHECK_THROWS_AS(raw::augment_images(images, three, out, 1.0f), engine::Error);
  Tensor flat_transforms = Tensor::zeros({12});
  CHECK_THROWS_AS(raw::augment_images(images, flat_transforms, out, 1.0f), engine::Error);
  Tensor int_transforms = Tensor::zeros({2, 6}, DType::I32);
  CHECK_THROWS_AS(raw::augment_images(images, int_transforms, out, 1.0f), engine::Error);
  Tensor small_out = Tensor::zeros({2, 4, 4, 3});
  CHECK_THROWS_AS(raw::augment_images(images, transforms, small_out, 1.0f), engine::Error);
  Tensor byte_out = Tensor::zeros({2, 4, 5, 3}, DType::U8);
  CHECK_THROWS_AS(raw::augment_images(images, transforms, byte_out, 1.0f), engine::Error);
  Tensor undefined;
  CHECK_THROWS_AS(raw::augment_images(images, undefined, out, 1.0f), engine::Error);
}
