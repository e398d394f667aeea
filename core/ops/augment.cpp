// augment_images: its checks, dispatch point and cost (core/ops/augment.h).
#include "core/ops/augment.h"

#include "core/dispatch.h"
#include "core/op_checks.h"

namespace engine {
namespace raw {

void augment_images(const Tensor& images, const Tensor& transforms, Tensor& out, float scale) {
  detail::check_augment_images(images, transforms, out);
  // Per output value: two 3-term affine coordinates and a scale: ~10 FLOPs.
  dispatch(out,
           [&] {
             return OpCall{"augment_images", dims(out),
                           {10.0 * static_cast<double>(out.numel()),
                            tensor_bytes({&images, &transforms, &out})}};
           },
           [&] { cpu::augment_images(images, transforms, out, scale); },
           [&] { ENGINE_CUDA(cuda::augment_images(images, transforms, out, scale)); });
}

}  // namespace raw
}  // namespace engine
