// The JPEG decoders alone, for Dogs vs Cats' loader (issue 25, "a loader that keeps up"): every
// training image of a folder, read into memory once, decoded and resized to the model's input
// by the CPU's decoder (libjpeg-turbo, datasets/jpeg_image.h) on --workers threads and by the
// GPU's (nvJPEG, kernels/jpeg_gpu.h) in batches, a few passes each; images per second for both,
// how many files the GPU left to the CPU, and how far the two decoders' pixels differ.
//
//   build/apps/jpeg_bench --data-dir DIR [--passes 3] [--workers 0] [--batch 32]
//
// DIR is the Keras layout dogs_vs_cats reads (datasets/make_dogs_cats writes a synthetic one);
// only DIR/train is used. The loader's own throughput (decode + augment + copy, by worker
// count) is dogs_vs_cats --data-scaling; this isolates the decode.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "apps/common/app_flags.h"
#include "core/tensor.h"
#include "datasets/image_folder.h"
#include "datasets/jpeg_image.h"
#include "kernels/jpeg_gpu.h"

using namespace engine;

namespace {

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The CPU decoder over every file into `out` (count x side x side x 3), on `threads` threads.
void decode_on_cpu(const std::vector<std::vector<uint8_t>>& files, const std::vector<std::string>& names,
                   int side, int threads, std::vector<uint8_t>& out) {
  const size_t image = static_cast<size_t>(side) * side * 3;
  const auto count = static_cast<int64_t>(files.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4)
  for (int64_t i = 0; i < count; ++i) {
    const auto k = static_cast<size_t>(i);
    datasets::decode_jpeg(files[k].data(), files[k].size(), names[k], side, side, out.data() + k * image);
  }
}

}  // namespace

int main(int argc, char** argv) {
  apps::Flags flags{"The JPEG decoders alone: libjpeg-turbo on the CPU against nvJPEG on the GPU", "jpeg_bench"};
  std::string data_dir = "data/dogs_vs_cats";
  int passes = 3, workers = 0, batch = 32, side = 150;
  flags.option("--data-dir", data_dir, "a Keras folder tree; its train/ images are decoded");
  flags.option("--passes", passes, "passes over the images, each timed").check(apps::finite_in(1, 1000));
  flags.option("--workers", workers, "CPU decoding threads (0: every core)").check(apps::finite_in(0, 1024));
  flags.option("--batch", batch, "images a GPU decode call").check(apps::finite_in(1, 4096));
  flags.option("--image-size", side, "side of the square the images are resized to")
      .check(apps::finite_in(1, 4096));
  return apps::run_app(flags, argc, argv, [&]() {
    const int threads = workers > 0 ? workers : omp_get_max_threads();
    datasets::ImageFolder train = datasets::scan_image_folder(data_dir + "/train");
    std::vector<std::vector<uint8_t>> files;
    size_t bytes = 0;
    for (const std::string& path : train.paths) {
      files.push_back(read_file(path));
      bytes += files.back().size();
    }
    const auto count = static_cast<int64_t>(files.size());
    const size_t image = static_cast<size_t>(side) * side * 3;
    std::printf("%lld files of %s/train (%.1f MB) in memory, decoded to %dx%d RGB, %d passes\n",
                static_cast<long long>(count), data_dir.c_str(), static_cast<double>(bytes) / 1e6, side, side,
                passes);

    std::vector<uint8_t> cpu(static_cast<size_t>(count) * image);
    double cpu_best = 1e30;
    for (int p = 0; p < passes; ++p) {
      const auto start = std::chrono::steady_clock::now();
      decode_on_cpu(files, train.paths, side, threads, cpu);
      cpu_best = std::min(cpu_best, seconds_since(start));
    }
    std::printf("CPU, libjpeg-turbo, %d thread%s: %.3f s a pass (the best), %.0f images/s, %.3f ms an image a thread\n",
                threads, threads == 1 ? "" : "s", cpu_best, static_cast<double>(count) / cpu_best,
                cpu_best * threads / static_cast<double>(count) * 1e3);

    if (!cuda::nvjpeg_built()) {
      std::printf("GPU: not measured: this build has no nvJPEG\n");
      return 0;
    }
    cuda::GpuJpegDecoder decoder(batch, side, side);
    const Tensor device_out = Tensor::empty({count * static_cast<int64_t>(image)}, DType::U8, Device::cuda());
    uint8_t* out = device_out.data<uint8_t>();
    double gpu_best = 1e30;
    int64_t left = 0;
    std::vector<bool> taken_all;
    for (int p = 0; p < passes; ++p) {
      taken_all.clear();
      left = 0;
      const auto start = std::chrono::steady_clock::now();
      for (int64_t first = 0; first < count; first += batch) {
        std::vector<const std::vector<uint8_t>*> chunk;
        std::vector<uint8_t*> targets;
        for (int64_t i = first; i < std::min(count, first + batch); ++i) {
          chunk.push_back(&files[static_cast<size_t>(i)]);
          targets.push_back(out + static_cast<size_t>(i) * image);
        }
        const std::vector<bool> taken = decoder.decode(chunk, targets);
        for (const bool t : taken) left += t ? 0 : 1;
        taken_all.insert(taken_all.end(), taken.begin(), taken.end());
      }
      gpu_best = std::min(gpu_best, seconds_since(start));
    }
    std::printf("GPU, nvJPEG (%s), batches of %d, one call at a time: %.3f s a pass (the best), %.0f images/s "
                "of the %lld it took; %lld files left to the CPU (gray, CMYK or refused)\n",
                decoder.backend().c_str(), batch, gpu_best, static_cast<double>(count - left) / gpu_best,
                static_cast<long long>(count - left), static_cast<long long>(left));

    // The two decoders' pixels, over the images both decoded.
    const std::vector<uint8_t> gpu = device_out.to_bytes();
    double sum = 0;
    int largest = 0;
    int64_t compared = 0;
    for (int64_t i = 0; i < count; ++i) {
      if (!taken_all[static_cast<size_t>(i)]) continue;
      ++compared;
      for (size_t b = static_cast<size_t>(i) * image; b < static_cast<size_t>(i + 1) * image; ++b) {
        const int d = std::abs(static_cast<int>(gpu[b]) - static_cast<int>(cpu[b]));
        sum += d;
        largest = std::max(largest, d);
      }
    }
    std::printf("GPU against CPU pixels over %lld images: mean |difference| %.3f, largest %d (of 255)\n",
                static_cast<long long>(compared),
                compared > 0 ? sum / (static_cast<double>(compared) * static_cast<double>(image)) : 0.0, largest);
    return 0;
  });
}
