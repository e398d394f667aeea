// JPEG decoding (datasets/jpeg_image.h) and the Keras image-folder reader
// (datasets/image_folder.h), on JPEGs the tests write themselves with libjpeg's compressor:
// colours, gray and CMYK files, bilinear resizing, DCT scaling of a huge image, and every bad
// file we could think of (truncated, empty, renamed PNG, text), each of which must give one
// ImageError line naming the file, never a crash or a half-grey image. Then the prefetching
// loader over such a folder (datasets/image_batches.h), on the CPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <vector>

// After <cstdio>: jpeglib.h uses FILE without including it.
#include <jpeglib.h>
#include <sys/resource.h>

#include "core/device_jpeg.h"
#include "core/error.h"
#include "datasets/image_batches.h"
#include "datasets/image_folder.h"
#include "datasets/jpeg_image.h"
#include "file_fixtures.h"

namespace fs = std::filesystem;
using engine::datasets::decode_folder;
using engine::datasets::decode_jpeg;
using engine::datasets::decode_jpeg_file;
using engine::datasets::describe_skipped;
using engine::datasets::ImageError;
using engine::datasets::ImageFolder;
using engine::datasets::ImageFormat;
using engine::datasets::JpegDecodeInfo;
using engine::datasets::scan_image_folder;
using engine::datasets::sniff_image_format;
using engine::test::Bytes;
using engine::test::check_message;
using engine::test::error_of;
using engine::test::TempDir;
using engine::test::write_bytes;

namespace {

// ---- writing JPEGs with libjpeg ----------------------------------------------------------

struct JpegSpec {
  int height = 16, width = 16;
  J_COLOR_SPACE input = JCS_RGB;       // the pixels given: JCS_RGB, JCS_GRAYSCALE or JCS_CMYK
  J_COLOR_SPACE stored = JCS_UNKNOWN;  // what the file stores; JCS_UNKNOWN: libjpeg's default
  int quality = 95;
  bool full_chroma = true;   // no colour subsampling (4:4:4): exact colour edges
  bool adobe_marker = true;  // for CMYK: libjpeg writes Adobe's APP14 by default
  bool progressive = false;  // several scans, coarse to fine (as web images often are)
};

int components_of(J_COLOR_SPACE space) {
  return space == JCS_GRAYSCALE ? 1 : space == JCS_CMYK ? 4 : 3;
}

// Compresses the image whose row y fill_row(y, row) writes (components_of(spec.input) bytes a
// pixel). libjpeg's default error handler stays: a failure here is a bug in the test, and it
// prints libjpeg's message and exits.
Bytes encode_jpeg(const JpegSpec& spec, const std::function<void(int, uint8_t*)>& fill_row) {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr errors{};
  cinfo.err = jpeg_std_error(&errors);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(spec.width);
  cinfo.image_height = static_cast<JDIMENSION>(spec.height);
  cinfo.input_components = components_of(spec.input);
  cinfo.in_color_space = spec.input;
  jpeg_set_defaults(&cinfo);
  if (spec.stored != JCS_UNKNOWN) jpeg_set_colorspace(&cinfo, spec.stored);
  if (!spec.adobe_marker) cinfo.write_Adobe_marker = FALSE;
  jpeg_set_quality(&cinfo, spec.quality, TRUE);
  if (spec.progressive) jpeg_simple_progression(&cinfo);
  if (spec.full_chroma) {
    for (int c = 0; c < cinfo.num_components; ++c) {
      cinfo.comp_info[c].h_samp_factor = 1;
      cinfo.comp_info[c].v_samp_factor = 1;
    }
  }
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<uint8_t> row(static_cast<size_t>(spec.width * cinfo.input_components));
  while (cinfo.next_scanline < cinfo.image_height) {
    fill_row(static_cast<int>(cinfo.next_scanline), row.data());
    JSAMPROW rows[1] = {row.data()};
    jpeg_write_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  Bytes jpeg(buffer, buffer + size);
  std::free(buffer);
  return jpeg;
}

// An RGB image filled by colour(y, x) -> {r, g, b}.
Bytes encode_rgb(int height, int width, const std::function<std::array<int, 3>(int, int)>& colour,
                 int quality = 95) {
  JpegSpec spec;
  spec.height = height;
  spec.width = width;
  spec.quality = quality;
  return encode_jpeg(spec, [&](int y, uint8_t* row) {
    for (int x = 0; x < width; ++x) {
      const std::array<int, 3> c = colour(y, x);
      for (int k = 0; k < 3; ++k) row[3 * x + k] = static_cast<uint8_t>(c[static_cast<size_t>(k)]);
    }
  });
}

Bytes solid_rgb(int height, int width, std::array<int, 3> colour) {
  return encode_rgb(height, width, [&](int, int) { return colour; });
}

// ---- decoding ------------------------------------------------------------------------------

Bytes decode(const Bytes& jpeg, int height, int width, JpegDecodeInfo* info = nullptr) {
  Bytes out(static_cast<size_t>(height * width * 3));
  const JpegDecodeInfo got =
      decode_jpeg(jpeg.data(), jpeg.size(), "test.jpg", height, width, out.data());
  if (info) *info = got;
  return out;
}

// The largest difference between the RGB pixels of `image` (height x width) inside the
// rectangle [y0, y1) x [x0, x1) and `expected`.
int max_error(const Bytes& image, int width, int y0, int y1, int x0, int x1,
              std::array<int, 3> expected) {
  int worst = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x)
      for (int c = 0; c < 3; ++c)
        worst = std::max(worst, std::abs(image[static_cast<size_t>((y * width + x) * 3 + c)] -
                                         expected[static_cast<size_t>(c)]));
  return worst;
}

// Runs f, which must throw ImageError (not just any engine::Error), and returns the message.
template <typename F>
std::string image_error_of(F&& f) {
  try {
    f();
  } catch (const ImageError& e) {
    return e.what();
  }
  return "<no ImageError was thrown>";
}

std::string file_error(const std::string& path) {
  Bytes out(8 * 8 * 3);
  return image_error_of([&] { decode_jpeg_file(path, 8, 8, out.data()); });
}

Bytes text_bytes(const std::string& text) { return Bytes(text.begin(), text.end()); }

// The offset of the first marker FF <code> in `jpeg`, 0 when there is none.
size_t find_marker(const Bytes& jpeg, uint8_t code) {
  for (size_t i = 0; i + 1 < jpeg.size(); ++i)
    if (jpeg[i] == 0xFF && jpeg[i + 1] == code) return i;
  return 0;
}

// Makes the frame header (SOFn: FF Cn, length, precision, height, width) claim another size.
void set_frame_size(Bytes& jpeg, uint8_t sof_code, int height, int width) {
  const size_t sof = find_marker(jpeg, sof_code);
  REQUIRE(sof > 0);
  jpeg[sof + 5] = static_cast<uint8_t>(height >> 8);  // big-endian
  jpeg[sof + 6] = static_cast<uint8_t>(height & 0xFF);
  jpeg[sof + 7] = static_cast<uint8_t>(width >> 8);
  jpeg[sof + 8] = static_cast<uint8_t>(width & 0xFF);
}

// A 64 x 64 photo-like JPEG: noise, so the scan data is most of the file.
Bytes noisy_jpeg() {
  return encode_rgb(64, 64, [](int y, int x) {
    const int v = (y * 7919 + x * 104729 + y * x * 31) % 251;
    return std::array<int, 3>{v, (v * 3) % 256, (v * 7) % 256};
  });
}

}  // namespace

