// Decoding one JPEG with libjpeg-turbo, resizing it to a fixed size (see jpeg_image.h).
#include "datasets/jpeg_image.h"

// jpeglib.h uses FILE and size_t without including their headers.
#include <cstdio>

#include <jpeglib.h>
// After jpeglib.h: the message codes (JWRN_JPEG_EOF ...).
#include <jerror.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstring>
#include <vector>

#include "core/binary_file.h"

namespace engine::datasets {
namespace {

// A file bigger than this is not a photo; we refuse it before reading it into memory.
constexpr uint64_t kMaxFileBytes = uint64_t{1} << 30;  // 1 GiB

// What libjpeg may allocate for one image (see kMaxDecoderBytes in jpeg_image.h), in MB for
// the message.
constexpr int64_t kMaxDecoderMegabytes = kMaxDecoderBytes >> 20;

// ---- errors: libjpeg's callbacks longjmp back to us ----------------------------------------
//
// libjpeg is C: when it meets bad data it calls err->error_exit, which must not return. The
// default prints the message and calls exit(). Ours formats the message and longjmps back to
// the setjmp in guarded() below. longjmp skips frames without running destructors, so the
// rule is: between that setjmp and the longjmp there are only libjpeg's C frames and small
// lambdas whose locals are plain pointers and ints. Everything with a destructor (vectors,
// the Decompressor that frees libjpeg's memory) lives in the caller, which longjmp never
// skips.

struct JumpingErrors {
  jpeg_error_mgr pub;  // first, so libjpeg's pointer to it is also a pointer to us
  std::jmp_buf back;   // where guarded() waits
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jump_back(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JumpingErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->back, 1);
}

// libjpeg reports warnings (msg_level -1) here and carries on; for a truncated file or corrupt
// data it fills what it could not decode with grey. We make every warning an error, except two
// that say nothing about the pixels: an unknown JFIF version number, and scan parameters that
// a sequential JPEG ignores (libjpeg's own comment: "some baseline files out there" hold zeros
// there). Trace messages (msg_level >= 0) are off unless asked for; ignore them.
void on_message(j_common_ptr cinfo, int msg_level) {
  const int code = cinfo->err->msg_code;
  if (msg_level >= 0 || code == JWRN_JFIF_MAJOR || code == JWRN_NOT_SEQUENTIAL) return;
  jump_back(cinfo);
}

// Runs `step`, a lambda that calls libjpeg. Returns false if libjpeg reported an error or a
// warning during it; the message is then in errors.message.
template <typename Step>
bool guarded(JumpingErrors& errors, const Step& step) {
  if (setjmp(errors.back) != 0) return false;  // we land here from jump_back()
  step();
  return true;
}

// One libjpeg decompressor. The destructor frees libjpeg's memory on every path, after an
// error too (jpeg_destroy_decompress is safe on a struct that was never created: it is
// zero-initialised here).
struct Decompressor {
  jpeg_decompress_struct cinfo{};
  JumpingErrors errors{};

