// kernels/vendor/cudnn_conv.h in a build that found no cuDNN (see the top-level CMakeLists.txt):
// cudnn_available() says so, and so set_vendor_libraries(true) refuses: the dispatch point never
// calls the ops' vendor:: variants (core/ops/conv2d.h, core/ops/pool.h). They and the cudnn_*
// functions exist all the same, for the build to link, and refuse too.
#include "core/error.h"
#include "core/ops/conv2d.h"
#include "core/ops/pool.h"
#include "kernels/vendor/cudnn_conv.h"

namespace engine::cuda::vendor {
namespace {

const char* const WHY =
    "this build has no cuDNN (none was found when it was configured: rerun cmake with "
    "-DCUDNN_ROOT=<folder with include/cudnn.h and lib/libcudnn.so*>)";

[[noreturn]] void refuse() { throw DeviceError(WHY); }

}  // namespace

bool cudnn_available(std::string* why_not) {
  if (why_not) *why_not = WHY;
  return false;
}

std::string cudnn_version() { return "no cuDNN"; }

void cudnn_conv2d_forward(const Conv2dGeometry&, const Tensor&, const Tensor&, Tensor&, bool) {
  refuse();
}
void cudnn_conv2d_backward_data(const Conv2dGeometry&, const Tensor&, const Tensor&, Tensor&,
                                bool) {
  refuse();
}
void cudnn_conv2d_backward_filter(const Conv2dGeometry&, const Tensor&, const Tensor&, Tensor&,
                                  bool) {
  refuse();
}
void cudnn_conv2d_forward_krsc(const Conv2dGeometry&, const Tensor&, const Tensor&, Tensor&,
                               bool) {
  refuse();
}
void cudnn_conv2d_backward_data_krsc(const Conv2dGeometry&, const Tensor&, const Tensor&, Tensor&,
                                     bool) {
  refuse();
}
void cudnn_conv2d_backward_filter_krsc(const Conv2dGeometry&, const Tensor&, const Tensor&,
                                       Tensor&, bool) {
  refuse();
}
void cudnn_max_pool2d_forward(const Conv2dGeometry&, const Tensor&, Tensor&) { refuse(); }
void cudnn_max_pool2d_backward(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&,
                               Tensor&) {
  refuse();
}

}  // namespace engine::cuda::vendor

namespace engine::vendor {

void conv2d_forward(const Conv2dGeometry&, const Tensor&, const Tensor&, Tensor&) {
  cuda::vendor::refuse();
}
void conv2d_backward_data(const Conv2dGeometry&, const Tensor&, const Tensor&, Tensor&) {
  cuda::vendor::refuse();
}
void conv2d_backward_filter(const Conv2dGeometry&, const Tensor&, const Tensor&, Tensor&) {
  cuda::vendor::refuse();
}
void max_pool2d_forward(const Conv2dGeometry&, const Tensor&, Tensor&) { cuda::vendor::refuse(); }
void max_pool2d_backward(const Conv2dGeometry&, const Tensor&, const Tensor&, const Tensor&,
                         Tensor&) {
  cuda::vendor::refuse();
}

}  // namespace engine::vendor