// ---- decoding good files -----------------------------------------------------------------

TEST_CASE("JPEG: an RGB image decodes to its colours, rows top to bottom, columns left to right") {
  // Four 16 x 16 quadrants: every 8 x 8 block is flat, so JPEG keeps the colours to a few units.
  const std::array<int, 3> tl{220, 30, 40}, tr{30, 200, 60}, bl{40, 50, 210}, br{250, 250, 250};
  const Bytes jpeg = encode_rgb(
      32, 32, [&](int y, int x) { return y < 16 ? (x < 16 ? tl : tr) : (x < 16 ? bl : br); });
  JpegDecodeInfo info;
  const Bytes image = decode(jpeg, 32, 32, &info);
  CHECK(info.image_height == 32);
  CHECK(info.image_width == 32);
  CHECK(info.components == 3);
  CHECK(info.scale_denominator == 1);
  // Tolerance 4: the RGB -> YCbCr -> RGB round trip and the quantised DC terms.
  CHECK(max_error(image, 32, 0, 16, 0, 16, tl) <= 4);
  CHECK(max_error(image, 32, 0, 16, 16, 32, tr) <= 4);
  CHECK(max_error(image, 32, 16, 32, 0, 16, bl) <= 4);
  CHECK(max_error(image, 32, 16, 32, 16, 32, br) <= 4);
}

TEST_CASE("resize_bilinear: exact values with pixel centres aligned") {
  using engine::datasets::resize_bilinear;
  // Up 2 -> 4: samples at -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
  const Bytes row = {0, 100};
  Bytes up(4);
  resize_bilinear(row.data(), 1, 2, 1, up.data(), 1, 4);
  CHECK(up == Bytes{0, 25, 75, 100});
  // Down 4 -> 2: samples at 0.5 and 2.5, the means of the pairs (not the first of each pair,
  // as a sampler without the half-pixel offset gives).
  const Bytes four = {0, 40, 80, 120};
  Bytes down(2);
  resize_bilinear(four.data(), 1, 4, 1, down.data(), 1, 2);
  CHECK(down == Bytes{20, 100});
  // Vertically, with 2 channels kept apart: a column of 2 -> 4.
  const Bytes column = {0, 200, 200, 0};  // (y0: 0, 200), (y1: 200, 0)
  Bytes tall(8);
  resize_bilinear(column.data(), 2, 1, 2, tall.data(), 4, 1);
  CHECK(tall == Bytes{0, 200, 50, 150, 150, 50, 200, 0});
  // Same size: a copy. 1 x 1 -> 3 x 2: the pixel everywhere.
  Bytes same(4);
  resize_bilinear(four.data(), 2, 2, 1, same.data(), 2, 2);
  CHECK(same == four);
  const Bytes dot = {7, 8, 9};
  Bytes spread(18);
  resize_bilinear(dot.data(), 1, 1, 3, spread.data(), 3, 2);
  for (size_t i = 0; i < spread.size(); ++i) CHECK(spread[i] == dot[i % 3]);
}

TEST_CASE("resize_bilinear: within one unit of the exact bilinear value, at any scale") {
  using engine::datasets::resize_bilinear;
  std::mt19937 rng(11);
  struct Case {
    int source_height, source_width, channels, height, width;
  };
  // The loader's shapes (DCT-scaled photos to 150 x 150), odd ones, up and down.
  for (const Case c : {Case{188, 250, 3, 150, 150}, Case{151, 300, 3, 150, 150},
                       Case{37, 53, 1, 150, 150}, Case{5, 3, 3, 17, 29}, Case{64, 64, 2, 7, 9}}) {
    INFO(c.source_height << "x" << c.source_width << "x" << c.channels << " -> " << c.height
                         << "x" << c.width);
    Bytes source(static_cast<size_t>(c.source_height * c.source_width * c.channels));
    for (uint8_t& b : source) b = static_cast<uint8_t>(rng() % 256);
    Bytes out(static_cast<size_t>(c.height * c.width * c.channels));
    resize_bilinear(source.data(), c.source_height, c.source_width, c.channels, out.data(),
                    c.height, c.width);
    const auto at = [&](int y, int x, int ch) {
      const auto i = static_cast<size_t>((y * c.source_width + x) * c.channels + ch);
      return static_cast<double>(source[i]);
    };
    double worst = 0.0;
    for (int y = 0; y < c.height; ++y) {
      const double sy =
          std::clamp((y + 0.5) * c.source_height / c.height - 0.5, 0.0, c.source_height - 1.0);
      const int y0 = static_cast<int>(sy), y1 = std::min(y0 + 1, c.source_height - 1);
      for (int x = 0; x < c.width; ++x) {
        const double sx =
            std::clamp((x + 0.5) * c.source_width / c.width - 0.5, 0.0, c.source_width - 1.0);
        const int x0 = static_cast<int>(sx), x1 = std::min(x0 + 1, c.source_width - 1);
        for (int ch = 0; ch < c.channels; ++ch) {
          const double top = at(y0, x0, ch) + (sx - x0) * (at(y0, x1, ch) - at(y0, x0, ch));
          const double bottom = at(y1, x0, ch) + (sx - x0) * (at(y1, x1, ch) - at(y1, x0, ch));
          const double exact = top + (sy - y0) * (bottom - top);
          const uint8_t got = out[static_cast<size_t>((y * c.width + x) * c.channels + ch)];
          worst = std::max(worst, std::abs(got - exact));
        }
      }
    }
    CHECK(worst < 1.0);
  }
}