  Decompressor() {
    cinfo.err = jpeg_std_error(&errors.pub);
    errors.pub.error_exit = jump_back;
    errors.pub.emit_message = on_message;
  }
  ~Decompressor() { jpeg_destroy_decompress(&cinfo); }
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
};

// ---- recognising the file ------------------------------------------------------------------

bool starts_with(const uint8_t* data, size_t size, const char* magic, size_t length) {
  return size >= length && std::memcmp(data, magic, length) == 0;
}

// The first bytes in hex and as text, e.g. `3c 21 44 4f 43 "<!DOC"`, for "not a JPEG" messages.
std::string first_bytes(const uint8_t* data, size_t size) {
  static const char kHex[] = "0123456789abcdef";
  const size_t n = std::min<size_t>(size, 8);
  std::string hex, text;
  for (size_t i = 0; i < n; ++i) {
    hex += kHex[data[i] >> 4];
    hex += kHex[data[i] & 15];
    hex += ' ';
    text += (data[i] >= 32 && data[i] < 127) ? static_cast<char>(data[i]) : '.';
  }
  return hex + "\"" + text + "\"";
}

// Throws ImageError unless the bytes start like a JPEG.
void require_jpeg_signature(const uint8_t* data, size_t size, const std::string& name) {
  const char* other = nullptr;
  switch (sniff_image_format(data, size)) {
    case ImageFormat::Jpeg: return;
    case ImageFormat::Empty: throw ImageError(name + ": empty file (0 bytes), not a JPEG");
    case ImageFormat::Png: other = "PNG"; break;
    case ImageFormat::Gif: other = "GIF"; break;
    case ImageFormat::Bmp: other = "BMP"; break;
    case ImageFormat::Webp: other = "WebP"; break;
    case ImageFormat::Tiff: other = "TIFF"; break;
    case ImageFormat::Unknown:
      throw ImageError(name + ": not a JPEG (starts with " + first_bytes(data, size) +
                       "; a JPEG starts with ff d8)");
  }
  throw ImageError(name + ": a " + other + " file, not a JPEG (only JPEG is read)");
}

// ---- pixels --------------------------------------------------------------------------------

// x * y / 255, rounded, for x, y in 0..255.
inline uint8_t scale255(int x, int y) { return static_cast<uint8_t>((x * y + 127) / 255); }

// One decoded row of `width` pixels with `components` bytes each -> RGB.
//   1 (gray): R = G = B = the gray value.
//   4 (CMYK, from CMYK or YCCK files): R = (255 - C) * (255 - K) / 255, G from M, B from Y,
//     where C, M, Y, K are amounts of ink. Adobe's files store 255 - ink, so `inverted`
//     flips them back first.
void row_to_rgb(const uint8_t* row, int width, int components, bool inverted, uint8_t* rgb) {
  for (int x = 0; x < width; ++x, rgb += 3) {
    if (components == 1) {
      rgb[0] = rgb[1] = rgb[2] = row[x];
    } else {
      const uint8_t* p = row + 4 * x;
      auto paper = [inverted](uint8_t stored) {  // 255 - ink: how much light gets through
        return inverted ? int{stored} : 255 - stored;
      };
      for (int c = 0; c < 3; ++c) rgb[c] = scale255(paper(p[c]), paper(p[3]));
    }
  }
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

ImageFormat sniff_image_format(const uint8_t* data, size_t size) {
  if (size == 0) return ImageFormat::Empty;
  // JPEG: the start-of-image marker FF D8. (Whether a valid file follows is libjpeg's call.)
  if (starts_with(data, size, "\xff\xd8", 2)) return ImageFormat::Jpeg;
  if (starts_with(data, size, "\x89PNG", 4)) return ImageFormat::Png;
  if (starts_with(data, size, "GIF8", 4)) return ImageFormat::Gif;  // GIF87a, GIF89a
  if (starts_with(data, size, "BM", 2)) return ImageFormat::Bmp;
  if (starts_with(data, size, "RIFF", 4) && size >= 12 && std::memcmp(data + 8, "WEBP", 4) == 0)
    return ImageFormat::Webp;
  // TIFF: byte order "II" (little endian) or "MM" (big endian), then the number 42.
  if (starts_with(data, size, "II*\0", 4) || starts_with(data, size, "MM\0*", 4))
    return ImageFormat::Tiff;
  return ImageFormat::Unknown;
}

int choose_dct_scale(int source_height, int source_width, int height, int width) {
  int denominator = 1;
  for (int d : {2, 4, 8}) {
    // libjpeg's scaled size is ceil(source / d).
    if (ceil_div(source_height, d) < height || ceil_div(source_width, d) < width) break;
    denominator = d;
  }
  return denominator;
}

void resize_bilinear(const uint8_t* source, int source_height, int source_width, int channels,
                     uint8_t* out, int height, int width) {
  ENGINE_CHECK(source_height > 0 && source_width > 0 && height > 0 && width > 0 && channels > 0,
               "resize_bilinear: sizes must be positive, got ", source_height, "x", source_width,
               " -> ", height, "x", width, " with ", channels, " channels");
  // In fixed point, as two passes per output row: its two source rows blended down (each byte
  // times 256, in 16 bits: whole rows of multiply-adds, which the compiler vectorises), then
  // that row sampled across (times 65,536 in all, in 32 bits) and rounded. The products are
  // exact, so the order of the passes does not change a bit. The weights are multiples of
  // 1/256: a pixel is at most one unit from the exact bilinear value. Measured on the photos'
  // sizes (docs/results/dogs_vs_cats.md): the float version this replaced, a conversion per
  // byte and per tap, took a third of a photo's decode.
  constexpr int ONE = 256;
  // Where output coordinate i samples the source axis of `n` pixels (`m` outputs): the lower
  // neighbour `lo`, the upper one `hi` and the weight of the upper one, in 256ths.
  struct Tap {
    int lo, hi, weight;
  };
  auto taps = [](int n, int m) {
    std::vector<Tap> result(static_cast<size_t>(m));
    const double step = static_cast<double>(n) / m;
    for (int i = 0; i < m; ++i) {
      // Pixel centres aligned: output pixel i covers [i, i + 1) * step of the source, whose
      // centre is at (i + 0.5) * step; source pixel j's centre is at j + 0.5.
      const double s = std::clamp((i + 0.5) * step - 0.5, 0.0, n - 1.0);
      const int lo = static_cast<int>(s);  // s >= 0, so this is floor
      result[static_cast<size_t>(i)] = {lo, std::min(lo + 1, n - 1),
                                        static_cast<int>(std::lround((s - lo) * ONE))};
    }
    return result;
  };
  const std::vector<Tap> xs = taps(source_width, width), ys = taps(source_height, height);
  const size_t source_row = static_cast<size_t>(source_width) * channels;
  std::vector<uint16_t> blended(source_row);
  uint16_t* const down = blended.data();
  for (int y = 0; y < height; ++y) {
    const Tap ty = ys[static_cast<size_t>(y)];
    const uint8_t* top = source + static_cast<size_t>(ty.lo) * source_row;
    const uint8_t* bottom = source + static_cast<size_t>(ty.hi) * source_row;
    const int up_weight = ONE - ty.weight, down_weight = ty.weight;
    for (size_t i = 0; i < source_row; ++i) {
      down[i] = static_cast<uint16_t>(top[i] * up_weight + bottom[i] * down_weight);
    }
    uint8_t* o = out + static_cast<size_t>(y) * width * channels;
    for (int x = 0; x < width; ++x) {
      const Tap tx = xs[static_cast<size_t>(x)];
      const uint16_t* left = down + static_cast<size_t>(tx.lo) * channels;
      const uint16_t* right = down + static_cast<size_t>(tx.hi) * channels;
      const auto left_weight = static_cast<uint32_t>(ONE - tx.weight);
      const auto right_weight = static_cast<uint32_t>(tx.weight);
      for (int c = 0; c < channels; ++c) {
        // A weighted mean of bytes stays in [0, 255]; + half of 65,536 rounds to nearest.
        *o++ = static_cast<uint8_t>((left[c] * left_weight + right[c] * right_weight +
                                     ONE * ONE / 2) >> 16);
      }
    }
  }
}

JpegDecodeInfo decode_jpeg(const uint8_t* data, size_t size, const std::string& name, int height,
                           int width, uint8_t* out) {
  ENGINE_CHECK(height > 0 && width > 0 && static_cast<int64_t>(height) * width <= kMaxDecodedPixels,
               "decode_jpeg: the target size must be positive and at most ", kMaxDecodedPixels,
               " pixels, got ", height, "x", width);
  require_jpeg_signature(data, size, name);

  Decompressor d;
  jpeg_decompress_struct& cinfo = d.cinfo;
  // Every libjpeg failure ends here, with libjpeg's own one-line message.
  auto fail = [&] {
    // With no backing store (temporary files), going over max_memory_to_use ends in this
    // error; say what it means.
    if (d.errors.pub.msg_code == JERR_NO_BACKING_STORE)
      throw ImageError(name + ": " + std::to_string(cinfo.image_width) + "x" +
                       std::to_string(cinfo.image_height) + " pixels needs more than the " +
                       std::to_string(kMaxDecoderMegabytes) +
                       " MB the decoder may use for one image (a progressive JPEG keeps all of "
                       "its coefficients in memory, whatever the scale)");
    throw ImageError(name + ": bad JPEG data (libjpeg: " + d.errors.message + ")");
  };

  if (!guarded(d.errors, [&] {
        jpeg_create_decompress(&cinfo);
        cinfo.mem->max_memory_to_use = static_cast<long>(kMaxDecoderBytes);
        jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
        jpeg_read_header(&cinfo, TRUE);
      }))
    fail();

  JpegDecodeInfo info;
  info.image_height = static_cast<int>(cinfo.image_height);
  info.image_width = static_cast<int>(cinfo.image_width);
  info.components = cinfo.num_components;
  // libjpeg converts YCbCr (nearly every photo) and RGB to RGB itself; gray and CMYK we take
  // as they are and convert in row_to_rgb.
  switch (cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE: cinfo.out_color_space = JCS_GRAYSCALE; break;
    case JCS_YCbCr:
    case JCS_RGB: cinfo.out_color_space = JCS_RGB; break;
    case JCS_CMYK:
    case JCS_YCCK:  // libjpeg turns YCCK into CMYK
      cinfo.out_color_space = JCS_CMYK;
      info.adobe_inverted = cinfo.saw_Adobe_marker != 0;
      break;
    default:
      throw ImageError(name + ": a JPEG with " + std::to_string(cinfo.num_components) +
                       " colour components of unknown meaning (expected gray, RGB or CMYK)");
  }

  // Shrink inside the decoder as far as the target size allows (see jpeg_image.h).
  info.scale_denominator = choose_dct_scale(info.image_height, info.image_width, height, width);
  cinfo.scale_num = 1;
  cinfo.scale_denom = static_cast<unsigned>(info.scale_denominator);
  if (!guarded(d.errors, [&] { jpeg_calc_output_dimensions(&cinfo); })) fail();
  info.decoded_height = static_cast<int>(cinfo.output_height);
  info.decoded_width = static_cast<int>(cinfo.output_width);
  const int64_t pixels = static_cast<int64_t>(info.decoded_height) * info.decoded_width;
  if (pixels > kMaxDecodedPixels)
    throw ImageError(name + ": " + std::to_string(info.image_width) + "x" +
                     std::to_string(info.image_height) + " pixels is too large: decoding at " +
                     std::to_string(info.decoded_width) + "x" +
                     std::to_string(info.decoded_height) + " would exceed the limit of " +
                     std::to_string(kMaxDecodedPixels) + " pixels");

  if (!guarded(d.errors, [&] { jpeg_start_decompress(&cinfo); })) fail();

  // The decoded image as RGB, and one row of the decoder's output when that is gray or CMYK.
  const int components = cinfo.output_components;
  const size_t rgb_row = static_cast<size_t>(info.decoded_width) * 3;
  std::vector<uint8_t> rgb(rgb_row * static_cast<size_t>(info.decoded_height));
  std::vector<uint8_t> scratch(components == 3 ? 0
                                               : static_cast<size_t>(info.decoded_width) *
                                                     static_cast<size_t>(components));
  uint8_t* const rgb_data = rgb.data();
  uint8_t* const scratch_data = scratch.data();
  const bool inverted = info.adobe_inverted;
  const int decoded_width = info.decoded_width;
  if (!guarded(d.errors, [&] {
        while (cinfo.output_scanline < cinfo.output_height) {
          uint8_t* rgb_out = rgb_data + cinfo.output_scanline * rgb_row;
          JSAMPROW row = components == 3 ? rgb_out : scratch_data;
          jpeg_read_scanlines(&cinfo, &row, 1);
          if (components != 3)
            row_to_rgb(scratch_data, decoded_width, components, inverted, rgb_out);
        }
        // Reads on to the end-of-image marker, so damage after the last row is caught too.
        jpeg_finish_decompress(&cinfo);
      }))
    fail();

  resize_bilinear(rgb_data, info.decoded_height, info.decoded_width, 3, out, height, width);
  return info;
}

// The whole file into memory: libjpeg then decodes from it (jpeg_mem_src) without I/O.
// InputFile's refusals (missing, a directory, a FIFO ...) become ImageErrors: a folder's
// loader skips a bad file of any kind the same way (image_folder.h).
std::vector<uint8_t> read_image_file(const std::string& path) {
  try {
    InputFile file(path, path);
    if (file.size() > kMaxFileBytes)
      throw ImageError(path + ": " + std::to_string(file.size()) +
                       " bytes, larger than the limit of " + std::to_string(kMaxFileBytes) +
                       " bytes for one image");
    std::vector<uint8_t> data(static_cast<size_t>(file.size()));
    const size_t got = file.read(data.data(), data.size());
    if (got != data.size())
      throw ImageError(path + ": read only " + std::to_string(got) + " of " +
                       std::to_string(data.size()) + " bytes");
    return data;
  } catch (const ImageError&) {
    throw;
  } catch (const Error& e) {
    throw ImageError(e.what());
  }
}

void decode_jpeg_file(const std::string& path, int height, int width, uint8_t* out) {
  const std::vector<uint8_t> data = read_image_file(path);
  decode_jpeg(data.data(), data.size(), path, height, width, out);
}

}  // namespace engine::datasets
