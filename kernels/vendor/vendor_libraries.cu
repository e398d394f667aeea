// --device cudnn: CudaDevice::set_vendor_libraries. When on, matmul runs on cuBLAS and
// convolutions and max pooling on cuDNN, everything else on our kernels: the articles' "GPU +
// cuDNN" column, and the yardstick for our kernels. The kernels never look at the setting:
// the dispatch point (core/dispatch.h) reads vendor_libraries() and calls the op's vendor::
// variant instead of its cuda:: one (vendor::matmul in kernels/vendor/cublas_gemm.cu, the
// convolutions and pooling in kernels/vendor/cudnn_conv.cu).
#include "core/error.h"
#include "kernels/cuda_device.h"
#include "kernels/vendor/cublas_gemm.h"
#include "kernels/vendor/cudnn_conv.h"

namespace engine::cuda {

void CudaDevice::set_vendor_libraries(bool enabled) {
  if (enabled && vendor_libraries_.empty()) {
    // cudnn_available() also creates cuDNN's handle, which allocates device memory: here,
    // before any training step can be recorded into a CUDA graph.
    std::string why;
    if (!vendor::cudnn_available(&why)) throw DeviceError("--device cudnn: " + why);
    vendor_libraries_ = vendor::cublas_version() + " + " + vendor::cudnn_version();
  }
  vendor_ = enabled;
}

}  // namespace engine::cuda