TEST_CASE("JPEG: resizing a gradient down and up is bilinear with pixel centres aligned") {
  // R rises 4 per column, G 8 per row: bilinear resizing keeps a linear ramp linear, so every
  // output pixel must equal the ramp at the source point it samples.
  constexpr int H = 32, W = 64;
  const Bytes jpeg = encode_rgb(
      H, W,
      [](int y, int x) {
        return std::array<int, 3>{4 * x, 8 * y, 100};
      },
      100);
  struct Case {
    int height, width, scale;
  };
  // Same size; down by 4 (all of it by DCT scaling); down by 2.67 and 3.2 (DCT 1/2, then
  // bilinear); up by 1.5 and 1.56 (bilinear only).
  for (const Case c : {Case{32, 64, 1}, Case{8, 16, 4}, Case{12, 20, 2}, Case{48, 100, 1}}) {
    INFO("decoding to " << c.height << "x" << c.width);
    JpegDecodeInfo info;
    const Bytes image = decode(jpeg, c.height, c.width, &info);
    CHECK(info.scale_denominator == c.scale);
    int worst = 0;
    for (int y = 0; y < c.height; ++y) {
      for (int x = 0; x < c.width; ++x) {
        const double sx = std::clamp((x + 0.5) * W / c.width - 0.5, 0.0, W - 1.0);
        const double sy = std::clamp((y + 0.5) * H / c.height - 0.5, 0.0, H - 1.0);
        const uint8_t* p = &image[static_cast<size_t>((y * c.width + x) * 3)];
        worst = std::max(worst, static_cast<int>(std::lround(std::abs(p[0] - 4 * sx))));
        worst = std::max(worst, static_cast<int>(std::lround(std::abs(p[1] - 8 * sy))));
        worst = std::max(worst, std::abs(p[2] - 100));
      }
    }
    // Quality 100 and 4:4:4 lose ~1 unit; the colour conversion and rounding ~1 more. A
    // sampler off by half a source pixel misses G by 4 and more.
    CHECK(worst <= 3);
  }
}

TEST_CASE("JPEG: a grayscale file decodes to R = G = B") {
  JpegSpec spec;
  spec.input = JCS_GRAYSCALE;
  const Bytes jpeg = encode_jpeg(spec, [](int y, uint8_t* row) {
    for (int x = 0; x < 16; ++x) row[x] = static_cast<uint8_t>(y < 8 ? 30 : 220);
  });
  JpegDecodeInfo info;
  const Bytes image = decode(jpeg, 16, 16, &info);
  CHECK(info.components == 1);
  int unequal = 0;
  for (size_t p = 0; p < image.size(); p += 3)
    if (image[p] != image[p + 1] || image[p] != image[p + 2]) ++unequal;
  CHECK(unequal == 0);
  CHECK(max_error(image, 16, 0, 8, 0, 16, {30, 30, 30}) <= 2);
  CHECK(max_error(image, 16, 8, 16, 0, 16, {220, 220, 220}) <= 2);
}

TEST_CASE("JPEG: CMYK and YCCK files decode to RGB, Adobe-inverted or not") {
  // Inks C, M, Y, K (0 = none): R = (255 - C)(255 - K) / 255 etc. = (173, 131, 46). Reading
  // Adobe's inverted bytes as plain ink would give (8, 25, 59) instead.
  const int ink[4] = {50, 100, 200, 40};
  const std::array<int, 3> expected{173, 131, 46};
  struct Case {
    const char* name;
    J_COLOR_SPACE stored;
    bool adobe;  // the Adobe marker, and then the bytes stored inverted (255 - ink)
  };
  for (const Case c : {Case{"Adobe CMYK", JCS_CMYK, true}, Case{"Adobe YCCK", JCS_YCCK, true},
                       Case{"plain CMYK, no Adobe marker", JCS_CMYK, false}}) {
    INFO(c.name);
    JpegSpec spec;
    spec.input = JCS_CMYK;
    spec.stored = c.stored;
    spec.adobe_marker = c.adobe;
    const Bytes jpeg = encode_jpeg(spec, [&](int, uint8_t* row) {
      for (int x = 0; x < 16; ++x)
        for (int k = 0; k < 4; ++k)
          row[4 * x + k] = static_cast<uint8_t>(c.adobe ? 255 - ink[k] : ink[k]);
    });
    JpegDecodeInfo info;
    const Bytes image = decode(jpeg, 16, 16, &info);
    CHECK(info.components == 4);
    CHECK(info.adobe_inverted == c.adobe);
    CHECK(max_error(image, 16, 0, 16, 0, 16, expected) <= 4);
  }
}

TEST_CASE("JPEG: a 1x1 image decodes and is upscaled to the requested size") {
  const Bytes jpeg = solid_rgb(1, 1, {200, 100, 50});
  JpegDecodeInfo info;
  const Bytes image = decode(jpeg, 5, 7, &info);
  CHECK(info.image_height == 1);
  CHECK(info.image_width == 1);
  CHECK(info.decoded_height == 1);
  CHECK(max_error(image, 7, 0, 5, 0, 7, {200, 100, 50}) <= 4);
}

TEST_CASE("JPEG: a 10000x10000 image decodes through DCT scaling at 1/8, quickly") {
  // Left half dark, right half light; every row the same. Quality 30: the test is the decoder,
  // not the encoder, and the file stays small (~1 MB).
  constexpr int SIDE = 10000;
  JpegSpec spec;
  spec.height = spec.width = SIDE;
  spec.quality = 30;
  spec.full_chroma = false;
  std::vector<uint8_t> pattern(SIDE * 3);
  for (int x = 0; x < SIDE; ++x) {
    const std::array<int, 3> c =
        x < SIDE / 2 ? std::array<int, 3>{30, 60, 90} : std::array<int, 3>{200, 180, 160};
    for (int k = 0; k < 3; ++k)
      pattern[static_cast<size_t>(3 * x + k)] = static_cast<uint8_t>(c[static_cast<size_t>(k)]);
  }
  // The process's peak memory so far (Linux: kB).
  auto peak_kb = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<int64_t>(usage.ru_maxrss);
  };
  const auto t0 = std::chrono::steady_clock::now();
  const Bytes jpeg =
      encode_jpeg(spec, [&](int, uint8_t* row) { std::copy(pattern.begin(), pattern.end(), row); });
  const auto t1 = std::chrono::steady_clock::now();
  const int64_t peak_before = peak_kb();
  JpegDecodeInfo info;
  const Bytes image = decode(jpeg, 150, 150, &info);
  const auto t2 = std::chrono::steady_clock::now();
  // The full-size RGB image would take 300 MB; at 1/8 it is 4.7 MB.
  CHECK(peak_kb() - peak_before < 64 * 1024);
  MESSAGE("10000x10000 JPEG of " << jpeg.size() << " bytes: encoded in "
                                 << std::chrono::duration<double>(t1 - t0).count()
                                 << " s, decoded to 150x150 in "
                                 << std::chrono::duration<double>(t2 - t1).count() << " s");
  // Decoded at 1250 x 1250 (4.7 MB as RGB), never at the full 300 MB.
  CHECK(info.scale_denominator == 8);
  CHECK(info.decoded_height == 1250);
  CHECK(info.decoded_width == 1250);
  CHECK(max_error(image, 150, 0, 150, 0, 73, {30, 60, 90}) <= 6);
  CHECK(max_error(image, 150, 0, 150, 77, 150, {200, 180, 160}) <= 6);
}

