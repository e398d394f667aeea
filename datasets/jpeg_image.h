// Decoding one JPEG file to a fixed-size RGB image, for the image-folder reader
// (datasets/image_folder.h) and the Dogs-vs-Cats app.
//
// A JPEG file starts with the bytes FF D8 (the "start of image" marker) and is a list of
// segments: headers (JFIF/Exif/Adobe APPn markers, quantisation and Huffman tables, the frame
// header SOFn with the height, width and number of components), then the entropy-coded scan
// data, then FF D9 ("end of image"). libjpeg-turbo does the decoding; this file wraps it so
// that every way a file can be bad ends as one ImageError naming the file:
//
//   * libjpeg's default error handler prints and calls exit(). We install our own that
//     longjmps back to the caller, and we treat libjpeg's *warnings* as errors too: on a
//     truncated file libjpeg only warns "Premature end of JPEG file" and fills the rest of
//     the image with grey, which would silently train on half-grey pictures. (Two warnings
//     about header fields that do not touch the pixels are let through; see on_message.)
//   * The first bytes are checked before libjpeg sees them, so a PNG, GIF or BMP that was
//     renamed to .jpg, an empty file or a saved HTML page gets a message saying what it is.
//
// Colours: the result is always RGB, 3 bytes per pixel. Grayscale files are replicated to
// R = G = B; CMYK and YCCK files (Photoshop's print exports) are converted with the simple
// formula R = 255 * (1 - C) * (1 - K) etc. Adobe's convention, flagged by its APP14 marker,
// stores CMYK inverted (0 = full ink); files with that marker are un-inverted first. (PIL
// assumes the inverted form for every CMYK JPEG, marker or not; we differ only on files
// without the marker, which are rare: libjpeg itself writes it into every CMYK file.)
//
// Size: the image is resized to the requested height x width with bilinear interpolation,
// pixel centres aligned (OpenCV's INTER_LINEAR, PyTorch's align_corners=False). Big photos
// are first shrunk inside the decoder: JPEG stores 8x8 blocks of frequencies, and libjpeg can
// rebuild each block at 4x4, 2x2 or 1x1 pixels (scale 1/2, 1/4, 1/8) for a fraction of the
// work and memory. We take the smallest such scale that still leaves at least the requested
// size in both dimensions, so a 10000x10000 photo decodes at 1250x1250, never at 300 MB.
// The DCT step averages whole blocks, and what is left for the bilinear step is a factor
// below 2 (unless even 1/8 is too big), at which bilinear sampling skips no source pixel:
// shrinking does not alias, with no separate antialiasing filter (PIL's resize has one).
//
// Everything here is thread-safe: callers decode on many OpenMP threads at once, and every
// call keeps its libjpeg state on its own stack.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace engine::datasets {

// Thrown for a file that cannot be used as an image: one line naming the file and the
// problem, "<path>: <problem>". (A bad argument, such as a zero target size, is a plain
// engine::Error instead: it is the caller's mistake, not the file's.)
class ImageError : public Error {
 public:
  using Error::Error;
};

// The most pixels we decode one image to, after the DCT scaling: 64 million, 192 MB as RGB.
// A larger image is refused rather than allowed to exhaust memory on every decoding thread.
constexpr int64_t kMaxDecodedPixels = 64'000'000;

// The most memory libjpeg itself may allocate for one image. A baseline JPEG needs little at
// any size (a few rows of 8x8 blocks); a progressive one keeps every DCT coefficient of the
// full-size image, 2 bytes per sample, whatever the scale: about 300 MB for a 10000x10000
// colour photo, which is refused. A small file whose header merely claims such a size is
// refused too, before anything is allocated.
constexpr int64_t kMaxDecoderBytes = int64_t{256} << 20;  // 256 MiB

// What the first bytes of a file say it is ("magic numbers").
enum class ImageFormat { Empty, Jpeg, Png, Gif, Bmp, Webp, Tiff, Unknown };
ImageFormat sniff_image_format(const uint8_t* data, size_t size);

// The DCT scale denominator libjpeg is asked for (1, 2, 4 or 8): the largest whose scaled
// size, ceil(source / d), is still >= the target in both dimensions.
int choose_dct_scale(int source_height, int source_width, int height, int width);

// What a decode found, for tests and diagnostics.
struct JpegDecodeInfo {
  int image_height = 0, image_width = 0;      // as stored in the file
  int decoded_height = 0, decoded_width = 0;  // after the DCT scaling, before the resize
  int scale_denominator = 1;                  // 1, 2, 4 or 8
  int components = 0;                         // 1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK
  bool adobe_inverted = false;                // CMYK stored inverted (Adobe APP14 marker)
};

// Decodes the JPEG in data[0, size) to height x width RGB, written as height*width*3 bytes
// (rows top to bottom, each pixel R, G, B) into `out`. `name` stands for the file in error
// messages. Throws ImageError for anything wrong with the data.
JpegDecodeInfo decode_jpeg(const uint8_t* data, size_t size, const std::string& name, int height,
                           int width, uint8_t* out);

// The file at `path` in memory, for decode_jpeg (or another decoder): a missing, unreadable or
// over-large file is an ImageError naming it.
std::vector<uint8_t> read_image_file(const std::string& path);

// Reads the file at `path` into memory and decodes it as decode_jpeg does. A missing or
// unreadable file is an ImageError naming it.
void decode_jpeg_file(const std::string& path, int height, int width, uint8_t* out);

// Bilinear resize of an interleaved 8-bit image (`channels` bytes per pixel), pixel centres
// aligned: output pixel x samples the source at (x + 0.5) * source_width / width - 0.5,
// clamped to the edge pixels, and likewise in y. In fixed point, with weights in 256ths: every
// pixel within one unit of the exact bilinear value.
void resize_bilinear(const uint8_t* source, int source_height, int source_width, int channels,
                     uint8_t* out, int height, int width);

}  // namespace engine::datasets
