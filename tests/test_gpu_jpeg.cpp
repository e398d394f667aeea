// The GPU's JPEG decoder (kernels/jpeg_gpu.h, nvJPEG) against the CPU's (datasets/jpeg_image.h)
// on the fuzz corpus' files (fuzz/corpus/jpeg): colour JPEGs decode to nearly the same pixels,
// and every file nvJPEG cannot or should not take
// (gray, CMYK, not a JPEG, a lying header, truncated) is handed back untouched, never thrown.
// Then the image loader decoding on the GPU (datasets/image_batches.h, decode_on_device): the
// CPU loader's batches, labels and transforms, pixels within the decoders' difference, and
// the same batches with any number of workers.
// GPU only (gpu_skip_main.cpp); without nvJPEG in the build the cases say so and pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "datasets/image_batches.h"
#include "datasets/image_folder.h"
#include "datasets/jpeg_image.h"
#include "file_fixtures.h"
#include "kernels/jpeg_gpu.h"

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

// Without nvJPEG in the build, a case says so and passes.
bool no_nvjpeg() {
  if (cuda::nvjpeg_built()) return false;
  MESSAGE("skipped: this build has no nvJPEG");
  return true;
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
  std::vector<uint8_t*> targets;
  for (size_t i = 0; i < names.size(); ++i) targets.push_back(out.data<uint8_t>() + i * IMAGE);
  taken = decoder.decode(pointers, targets);
  REQUIRE(taken.size() == names.size());
  return out.to_bytes();
}

}  // namespace

TEST_CASE("GPU JPEG: colour files decode to the CPU decoder's pixels, within a few units") {
  if (no_nvjpeg()) return;
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
  if (no_nvjpeg()) return;
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

// ---- the loader decoding on the GPU ------------------------------------------------------

namespace {

// Ten corpus files as a two-class folder: colour ones nvJPEG takes, and gray and CMYK ones it
// hands back to the workers. (No progressive file: where the hardware engines refuse one, the
// whole call goes back to the workers, and nothing here would reach the GPU.)
datasets::ImageFolder corpus_folder(const test::TempDir& dir) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"cats/a.jpg", "rgb_13x9_444.jpg"},  {"cats/b.jpg", "rgb_16x12_420.jpg"},
      {"cats/c.jpg", "gray_9x14.jpg"},     {"cats/d.jpg", "rgb_70x50_for_dct_scaling.jpg"},
      {"cats/e.jpg", "cmyk_8x8_adobe.jpg"}, {"dogs/a.jpg", "rgb_1x1.jpg"},
      {"dogs/b.jpg", "rgb_70x50_for_dct_scaling.jpg"}, {"dogs/c.jpg", "gray_9x14.jpg"},
      {"dogs/d.jpg", "rgb_16x12_420.jpg"}, {"dogs/e.jpg", "rgb_13x9_444.jpg"}};
  for (const auto& [place, name] : files) {
    std::filesystem::create_directories(std::filesystem::path(dir.file(place)).parent_path());
    test::write_bytes(dir.file(place), corpus_file(name));
  }
  return datasets::scan_image_folder(dir.str());
}

datasets::ImageBatchOptions corpus_batches(bool augment_on_device) {
  datasets::ImageBatchOptions options;
  options.height = options.width = SIDE;
  options.batch_size = 4;
  options.workers = 2;
  options.augment = true;
  options.augment_on_device = augment_on_device;
  options.seed = 3;
  return options;
}

// Every batch of epoch `epoch`: x's floats of its images, then its labels.
std::vector<std::vector<float>> epoch_of(datasets::ImageBatches& batches, int64_t epoch) {
  const int64_t steps = (batches.size() + batches.batch_size() - 1) / batches.batch_size();
  std::vector<std::vector<float>> out;
  batches.start_epoch(epoch, steps);
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t n = batches.next();
    std::vector<float> x = batches.x().to_vector(), y = batches.y().to_vector();
    x.resize(static_cast<size_t>(n) * IMAGE);
    x.insert(x.end(), y.begin(), y.begin() + n);
    out.push_back(x);
  }
  return out;
}

}  // namespace

