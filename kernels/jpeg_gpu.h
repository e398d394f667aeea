// JPEG decoding on the GPU with nvJPEG, where the build found it (ENGINE_WITH_NVJPEG: the CUDA
// toolkit's libnvjpeg, optional like cuDNN). For the image loader's --decode-on gpu
// (datasets/image_batches.h, through core/device_jpeg.h) and apps/jpeg_bench, which measures
// it against the CPU decoder (datasets/jpeg_image.h) on the same files.
//
// What it does with a batch: nvJPEG decodes every colour (3-component) JPEG at its own size
// into device memory, interleaved RGB, with the GPU's hardware JPEG engines where it has them
// (A100, H100: NVJPEG_BACKEND_HARDWARE) or CUDA kernels; then one kernel resizes each to
// height x width with the CPU path's fixed-point bilinear (same taps, same rounding), into
// height x width x 3 byte images wherever the caller says. Gray and CMYK files, and whatever
// nvJPEG refuses, are left to the caller (the CPU decoder), image by image.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace engine::cuda {

// Whether this build has nvJPEG.
bool nvjpeg_built();

class GpuJpegDecoder {
 public:
  // Up to `batch` images a call, resized to height x width, on a stream of its own on the
  // current GPU. Throws engine::Error where the build has no nvJPEG or nvJPEG cannot start.
  GpuJpegDecoder(int batch, int height, int width);
  ~GpuJpegDecoder();
  GpuJpegDecoder(const GpuJpegDecoder&) = delete;
  GpuJpegDecoder& operator=(const GpuJpegDecoder&) = delete;

  // Which of nvJPEG's backends decodes: "hardware JPEG engines" or "CUDA kernels".
  const std::string& backend() const;

  // Decodes files[i] (whole JPEG files in host memory) into the height * width * 3 bytes at
  // targets[i], for i < files.size() <= batch, and returns when they are written (from any
  // thread: it works on the GPU it was made on). A target is device memory or pinned host
  // memory (cudaMallocHost's, which the GPU writes across the bus). Returns, per file, whether
  // it was decoded here; the others' bytes are untouched, for the caller to fill.
  std::vector<bool> decode(const std::vector<const std::vector<uint8_t>*>& files,
                           const std::vector<uint8_t*>& targets);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace engine::cuda