TEST_CASE("JPEG: choose_dct_scale takes the smallest scale still at least the target") {
  using engine::datasets::choose_dct_scale;
  CHECK(choose_dct_scale(10000, 10000, 150, 150) == 8);  // 1250 >= 150
  CHECK(choose_dct_scale(375, 500, 150, 150) == 2);      // 188 x 250; 1/4 would be 94 x 125
  CHECK(choose_dct_scale(300, 300, 150, 150) == 2);      // exactly 150
  CHECK(choose_dct_scale(299, 299, 150, 150) == 2);      // ceil(299 / 2) = 150
  CHECK(choose_dct_scale(298, 298, 150, 150) == 1);      // 149 < 150
  CHECK(choose_dct_scale(1200, 150, 150, 150) == 1);     // one side already at the target
  CHECK(choose_dct_scale(1, 1, 150, 150) == 1);
}

TEST_CASE("JPEG: an image too large even at 1/8 scale is refused before decoding") {
  // A small baseline file (frame header SOF0, FF C0) made to claim 65000 x 65000: at 1/8 that
  // is 8125 x 8125 = 66 million pixels, above the limit.
  Bytes jpeg = solid_rgb(16, 16, {1, 2, 3});
  set_frame_size(jpeg, 0xC0, 65000, 65000);
  Bytes out(150 * 150 * 3);
  const std::string message = image_error_of(
      [&] { decode_jpeg(jpeg.data(), jpeg.size(), "huge.jpg", 150, 150, out.data()); });
  check_message(message, {"huge.jpg", "65000x65000", "8125x8125", "limit"});
}

// ---- bad files -----------------------------------------------------------------------------

TEST_CASE("JPEG: a truncated file is an error naming the file, never a half-grey image") {
  TempDir dir;
  const Bytes good = noisy_jpeg();
  REQUIRE(good.size() > 2000);

  const std::string half = dir.file("half.jpg");  // the first half: headers and half the scan
  write_bytes(half,
              Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2)));
  check_message(file_error(half), {half, "Premature end of JPEG file"});

  // All pixels there, only the end-of-image marker (FF D9) missing: still refused.
  const std::string no_end = dir.file("no_end.jpg");
  write_bytes(no_end, Bytes(good.begin(), good.end() - 2));
  check_message(file_error(no_end), {no_end, "Premature end of JPEG file"});

  // Only the first bytes: not even a whole header.
  const std::string stub = dir.file("stub.jpg");
  write_bytes(stub, Bytes(good.begin(), good.begin() + 20));
  check_message(file_error(stub), {stub, "bad JPEG data"});

  // The complete file decodes.
  const std::string whole = dir.file("whole.jpg");
  write_bytes(whole, good);
  Bytes out(8 * 8 * 3);
  CHECK_NOTHROW(decode_jpeg_file(whole, 8, 8, out.data()));
}

TEST_CASE("JPEG: a marker in the middle of the scan (corrupt data) is an error, not a warning") {
  TempDir dir;
  Bytes jpeg = noisy_jpeg();
  const size_t middle = jpeg.size() / 2;
  jpeg[middle] = 0xFF;  // an end-of-image marker where entropy-coded data should be
  jpeg[middle + 1] = 0xD9;
  const std::string path = dir.file("corrupt.jpg");
  write_bytes(path, jpeg);
  check_message(file_error(path), {path, "Corrupt JPEG data"});
}

TEST_CASE("JPEG: junk between the last row and the end marker is refused too") {
  // libjpeg notices it only in jpeg_finish_decompress, after every row was read: that call must
  // be made, and its warning counted. (Pixels are whole in this case, but the file is damaged:
  // decoders that hide such warnings also hide the truncated ones.)
  TempDir dir;
  Bytes jpeg = noisy_jpeg();
  jpeg.insert(jpeg.end() - 2, 100, uint8_t{0x55});
  const std::string path = dir.file("junk.jpg");
  write_bytes(path, jpeg);
  check_message(file_error(path), {path, "extraneous bytes before marker 0xd9"});
}

TEST_CASE("JPEG: progressive files decode, scaled; one too big for the decoder's memory is not") {
  const std::array<int, 3> tl{220, 30, 40}, tr{30, 200, 60}, bl{40, 50, 210}, br{250, 250, 250};
  JpegSpec spec;
  spec.height = spec.width = 64;
  spec.progressive = true;
  Bytes jpeg = encode_jpeg(spec, [&](int y, uint8_t* row) {
    for (int x = 0; x < 64; ++x) {
      const std::array<int, 3> c = y < 32 ? (x < 32 ? tl : tr) : (x < 32 ? bl : br);
      for (size_t k = 0; k < 3; ++k) row[3 * x + static_cast<int>(k)] = static_cast<uint8_t>(c[k]);
    }
  });
  REQUIRE(find_marker(jpeg, 0xC2) > 0);  // SOF2: progressive
  JpegDecodeInfo info;
  const Bytes image = decode(jpeg, 16, 16, &info);
  CHECK(info.scale_denominator == 4);
  // Each quadrant is 8 x 8 now; leave out the pixel next to each border.
  CHECK(max_error(image, 16, 0, 7, 0, 7, tl) <= 4);
  CHECK(max_error(image, 16, 0, 7, 9, 16, tr) <= 4);
  CHECK(max_error(image, 16, 9, 16, 0, 7, bl) <= 4);
  CHECK(max_error(image, 16, 9, 16, 9, 16, br) <= 4);

  // Claiming 12000 x 12000: 1500 x 1500 at 1/8 is allowed, but a progressive decoder would
  // keep 12000 x 12000 x 3 coefficients of 2 bytes (864 MB): refused before allocating them.
  set_frame_size(jpeg, 0xC2, 12000, 12000);
  Bytes out(16 * 16 * 3);
  const std::string message = image_error_of(
      [&] { decode_jpeg(jpeg.data(), jpeg.size(), "progressive.jpg", 16, 16, out.data()); });
  check_message(message, {"progressive.jpg", "12000x12000", "256 MB", "progressive"});
}

