// JPEG decoding on a device (device_jpeg.h): the GPU's decoder where the build has CUDA.
#include "core/device_jpeg.h"

#include "core/error.h"
#if defined(ENGINE_WITH_CUDA)
#include "kernels/jpeg_gpu.h"
#endif

namespace engine {

#if defined(ENGINE_WITH_CUDA)
struct DeviceJpegDecoder::Decoder : cuda::GpuJpegDecoder {
  using GpuJpegDecoder::GpuJpegDecoder;
};
#else
struct DeviceJpegDecoder::Decoder {
  std::string backend() const { return {}; }
  std::vector<bool> decode(const std::vector<const std::vector<uint8_t>*>&, const std::vector<uint8_t*>&) {
    return {};
  }
};
#endif

DeviceJpegDecoder::DeviceJpegDecoder(Device device, int batch, int height, int width) {
  ENGINE_CHECK(!device.is_cpu(), "decoding JPEGs on a device needs a GPU, not ", to_string(device));
#if defined(ENGINE_WITH_CUDA)
  decoder_ = std::make_unique<Decoder>(batch, height, width);
#else
  (void)batch, (void)height, (void)width;
  throw Error("decoding JPEGs on the GPU: this build has no CUDA");
#endif
}

DeviceJpegDecoder::~DeviceJpegDecoder() = default;

bool DeviceJpegDecoder::built() {
#if defined(ENGINE_WITH_CUDA)
  return cuda::nvjpeg_built();
#else
  return false;
#endif
}

std::string DeviceJpegDecoder::backend() const { return decoder_->backend(); }

std::vector<bool> DeviceJpegDecoder::decode(const std::vector<const std::vector<uint8_t>*>& files,
                                            const std::vector<uint8_t*>& targets) {
  return decoder_->decode(files, targets);
}

}  // namespace engine
