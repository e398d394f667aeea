// reshape and flatten: views, and the rules that pass gradients through them (core/ops/shape.h).
#include "core/ops/shape.h"

#include "core/autograd.h"
#include "core/error.h"

namespace engine {
namespace {

class ReshapeNode final : public Node {
 public:
  explicit ReshapeNode(const Tensor& x) : Node({x}) {}
  const char* name() const override { return "reshape"; }
  std::vector<Tensor> backward(const Tensor& dy) override {
    return {dy.view(inputs()[0].shape())};
  }
  std::vector<Tensor> vjp(int64_t K, const Tensor& dy, const std::vector<bool>&) override {
    return {dy.view(stacked_shape(K, inputs()[0].shape()))};
  }
  bool has_jvp() const override { return true; }
  Tensor jvp(int64_t K, const std::vector<Tensor>& t) override {
    return t[0].view(stacked_shape(K, output_shape()));
  }
};

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  ENGINE_CHECK(x.defined(), "reshape: x is undefined");
  Tensor y = x.view(shape);
  return record(y, std::make_shared<ReshapeNode>(x));
}

Tensor flatten(const Tensor& x) {
  ENGINE_CHECK(x.defined() && x.ndim() >= 1, "flatten: needs a tensor with a batch dimension");
  const int64_t rows = x.dim(0);
  return reshape(x, {rows, rows == 0 ? 0 : x.numel() / rows});
}

}  // namespace engine