TEST_CASE("JPEG: harmless header oddities are accepted") {
  // A JFIF version 2.1 (unknown to libjpeg) and a sequential scan header whose spectral end is
  // 0 instead of 63 (zeros there occur in real baseline files; a sequential decoder ignores
  // them): libjpeg warns about both, and the pixels are whole.
  Bytes jpeg = solid_rgb(16, 16, {200, 100, 50});
  const size_t app0 = find_marker(jpeg, 0xE0);  // FF E0, length (2), "JFIF\0", major, minor
  const size_t sos = find_marker(jpeg, 0xDA);   // FF DA, length (2), Ns, Ns x 2, Ss, Se, AhAl
  REQUIRE(app0 > 0);
  REQUIRE(sos > 0);
  REQUIRE(jpeg[app0 + 9] == 1);
  jpeg[app0 + 9] = 2;
  const size_t se = sos + 5 + 2 * jpeg[sos + 4] + 1;
  REQUIRE(jpeg[se] == 63);
  jpeg[se] = 0;
  const Bytes image = decode(jpeg, 16, 16);
  CHECK(max_error(image, 16, 0, 16, 0, 16, {200, 100, 50}) <= 4);
}

TEST_CASE("JPEG: files that are not JPEGs say what they are") {
  TempDir dir;
  const std::string text = dir.file("text.jpg");
  write_bytes(text, text_bytes("hello, I am not an image\n"));
  check_message(file_error(text), {text, "not a JPEG", "starts with 68 65 6c 6c", "\"hello, I\""});

  const std::string png = dir.file("png.jpg");
  Bytes png_bytes = text_bytes("\x89PNG\r\n\x1a\n");
  png_bytes.resize(64, 0);
  write_bytes(png, png_bytes);
  check_message(file_error(png), {png, "a PNG file, not a JPEG"});

  const std::string gif = dir.file("gif.jpeg");
  write_bytes(gif, text_bytes("GIF89a"));
  check_message(file_error(gif), {gif, "a GIF file, not a JPEG"});

  const std::string empty = dir.file("empty.jpg");
  write_bytes(empty, {});
  check_message(file_error(empty), {empty, "empty file (0 bytes)"});

  const std::string missing = dir.file("missing.jpg");
  check_message(file_error(missing), {missing, "no such file"});

  check_message(file_error(dir.str()), {dir.str(), "a directory"});
}

