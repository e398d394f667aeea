// Fuzz target: the JPEG decoder, datasets::decode_jpeg (datasets/jpeg_image.h), which the
// image-folder reader and the Dogs-vs-Cats app call on every photo.
//
// What is fuzzed: the bytes of one JPEG file, decoded from memory (no temporary file). That
// covers our wrapper around libjpeg-turbo: the signature sniffing that names PNG, GIF, BMP
// and other impostors, the error handler that longjmps out of libjpeg, the rule that libjpeg's
// warnings (a truncated file) are errors, the colour-space choice (gray, YCbCr, RGB, CMYK,
// YCCK, Adobe-inverted CMYK), the DCT scale choice, the size limits, the CMYK and gray to RGB
// conversion and the bilinear resize. Each input is decoded to two target sizes: 5x7, which
// makes the decoder shrink most images by the DCT scaling (1/2, 1/4, 1/8), and 48x64, which
// scales small images up; both are odd shapes so rows and columns are not interchangeable.
//
// Why: the photos come from the internet (Kaggle's Dogs vs Cats has a few broken files of its
// own), and libjpeg's defaults on bad data are to print and exit() or to carry on with grey.
// Every bad file must end in one ImageError (an engine::Error) naming it; an exit(), a crash,
// a longjmp that skips a destructor (a leak) or a write past the output buffer is a finding.
//
// Note: libjpeg-turbo is the system library, built without coverage instrumentation and
// without ASan. libFuzzer sees only which branches of our wrapper an input reached, not of
// libjpeg's own parser, and ASan checks our code's memory accesses, not libjpeg's. Seeds:
// fuzz/corpus/jpeg/ (fuzz/make_corpus.py), small baseline, progressive, gray and CMYK files
// and broken ones.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.h"
#include "datasets/jpeg_image.h"

namespace {

void decode(const uint8_t* data, size_t size, int height, int width) {
  // Exactly the output size: ASan reports a write even one byte past the end.
  std::vector<uint8_t> out(static_cast<size_t>(height) * static_cast<size_t>(width) * 3);
  try {
    const engine::datasets::JpegDecodeInfo info =
        engine::datasets::decode_jpeg(data, size, "fuzz.jpg", height, width, out.data());
    const int d = info.scale_denominator;
    if (info.decoded_height <= 0 || info.decoded_width <= 0 ||
        (d != 1 && d != 2 && d != 4 && d != 8))
      std::abort();  // an accepted image must have been decoded to some pixels
  } catch (const engine::Error&) {
    // A refused file (ImageError): the documented outcome for bad input.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  decode(data, size, 5, 7);
  decode(data, size, 48, 64);
  return 0;
}