TEST_CASE("the loader decoding on the GPU: the CPU loader's batches, pixels within the decoders' difference") {
  if (no_nvjpeg()) return;
  test::TempDir dir;
  const datasets::ImageFolder folder = corpus_folder(dir);
  for (const bool augment_on_device : {false, true}) {
    INFO("augment on the device: ", augment_on_device);
    datasets::ImageBatchOptions options = corpus_batches(augment_on_device);
    options.shuffle = false;  // position k of the epoch is folder.paths[k]
    datasets::ImageBatches cpu(folder, {}, Device::cuda(), options);
    options.decode_on_device = true;
    options.device_decode_share = 1.0;
    datasets::ImageBatches gpu(folder, {}, Device::cuda(), options);
    const auto expected = epoch_of(cpu, 1), got = epoch_of(gpu, 1);
    REQUIRE(got.size() == expected.size());
    for (size_t b = 0; b < got.size(); ++b) {
      REQUIRE(got[b].size() == expected[b].size());
      const size_t n = got[b].size() / (IMAGE + 1);
      for (size_t i = 0; i < n; ++i) {
        const std::string& path = folder.paths[b * 4 + i];
        INFO(path);
        CHECK(got[b][n * IMAGE + i] == expected[b][n * IMAGE + i]);  // the label
        double sum = 0;
        for (size_t v = i * IMAGE; v < (i + 1) * IMAGE; ++v) sum += std::fabs(got[b][v] - expected[b][v]);
        const double mean = sum / IMAGE * 255.0;
        MESSAGE(path, ": mean |GPU - CPU| ", mean, " of 255");
        // Gray and CMYK files were the workers' in both loaders: the same bits.
        const bool workers = std::equal(got[b].begin() + static_cast<std::ptrdiff_t>(i * IMAGE),
                                        got[b].begin() + static_cast<std::ptrdiff_t>((i + 1) * IMAGE),
                                        expected[b].begin() + static_cast<std::ptrdiff_t>(i * IMAGE));
        if (path.find("/c.jpg") != std::string::npos || path.find("cats/e.jpg") != std::string::npos) {
          CHECK(workers);
        } else {
          CHECK(mean <= MEAN_DIFFERENCE);
        }
      }
    }
    CHECK(gpu.device_decoded_images() > 0);
    CHECK(gpu.device_decoded_images() < gpu.images_prepared());  // gray and CMYK: the workers'
    CHECK(cpu.device_decoded_images() == 0);
    MESSAGE("nvJPEG decoded ", gpu.device_decoded_images(), " of ", gpu.images_prepared(), " images (",
            gpu.device_decoder_backend(), ")");
  }
}

TEST_CASE("the loader decoding on the GPU: the same batches with 1 or 2 workers; share 0 is the CPU loader") {
  if (no_nvjpeg()) return;
  test::TempDir dir;
  const datasets::ImageFolder folder = corpus_folder(dir);
  datasets::ImageBatchOptions options = corpus_batches(true);
  datasets::ImageBatches cpu(folder, {}, Device::cuda(), options);
  options.decode_on_device = true;
  options.device_decode_share = 0.0;
  datasets::ImageBatches none(folder, {}, Device::cuda(), options);
  options.device_decode_share = 0.5;
  datasets::ImageBatches half(folder, {}, Device::cuda(), options);
  options.workers = 1;
  datasets::ImageBatches half_one_worker(folder, {}, Device::cuda(), options);
  for (const int64_t epoch : {1, 2}) {
    INFO("epoch ", epoch);
    const auto reference = epoch_of(cpu, epoch);
    CHECK(epoch_of(none, epoch) == reference);
    const auto shared = epoch_of(half, epoch);
    CHECK(epoch_of(half_one_worker, epoch) == shared);
  }
  CHECK(none.device_decoded_images() == 0);
  CHECK(half.device_decoded_images() > 0);
  CHECK(half_one_worker.device_decoded_images() > 0);
}

TEST_CASE("the loader decoding on the GPU refuses a cache and a share outside [0, 1]") {
  if (no_nvjpeg()) return;
  test::TempDir dir;
  const datasets::ImageFolder folder = corpus_folder(dir);
  datasets::ImageBatchOptions options = corpus_batches(true);
  options.decode_on_device = true;
  std::vector<uint8_t> cache(folder.paths.size() * IMAGE);
  test::check_message(test::error_of([&] { datasets::ImageBatches(folder, cache, Device::cuda(), options); }),
                      {"decoding on the GPU", "cached"});
  options.device_decode_share = 1.5;
  test::check_message(test::error_of([&] { datasets::ImageBatches(folder, {}, Device::cuda(), options); }),
                      {"share", "1.5"});
}