TEST_CASE("JPEG: sniff_image_format reads the magic numbers") {
  auto sniff = [](const std::string& bytes) {
    return sniff_image_format(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  };
  CHECK(sniff("") == ImageFormat::Empty);
  CHECK(sniff("\xff\xd8\xff\xe0") == ImageFormat::Jpeg);
  CHECK(sniff("\x89PNG\r\n\x1a\n") == ImageFormat::Png);
  CHECK(sniff("GIF87a") == ImageFormat::Gif);
  CHECK(sniff("BM6\x0c") == ImageFormat::Bmp);
  CHECK(sniff(std::string("RIFF\0\0\0\0WEBPVP8 ", 16)) == ImageFormat::Webp);
  CHECK(sniff(std::string("II*\0", 4)) == ImageFormat::Tiff);
  CHECK(sniff("<!DOCTYPE html>") == ImageFormat::Unknown);
  CHECK(sniff("\xff") == ImageFormat::Unknown);  // one byte of a JPEG is not a JPEG yet
}

TEST_CASE("JPEG: a bad target size is the caller's error, not the file's") {
  const Bytes jpeg = solid_rgb(8, 8, {1, 2, 3});
  Bytes out(16);
  const std::string message = engine::test::error_of(
      [&] { decode_jpeg(jpeg.data(), jpeg.size(), "x.jpg", 0, 8, out.data()); });
  check_message(message, {"target size", "0x8"});
  bool image_error = false;  // decode_folder would skip every file for an ImageError
  try {
    decode_jpeg(jpeg.data(), jpeg.size(), "x.jpg", 0, 8, out.data());
  } catch (const ImageError&) {
    image_error = true;
  } catch (const engine::Error&) {
  }
  CHECK_FALSE(image_error);
}

// ---- the folder layout -------------------------------------------------------------------

namespace {

// Creates `path` (and its folders) holding `bytes`.
void put(const TempDir& dir, const std::string& path, const Bytes& bytes = {}) {
  fs::create_directories(fs::path(dir.file(path)).parent_path());
  write_bytes(dir.file(path), bytes);
}

std::string sub(const TempDir& dir, const std::string& path) {
  return (fs::path(dir.str()) / path).string();
}

}  // namespace

TEST_CASE("image folder: classes sorted, files sorted, labels, strays skipped with a reason") {
  TempDir dir;
  // Scanning reads names only, so the files need not be JPEGs here.
  put(dir, "dogs/d2.jpg");
  put(dir, "dogs/d1.JPG");
  put(dir, "dogs/notes.txt");
  put(dir, "dogs/.DS_Store");    // hidden: silently ignored
  put(dir, "dogs/more/d3.jpg");  // in a sub-sub-folder: ignored
  put(dir, "cats/c1.jpeg");
  put(dir, "cats/c0.jpg");
  put(dir, "README.md");                                   // a file beside the classes: not a class
  fs::create_directories(dir.file(".ipynb_checkpoints"));  // hidden: not a class
  const ImageFolder folder = scan_image_folder(dir.str());
  CHECK(folder.root == dir.str());
  CHECK(folder.classes == std::vector<std::string>{"cats", "dogs"});
  CHECK(folder.paths == std::vector<std::string>{sub(dir, "cats/c0.jpg"), sub(dir, "cats/c1.jpeg"),
                                                 sub(dir, "dogs/d1.JPG"), sub(dir, "dogs/d2.jpg")});
  CHECK(folder.labels == std::vector<int32_t>{0, 0, 1, 1});
  CHECK(folder.size() == 4);
  REQUIRE(folder.skipped.size() == 1);
  CHECK(folder.skipped[0].path == sub(dir, "dogs/notes.txt"));
  CHECK(folder.skipped[0].reason == "not a .jpg/.jpeg file");

  const std::string summary = describe_skipped(folder);
  CHECK(summary.find("1 of 5 files in " + dir.str() + " left out:") == 0);
  CHECK(summary.find(sub(dir, "dogs/notes.txt") + ": not a .jpg/.jpeg file") != std::string::npos);
  // The training classes, given back for the validation folder: accepted.
  CHECK(scan_image_folder(dir.str(), {"cats", "dogs"}).size() == 4);
}

TEST_CASE("image folder: describe_skipped shows at most max_lines files, then a count") {
  ImageFolder folder;
  folder.root = "data/train";
  folder.paths = {"data/train/cats/a.jpg"};
  for (int i = 0; i < 12; ++i)
    folder.skipped.push_back(
        {"data/train/cats/" + std::to_string(i) + ".txt", "not a .jpg/.jpeg file"});
  const std::string summary = describe_skipped(folder, 10);
  CHECK(summary.find("12 of 13 files in data/train left out:") == 0);
  CHECK(summary.find("data/train/cats/9.txt: not a .jpg/.jpeg file") != std::string::npos);
  CHECK(summary.find("10.txt") == std::string::npos);
  CHECK(summary.find("... and 2 more") != std::string::npos);
  CHECK(std::count(summary.begin(), summary.end(), '\n') == 11);  // count, 10 files, "more"
  CHECK(describe_skipped(ImageFolder{}).empty());
}

TEST_CASE("image folder: an empty class, a missing folder, no classes, wrong classes: errors") {
  TempDir dir;
  put(dir, "train/cats/c0.jpg");
  put(dir, "train/dogs/readme.txt");  // a class folder without one image
  const std::string train = dir.file("train");
  check_message(
      image_error_of([&] { scan_image_folder(train); }),
      {sub(dir, "train/dogs"), "class folder 'dogs' holds no .jpg/.jpeg files", "(1 other file)"});

  const std::string missing = dir.file("nowhere");
  check_message(image_error_of([&] { scan_image_folder(missing); }), {missing, "no such folder"});

  put(dir, "flat/c0.jpg");  // images, but no class folders
  check_message(image_error_of([&] { scan_image_folder(dir.file("flat")); }),
                {dir.file("flat"), "no class sub-folders", "<folder>/<class>/<image>.jpg"});
  check_message(image_error_of([&] { scan_image_folder(dir.file("flat/c0.jpg")); }),
                {dir.file("flat/c0.jpg"), "not a folder"});

  put(dir, "validation/cats/c.jpg");
  put(dir, "validation/dogs/d.jpg");
  put(dir, "validation/horses/h.jpg");
  check_message(image_error_of([&] {
                  scan_image_folder(dir.file("validation"), {"cats", "dogs"});
                }),
                {dir.file("validation"), "[cats, dogs, horses]", "expected [cats, dogs]"});
}

TEST_CASE("decode_folder: bad files move to skipped and the labels stay with their images") {
  TempDir dir;
  const std::array<int, 3> red{220, 20, 20}, blue{20, 20, 220};
  const Bytes cat = solid_rgb(16, 16, red), dog = solid_rgb(24, 20, blue);
  const Bytes noisy = noisy_jpeg();
  put(dir, "cats/a.jpg", cat);
  put(dir, "cats/b.jpg", Bytes(noisy.begin(), noisy.begin() + 3000));  // truncated
  put(dir, "cats/c.jpg", cat);
  put(dir, "dogs/d.jpg", dog);
  put(dir, "dogs/e.jpg", text_bytes("\x89PNG\r\n\x1a\nrest"));  // a PNG named .jpg
  put(dir, "dogs/f.jpg", dog);
  for (int i = 0; i < 10; ++i) put(dir, "dogs/g" + std::to_string(i) + ".jpg", dog);
  put(dir, "dogs/notes.txt");

  ImageFolder folder = scan_image_folder(dir.str());
  REQUIRE(folder.size() == 16);
  const Bytes pixels = decode_folder(folder, 8, 8, 3, /*strict=*/false);
  REQUIRE(folder.size() == 14);
  REQUIRE(folder.labels.size() == 14);
  CHECK(pixels.size() == 14 * 8 * 8 * 3);
  CHECK(folder.paths[0] == sub(dir, "cats/a.jpg"));
  CHECK(folder.paths[1] == sub(dir, "cats/c.jpg"));
  CHECK(folder.paths[2] == sub(dir, "dogs/d.jpg"));
  CHECK(folder.paths[3] == sub(dir, "dogs/f.jpg"));  // was index 5: moved down two
  CHECK(folder.labels[1] == 0);
  CHECK(folder.labels[3] == 1);
  // Every kept image's pixels match its label's colour: labels and pixels moved together.
  for (size_t i = 0; i < 14; ++i) {
    INFO("image " << i << ": " << folder.paths[i]);
    const Bytes one(pixels.begin() + static_cast<std::ptrdiff_t>(i * 192),
                    pixels.begin() + static_cast<std::ptrdiff_t>((i + 1) * 192));
    CHECK(max_error(one, 8, 0, 8, 0, 8, folder.labels[i] == 0 ? red : blue) <= 6);
  }
  // notes.txt from the scan, then the two bad files in path order, with reasons that do not
  // repeat the path.
  REQUIRE(folder.skipped.size() == 3);
  CHECK(folder.skipped[0].path == sub(dir, "dogs/notes.txt"));
  CHECK(folder.skipped[1].path == sub(dir, "cats/b.jpg"));
  check_message(folder.skipped[1].reason, {"Premature end of JPEG file"});
  CHECK(folder.skipped[1].reason.find(folder.skipped[1].path) == std::string::npos);
  CHECK(folder.skipped[2].path == sub(dir, "dogs/e.jpg"));
  check_message(folder.skipped[2].reason, {"a PNG file, not a JPEG"});
  const std::string summary = describe_skipped(folder);
  CHECK(summary.find("3 of 17 files") == 0);
  CHECK(summary.find(sub(dir, "dogs/e.jpg") + ": a PNG file") != std::string::npos);

  // The same pixels with one worker and with all cores.
  ImageFolder again = scan_image_folder(dir.str());
  CHECK(decode_folder(again, 8, 8, 1, false) == pixels);
  ImageFolder all_cores = scan_image_folder(dir.str());
  CHECK(decode_folder(all_cores, 8, 8, 0, false) == pixels);
}

TEST_CASE("decode_folder: strict throws for the first bad file; nothing decodable is an error") {
  TempDir dir;
  const Bytes good = solid_rgb(8, 8, {1, 2, 3});
  put(dir, "cats/a.jpg", good);
  put(dir, "cats/b.jpg");  // empty
  put(dir, "dogs/c.jpg", text_bytes("<html>"));
  put(dir, "dogs/d.jpg", good);
  ImageFolder folder = scan_image_folder(dir.str());
  check_message(image_error_of([&] { decode_folder(folder, 8, 8, 2, /*strict=*/true); }),
                {sub(dir, "cats/b.jpg"), "empty file (0 bytes)"});

  TempDir bad;
  put(bad, "cats/a.jpg", text_bytes("not an image"));
  put(bad, "dogs/b.jpg");
  ImageFolder hopeless = scan_image_folder(bad.str());
  check_message(image_error_of([&] { decode_folder(hopeless, 8, 8, 2, false); }),
                {bad.str(), "none of its 2 images could be decoded", sub(bad, "cats/a.jpg")});
}

// ---- the prefetching loader (datasets/image_batches.h), on the CPU ----------------------

namespace {

// Every batch of one epoch of `batches` from `first_step` on: pixels as floats, then the labels.
std::vector<std::vector<float>> epoch_batches(engine::datasets::ImageBatches& batches,
                                              int64_t epoch, int64_t steps,
                                              int64_t first_step = 0) {
  std::vector<std::vector<float>> out;
  batches.start_epoch(epoch, steps, first_step);
  for (int64_t s = first_step; s < steps; ++s) {
    const int64_t n = batches.next();
    std::vector<float> x = batches.x().to_vector(), y = batches.y().to_vector();
    x.resize(static_cast<size_t>(n) * 8 * 8 * 3);
    y.resize(static_cast<size_t>(n));
    x.insert(x.end(), y.begin(), y.end());
    out.push_back(x);
  }
  return out;
}

// Five red cats and five blue dogs, 12x12 JPEGs.
ImageFolder red_cats_blue_dogs(const TempDir& dir) {
  for (int i = 0; i < 5; ++i) {
    put(dir, "cats/c" + std::to_string(i) + ".jpg", solid_rgb(12, 12, {220, 20, 20}));
    put(dir, "dogs/d" + std::to_string(i) + ".jpg", solid_rgb(12, 12, {20, 20, 220}));
  }
  return scan_image_folder(dir.str());
}

// The loader tests' setting: 8x8 outputs (epoch_batches' size) in batches of 4.
engine::datasets::ImageBatchOptions small_batches() {
  engine::datasets::ImageBatchOptions options;
  options.height = options.width = 8;
  options.batch_size = 4;
  return options;
}

}  // namespace

TEST_CASE("ImageBatches: each image once per epoch with its own label, shuffled, rescaled") {
  using engine::datasets::ImageBatches;
  TempDir dir;
  const ImageFolder folder = red_cats_blue_dogs(dir);
  // 10 images: batches of 4, 4 and 2.
  engine::datasets::ImageBatchOptions options = small_batches();
  options.workers = 2;
  options.seed = 5;
  ImageBatches batches(folder, {}, engine::Device::cpu(), options);
  const auto epoch1 = epoch_batches(batches, 1, 3);
  REQUIRE(epoch1.size() == 3);
  CHECK(epoch1[2].size() == 2 * (8 * 8 * 3 + 1));  // the last batch holds the other 2
  int cats = 0, dogs = 0;
  for (const std::vector<float>& b : epoch1) {
    const size_t n = b.size() / (8 * 8 * 3 + 1);
    for (size_t i = 0; i < n; ++i) {
      const float* pixel = &b[i * 8 * 8 * 3];  // an image's first pixel, in [0, 1]
      const float label = b[n * 8 * 8 * 3 + i];
      INFO("image ", i, ": r ", pixel[0], " b ", pixel[2], " label ", label);
      CHECK(pixel[0] <= 1.0f);
      // Red images are class 0 (cats), blue ones class 1 (dogs).
      CHECK((label == 0.0f ? pixel[0] > 0.6f && pixel[2] < 0.3f : pixel[2] > 0.6f && pixel[0] < 0.3f));
      (label == 0.0f ? cats : dogs) += 1;
    }
  }
  CHECK(cats == 5);
  CHECK(dogs == 5);
  CHECK(batches.wait_seconds() >= 0.0);
  // The next epoch is shuffled again: another order of the labels.
  const auto epoch2 = epoch_batches(batches, 2, 3);
  CHECK(epoch2 != epoch1);
}

TEST_CASE("ImageBatches: the same batches with 1 or 3 workers, in groups of 1 to 3, decoded each epoch or cached") {
  using engine::datasets::ImageBatches;
  TempDir dir;
  ImageFolder folder = red_cats_blue_dogs(dir);
  engine::datasets::ImageBatchOptions options = small_batches();
  options.augment = true;  // random shear, zoom and flip: drawn per (seed, epoch, image)
  options.seed = 9;
  options.workers = 1;  // batches filled two at a time (8 images a worker)
  ImageBatches one(folder, {}, engine::Device::cpu(), options);
  options.workers = 3;  // all three batches of an epoch at once, the short last one included
  ImageFolder cached_folder = folder;
  std::vector<uint8_t> cache = decode_folder(cached_folder, 8, 8, 3, /*strict=*/true);
  ImageBatches three(cached_folder, std::move(cache), engine::Device::cpu(), options);
  options.prefetch = 2;  // one batch at a time: at most half the slots
  ImageBatches single(folder, {}, engine::Device::cpu(), options);
  for (int64_t epoch = 1; epoch <= 2; ++epoch) {
    const auto reference = epoch_batches(one, epoch, 3);
    CHECK(epoch_batches(three, epoch, 3) == reference);
    CHECK(epoch_batches(single, epoch, 3) == reference);
  }
}

TEST_CASE("ImageBatches: an epoch started at a later step (a resumed run) goes on with its batches") {
  using engine::datasets::ImageBatches;
  TempDir dir;
  const ImageFolder folder = red_cats_blue_dogs(dir);
  engine::datasets::ImageBatchOptions options = small_batches();
  options.augment = true;
  options.seed = 3;
  ImageBatches straight(folder, {}, engine::Device::cpu(), options);
  ImageBatches resumed(folder, {}, engine::Device::cpu(), options);
  epoch_batches(straight, 1, 3);
  const auto whole = epoch_batches(straight, 2, 3);
  const auto rest = epoch_batches(resumed, 2, 3, /*first_step=*/1);  // a fresh loader
  REQUIRE(rest.size() == 2);
  CHECK(rest[0] == whole[1]);
  CHECK(rest[1] == whole[2]);
  // And the epochs after it are the straight run's.
  CHECK(epoch_batches(resumed, 3, 3) == epoch_batches(straight, 3, 3));
  CHECK_THROWS_WITH_AS(resumed.start_epoch(4, 3, 3), doctest::Contains("cannot start at step 3"),
                       engine::Error);
}

TEST_CASE("ImageBatches: two ranks' batches side by side are one process's, transforms and all") {
  // Data-parallel training (core/data_parallel.h): rank r of 2 with batches of 2 makes, at each
  // step, images 2r and 2r+1 of the one-process batch of 4, each with the same random transform.
  using engine::datasets::ImageBatches;
  TempDir dir;
  const ImageFolder folder = red_cats_blue_dogs(dir);  // 10 images: 3 steps of 4, 4 and 2
  engine::datasets::ImageBatchOptions options = small_batches();
  options.augment = true;
  options.seed = 4;
  ImageBatches one(folder, {}, engine::Device::cpu(), options);
  options.batch_size = 2;
  options.world = 2;
  std::vector<std::unique_ptr<ImageBatches>> ranks;
  for (int r = 0; r < 2; ++r) {
    options.rank = r;
    ranks.push_back(std::make_unique<ImageBatches>(folder, std::vector<uint8_t>{},
                                                   engine::Device::cpu(), options));
    CHECK(ranks.back()->samples_per_epoch() == 5);
  }
  constexpr size_t PIXELS = 8 * 8 * 3;
  for (int64_t epoch = 1; epoch <= 2; ++epoch) {
    const auto whole = epoch_batches(one, epoch, 3);
    const auto first = epoch_batches(*ranks[0], epoch, 3), second = epoch_batches(*ranks[1], epoch, 3);
    for (size_t step = 0; step < 3; ++step) {
      // A batch is its images' pixels, then their labels: put the two ranks' side by side.
      const size_t n0 = first[step].size() / (PIXELS + 1), n1 = second[step].size() / (PIXELS + 1);
      std::vector<float> joined(first[step].begin(), first[step].begin() + n0 * PIXELS);
      joined.insert(joined.end(), second[step].begin(), second[step].begin() + n1 * PIXELS);
      joined.insert(joined.end(), first[step].begin() + n0 * PIXELS, first[step].end());
      joined.insert(joined.end(), second[step].begin() + n1 * PIXELS, second[step].end());
      INFO("epoch ", epoch, ", step ", step);
      CHECK(n0 == n1);
      CHECK(joined == whole[step]);
    }
  }
}

// Without --cache the loader decodes every image again each epoch: a file that was good when
// the folder was scanned and is broken later (overwritten, a disk going bad) must stop the run
// with that file's error, not train on a grey image or hang the producer.
TEST_CASE("ImageBatches: a file broken on disk after the start stops the run, naming it") {
  using engine::datasets::ImageBatches;
  TempDir dir;
  const ImageFolder folder = red_cats_blue_dogs(dir);
  engine::datasets::ImageBatchOptions options = small_batches();
  options.prefetch = 2;
  ImageBatches batches(folder, {}, engine::Device::cpu(), options);
  // Cut in half: "Premature end of JPEG file", which the decoder treats as an error.
  const Bytes good = solid_rgb(12, 12, {20, 20, 220});
  put(dir, "dogs/d3.jpg", Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2)));
  // The producer may have prepared the first batches before the file changed; every epoch
  // decodes d3.jpg once, so within two epochs a batch holding it reaches next().
  std::string message = "<no error>";
  try {
    for (int64_t epoch = 1; epoch <= 2; ++epoch) epoch_batches(batches, epoch, 3);
  } catch (const engine::Error& e) {
    message = e.what();
  }
  check_message(message, {"d3.jpg"});
}

