// CHECK_CUDNN: the cuDNN member of the error macro family (kernels/cuda_check.h). A failed call
// throws engine::DeviceError naming the call, the file and the line, cuDNN's status and its
// last error message, e.g.
//   cuDNN error: cudnnConvolutionForward(...) failed at .../kernels/vendor/cudnn_conv.cu:416:
//   CUDNN_STATUS_NOT_SUPPORTED (...)
#pragma once
#include <cudnn.h>

namespace engine::cuda::vendor {

[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file,
                                    int line);

}  // namespace engine::cuda::vendor

#define CHECK_CUDNN(call)                                                                  \
  do {                                                                                     \
    const cudnnStatus_t check_cudnn_status_ = (call);                                      \
    if (check_cudnn_status_ != CUDNN_STATUS_SUCCESS)                                       \
      ::engine::cuda::vendor::throw_cudnn_error(check_cudnn_status_, #call, __FILE__, __LINE__); \
  } while (0)
