// JPEG decoding on a device, for the image loader's --decode-on gpu (datasets/image_batches.h):
// nvJPEG on a GPU (kernels/jpeg_gpu.h), where the build has CUDA and nvJPEG. Here so that the
// loader, which sits beside core/, reaches the GPU's decoder through core/ as it reaches every
// other device service.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"

namespace engine {

class DeviceJpegDecoder {
 public:
  // Up to `batch` images a call, resized to height x width, on `device` (a GPU). Throws
  // engine::Error where the build has no CUDA or no nvJPEG, or nvJPEG cannot start.
  DeviceJpegDecoder(Device device, int batch, int height, int width);
  ~DeviceJpegDecoder();
  DeviceJpegDecoder(const DeviceJpegDecoder&) = delete;
  DeviceJpegDecoder& operator=(const DeviceJpegDecoder&) = delete;

  // Whether this build can decode JPEGs on a GPU (CUDA and nvJPEG found at configure time).
  static bool built();

  // Which of nvJPEG's backends decodes: "hardware JPEG engines" or "CUDA kernels".
  std::string backend() const;
  // As cuda::GpuJpegDecoder::decode: files[i] into the height * width * 3 bytes at targets[i]
  // (device or pinned host memory); per file, whether it was decoded here.
  std::vector<bool> decode(const std::vector<const std::vector<uint8_t>*>& files,
                           const std::vector<uint8_t*>& targets);

 private:
  struct Decoder;
  std::unique_ptr<Decoder> decoder_;
};

}  // namespace engine