TEST_CASE("ImageBatches: next() before start_epoch or past the epoch's last batch is an error") {
  using engine::datasets::ImageBatches;
  TempDir dir;
  const ImageFolder folder = red_cats_blue_dogs(dir);
  engine::datasets::ImageBatchOptions options = small_batches();
  ImageBatches batches(folder, {}, engine::Device::cpu(), options);
  CHECK_THROWS_WITH_AS(batches.next(), doctest::Contains("before start_epoch"), engine::Error);
  batches.start_epoch(1, 2);  // a shortened epoch of 2 of the 3 batches
  batches.next();
  batches.next();
  CHECK_THROWS_WITH_AS(batches.next(), doctest::Contains("after the epoch's last batch"),
                       engine::Error);
  CHECK_THROWS_WITH_AS(batches.start_epoch(2, 4), doctest::Contains("has 1 to 3 steps"),
                       engine::Error);
  options.prefetch = 1;
  CHECK_THROWS_WITH_AS(ImageBatches(folder, {}, engine::Device::cpu(), options),
                       doctest::Contains("prefetch must be at least 2"), engine::Error);
}

TEST_CASE("DeviceJpegDecoder: a CPU device is refused; a build without CUDA has none") {
  check_message(error_of([] { engine::DeviceJpegDecoder(engine::Device::cpu(), 4, 8, 8); }),
                {"decoding JPEGs on a device needs a GPU", "cpu"});
#if !defined(ENGINE_WITH_CUDA)
  CHECK_FALSE(engine::DeviceJpegDecoder::built());
  check_message(error_of([] { engine::DeviceJpegDecoder(engine::Device::cuda(), 4, 8, 8); }),
                {"this build has no CUDA"});
#endif
}

