// --device cudnn: CudaBackend::set_vendor_libraries. When on, matmul runs on cuBLAS and
// convolutions and max pooling on cuDNN (kernels/vendor/), everything else on our kernels: the
// articles' "GPU + cuDNN" column, and the yardstick for our kernels. Each of those ops checks
// vendor() at its top and hands the call over.
#include "core/error.h"
#include "kernels/cuda_backend.h"
#include "kernels/vendor/cublas_gemm.h"
#include "kernels/vendor/cudnn_conv.h"

namespace engine::cuda {

void CudaBackend::set_vendor_libraries(bool enabled) {
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
