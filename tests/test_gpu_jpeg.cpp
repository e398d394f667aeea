// The GPU's JPEG decoder (kernels/jpeg_gpu.h, nvJPEG) against the CPU's (datasets/jpeg_image.h)
// on the fuzz corpus' files (fuzz/corpus/jpeg): colour JPEGs decode to nearly the same pixels,
// and every file nvJPEG cannot or should not take
// (gray, CMYK, not a JPEG, a lying header, truncated) is handed back untouched, never thrown.
// GPU only (gpu_skip_main.cpp); without nvJPEG in the build the cases say so and pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "datasets/jpeg_image.h"
#include "kernels/jpeg_gpu.h"
#include "kernels/launch.h"

using namespace engine;

namespace {

constexpr int SIDE = 32;
constexpr size_t IMAGE = size_t{SIDE} * SIDE * 3;
// The mean |GPU - CPU| a colour file may differ by, in units of 255. The resizes agree to the
// bit; the decoders do not: libjpeg-turbo's chroma upsampling blends neighbouring chroma
// samples, nvJPEG's hardware engines differ, which shows at sharp colour edges. Measured on an
// H100's engines: 5.4 (largest 46) on rgb_70x50_for_dct_scaling.jpg, a file of such edges, 1.9
// on the 4:2:0 16x12 file, 0 on the 4:4:4 ones, and 0.45 on the photos of the Dogs-vs-Cats
// tree (apps/jpeg_bench). A swapped channel or a misplaced resize differs by tens.
constexpr double MEAN_DIFFERENCE = 8.0;

std::vector<uint8_t> corpus_file(const std::string& name) {
  std::ifstream in(std::string(ENGINE_JPEG_CORPUS) + "/" + name, std::ios::binary);
  REQUIRE(in.good());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

double mean_difference(const uint8_t* gpu, const std::string& name) {
  const std::vector<uint8_t> file = corpus_file(name);
  std::vector<uint8_t> cpu(IMAGE);
  datasets::decode_jpeg(file.data(), file.size(), name, SIDE, SIDE, cpu.data());
  double sum = 0;
  int largest = 0;
  for (size_t b = 0; b < IMAGE; ++b) {
    const int d = std::abs(static_cast<int>(gpu[b]) - static_cast<int>(cpu[b]));
    sum += d;
    largest = std::max(largest, d);
  }
  MESSAGE(name, ": mean |GPU - CPU| ", sum / IMAGE, ", largest ", largest);
  return sum / IMAGE;
}

// Decodes `names` in one GPU call into an output poisoned with 0xAB; returns it and `taken`.
std::vector<uint8_t> gpu_decode(cuda::GpuJpegDecoder& decoder, const std::vector<std::string>& names,
                                std::vector<bool>& taken) {
  std::vector<std::vector<uint8_t>> files;
  for (const std::string& name : names) files.push_back(corpus_file(name));
  std::vector<const std::vector<uint8_t>*> pointers;
  for (const auto& file : files) pointers.push_back(&file);
  const Tensor out = Tensor::from_bytes(std::vector<uint8_t>(names.size() * IMAGE, 0xAB),
                                        {static_cast<int64_t>(names.size() * IMAGE)}, Device::cuda());
  taken = decoder.decode(pointers, out.data<uint8_t>(), cuda::stream());
  REQUIRE(taken.size() == names.size());
  return out.to_bytes();
}

}  // namespace

TEST_CASE("GPU JPEG: colour files decode to the CPU decoder's pixels, within a few units") {
  if (!cuda::nvjpeg_built()) {
    MESSAGE("skipped: this build has no nvJPEG");
    return;
  }
  cuda::GpuJpegDecoder decoder(8, SIDE, SIDE);
  MESSAGE("nvJPEG backend: ", decoder.backend());
  const std::vector<std::string> names = {"rgb_13x9_444.jpg", "rgb_16x12_420.jpg", "rgb_1x1.jpg",
                                          "rgb_70x50_for_dct_scaling.jpg"};
  std::vector<bool> taken;
  const std::vector<uint8_t> gpu = gpu_decode(decoder, names, taken);
  for (size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    CHECK(taken[i]);
    if (taken[i]) CHECK(mean_difference(gpu.data() + i * IMAGE, names[i]) <= MEAN_DIFFERENCE);
  }
  // A progressive file: the hardware engines may refuse it (then the whole call hands back);
  // either way nothing throws, and what was taken is close.
  const std::string name = "rgb_40x30_progressive.jpg";
  const std::vector<uint8_t> progressive = gpu_decode(decoder, {name}, taken);
  MESSAGE("progressive JPEG taken by the GPU: ", std::string(taken[0] ? "yes" : "no"));
  if (taken[0]) CHECK(mean_difference(progressive.data(), name) <= MEAN_DIFFERENCE);
}

TEST_CASE("GPU JPEG: gray, CMYK, non-JPEG, lying and truncated files are handed back, never thrown") {
  if (!cuda::nvjpeg_built()) {
    MESSAGE("skipped: this build has no nvJPEG");
    return;
  }
  cuda::GpuJpegDecoder decoder(8, SIDE, SIDE);
  // Files whose header nvJPEG cannot read, or which it must leave to the CPU's conversions.
  const std::vector<std::string> refused = {"gray_9x14.jpg",     "cmyk_8x8_adobe.jpg", "html_page.jpg",
                                            "png_signature.jpg", "soi_only.jpg",       "truncated_header.jpg",
                                            "claims_0x16.jpg",   "claims_20000x20000.jpg"};
  std::vector<bool> taken;
  const std::vector<uint8_t> out = gpu_decode(decoder, refused, taken);
  for (size_t i = 0; i < refused.size(); ++i) {
    INFO(refused[i]);
    CHECK_FALSE(taken[i]);
    CHECK(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(i * IMAGE),
                      out.begin() + static_cast<std::ptrdiff_t>((i + 1) * IMAGE), [](uint8_t b) { return b == 0xAB; }));
  }
  // Damage after an intact header: nvJPEG may decode garbage or refuse; it must not throw. (The
  // loader finds such files with the CPU decoder before training, datasets/image_folder.h.)
  for (const std::string& name : {std::string("truncated_half.jpg"), std::string("no_end_marker.jpg")}) {
    INFO(name);
    CHECK_NOTHROW(gpu_decode(decoder, {name}, taken));
  }
}