TEST_CASE("ImageBatches: decoding on the GPU needs a GPU device") {
  TempDir dir;
  const ImageFolder folder = red_cats_blue_dogs(dir);
  engine::datasets::ImageBatchOptions options = small_batches();
  options.decode_on_device = true;
  check_message(error_of([&] { engine::datasets::ImageBatches(folder, {}, engine::Device::cpu(), options); }),
                {"decoding on the GPU", "needs a GPU device"});
}

TEST_CASE("balanced_device_share: nvJPEG's share at which it and the workers take equally long") {
  using engine::datasets::balanced_device_share;
  // The H200 run's rates: nvJPEG 19,000 images/s, 15 workers of 2,000 each.
  CHECK(balanced_device_share(19000.0, 2000.0, 15) == doctest::Approx(19000.0 / 49000.0));
  CHECK(balanced_device_share(19000.0, 0.0, 15) == 1.0);  // workers that decode nothing: all to nvJPEG
  CHECK(balanced_device_share(0.0, 2000.0, 15) == 0.0);
  CHECK(balanced_device_share(3000.0, 1000.0, 3) == 0.5);
  struct Rates {
    double device, worker;
    int workers;
  };
  for (const Rates r :
       {Rates{0.0, 0.0, 15}, Rates{-1.0, 2000.0, 15}, Rates{19000.0, -1.0, 15}, Rates{0.0, 2000.0, 0}}) {
    CAPTURE(r.device);
    CAPTURE(r.worker);
    CAPTURE(r.workers);
    check_message(error_of([&] { balanced_device_share(r.device, r.worker, r.workers); }), {"balanced_device_share"});
  }
}
