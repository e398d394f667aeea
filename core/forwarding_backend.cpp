// Every op of core/backend.h described once (name, operand sizes, cost) and handed to the
// wrapper's around_op (core/forwarding_backend.h).
#include "core/forwarding_backend.h"

#include <initializer_list>
#include <utility>

namespace engine {
namespace {

std::string dims(const Tensor& t) {
  std::string s;
  for (int i = 0; i < t.ndim(); ++i) s += (i ? "x" : "") + std::to_string(t.dim(i));
  return s.empty() ? "scalar" : s;
}

double tensor_bytes(std::initializer_list<const Tensor*> tensors) {
  double bytes = 0.0;
  for (const Tensor* t : tensors) bytes += t->defined() ? static_cast<double>(t->nbytes()) : 0.0;
  return bytes;
}

// Ops whose tensors differ in size (a bias, a row of labels): FLOPs per element of `shape_of`,
// bytes of the listed tensors. Ops over equal-sized arrays use elementwise_cost.
OpCost mixed_cost(const Tensor& shape_of, double flops_per_element,
                  std::initializer_list<const Tensor*> tensors) {
  return {flops_per_element * static_cast<double>(shape_of.numel()), tensor_bytes(tensors)};
}

std::string conv_shape(const Conv2dGeometry& g) {
  return std::to_string(g.batch) + "x" + std::to_string(g.in_h) + "x" + std::to_string(g.in_w) +
         "x" + std::to_string(g.in_c) + " * " + std::to_string(g.kernel_h) + "x" +
         std::to_string(g.kernel_w) + "x" + std::to_string(g.out_c);
}

}  // namespace

template <typename Call>
void ForwardingBackend::forward(const char* op, std::string shape, const OpCost& cost,
                                Call&& call) {
  around_op(OpCall{op, std::move(shape), cost}, OpRun(call));
}

void ForwardingBackend::copy_from_host(void* dst, const void* src, size_t bytes) {
  forward("copy host->device", si(static_cast<double>(bytes), "B"),
          {0.0, static_cast<double>(bytes)}, [&] { inner_.copy_from_host(dst, src, bytes); });
}

void ForwardingBackend::copy_to_host(void* dst, const void* src, size_t bytes) {
  forward("copy device->host", si(static_cast<double>(bytes), "B"),
          {0.0, static_cast<double>(bytes)}, [&] { inner_.copy_to_host(dst, src, bytes); });
}

void ForwardingBackend::copy_within(void* dst, const void* src, size_t bytes) {
  forward("copy device->device", si(static_cast<double>(bytes), "B"),
          {0.0, 2.0 * static_cast<double>(bytes)}, [&] { inner_.copy_within(dst, src, bytes); });
}

void ForwardingBackend::copy_from_pinned_async(void* dst, const void* src, size_t bytes) {
  forward("copy host->device (pinned, async)", si(static_cast<double>(bytes), "B"),
          {0.0, static_cast<double>(bytes)},
          [&] { inner_.copy_from_pinned_async(dst, src, bytes); });
}

void ForwardingBackend::fill(Tensor& y, float value) {
  forward("fill", dims(y), {0.0, tensor_bytes({&y})}, [&] { inner_.fill(y, value); });
}

void ForwardingBackend::matmul(const Tensor& a, bool ta, const Tensor& b, bool tb, Tensor& c,
                               float alpha, float beta) {
  const int64_t m = c.dim(0), n = c.dim(1), k = ta ? a.dim(0) : a.dim(1);
  const std::string shape = dims(a) + (ta ? "^T" : "") + " @ " + dims(b) + (tb ? "^T" : "");
  forward("matmul", shape, matmul_cost(m, n, k),
          [&] { inner_.matmul(a, ta, b, tb, c, alpha, beta); });
}

void ForwardingBackend::bias_activation_forward(Activation act, const Tensor& x, const Tensor& bias,
                                                Tensor& y) {
  forward("bias_activation_forward", dims(x), mixed_cost(y, 2.0, {&x, &bias, &y}),
          [&] { inner_.bias_activation_forward(act, x, bias, y); });
}

void ForwardingBackend::bias_activation_backward(Activation act, const Tensor& y, const Tensor& dy,
                                                 Tensor& dx, Tensor& dbias) {
  forward("bias_activation_backward", dims(y), mixed_cost(y, 2.0, {&y, &dy, &dx, &dbias}),
          [&] { inner_.bias_activation_backward(act, y, dy, dx, dbias); });
}

void ForwardingBackend::sum_rows(const Tensor& dy, Tensor& db) {
  forward("sum_rows", dims(dy), mixed_cost(dy, 1.0, {&dy, &db}), [&] { inner_.sum_rows(dy, db); });
}

void ForwardingBackend::binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& y) {
  forward("binary", dims(y), elementwise_cost(y.numel(), 1.0, 3),
          [&] { inner_.binary(op, a, b, y); });
}

void ForwardingBackend::axpby(float alpha, const Tensor& x, float beta, Tensor& y) {
  forward("axpby", dims(y), elementwise_cost(y.numel(), 3.0, 3),
          [&] { inner_.axpby(alpha, x, beta, y); });
}

void ForwardingBackend::activation_forward(Activation act, const Tensor& x, Tensor& y) {
  forward("activation_forward", dims(x), elementwise_cost(y.numel(), 1.0, 2),
          [&] { inner_.activation_forward(act, x, y); });
}

void ForwardingBackend::activation_backward(Activation act, const Tensor& y, const Tensor& dy,
                                            Tensor& dx) {
  forward("activation_backward", dims(y), elementwise_cost(y.numel(), 2.0, 3),
          [&] { inner_.activation_backward(act, y, dy, dx); });
}

void ForwardingBackend::softmax_forward(const Tensor& x, Tensor& y, bool log) {
  forward("softmax_forward", dims(x), elementwise_cost(y.numel(), 4.0, 2),
          [&] { inner_.softmax_forward(x, y, log); });
}

void ForwardingBackend::softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log) {
  forward("softmax_backward", dims(y), elementwise_cost(y.numel(), 3.0, 3),
          [&] { inner_.softmax_backward(y, dy, dx, log); });
}

void ForwardingBackend::softmax_cross_entropy_forward(const Tensor& logits, const Tensor& labels,
                                                      Tensor& probs, Tensor& loss) {
  forward("softmax_cross_entropy_forward", dims(logits),
          mixed_cost(logits, 4.0, {&logits, &labels, &probs, &loss}),
          [&] { inner_.softmax_cross_entropy_forward(logits, labels, probs, loss); });
}

void ForwardingBackend::softmax_cross_entropy_backward(const Tensor& probs, const Tensor& labels,
                                                       const Tensor& dloss, Tensor& dlogits) {
  forward("softmax_cross_entropy_backward", dims(probs),
          mixed_cost(probs, 2.0, {&probs, &labels, &dloss, &dlogits}),
          [&] { inner_.softmax_cross_entropy_backward(probs, labels, dloss, dlogits); });
}

void ForwardingBackend::binary_cross_entropy_forward(const Tensor& p, const Tensor& target,
                                                     Tensor& loss) {
  forward("binary_cross_entropy_forward", dims(p), elementwise_cost(p.numel(), 8.0, 3),
          [&] { inner_.binary_cross_entropy_forward(p, target, loss); });
}

void ForwardingBackend::binary_cross_entropy_backward(const Tensor& p, const Tensor& target,
                                                      const Tensor& dloss, Tensor& dp) {
  forward("binary_cross_entropy_backward", dims(p), elementwise_cost(p.numel(), 8.0, 4),
          [&] { inner_.binary_cross_entropy_backward(p, target, dloss, dp); });
}

void ForwardingBackend::sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& target,
                                                      Tensor& loss) {
  forward("sigmoid_cross_entropy_forward", dims(logits), elementwise_cost(logits.numel(), 6.0, 3),
          [&] { inner_.sigmoid_cross_entropy_forward(logits, target, loss); });
}

void ForwardingBackend::sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& target,
                                                       const Tensor& dloss, Tensor& dlogits) {
  forward("sigmoid_cross_entropy_backward", dims(logits), elementwise_cost(logits.numel(), 5.0, 4),
          [&] { inner_.sigmoid_cross_entropy_backward(logits, target, dloss, dlogits); });
}

void ForwardingBackend::dropout_forward(const Tensor& x, Tensor& y, float rate, uint64_t seed,
                                        const Tensor& step) {
  forward("dropout_forward", dims(x), elementwise_cost(x.numel(), 2.0, 2),
          [&] { inner_.dropout_forward(x, y, rate, seed, step); });
}

void ForwardingBackend::dropout_backward(const Tensor& dy, Tensor& dx, float rate, uint64_t seed,
                                         const Tensor& step) {
  forward("dropout_backward", dims(dy), elementwise_cost(dy.numel(), 2.0, 2),
          [&] { inner_.dropout_backward(dy, dx, rate, seed, step); });
}

void ForwardingBackend::random_normal(Tensor& y, float mean, float stddev, uint64_t seed) {
  forward("random_normal", dims(y), elementwise_cost(y.numel(), 20.0, 1),
          [&] { inner_.random_normal(y, mean, stddev, seed); });
}

void ForwardingBackend::sum(const Tensor& x, Tensor& y, float scale) {
  forward("sum", dims(x), mixed_cost(x, 1.0, {&x}), [&] { inner_.sum(x, y, scale); });
}

void ForwardingBackend::broadcast_scalar(const Tensor& s, float scale, Tensor& y) {
  forward("broadcast_scalar", dims(y), mixed_cost(y, 1.0, {&y}),
          [&] { inner_.broadcast_scalar(s, scale, y); });
}

void ForwardingBackend::gather_rows(const Tensor& x, const Tensor& index, Tensor& y) {
  forward("gather_rows", dims(y), {0.0, 2.0 * tensor_bytes({&y}) + tensor_bytes({&index})},
          [&] { inner_.gather_rows(x, index, y); });
}

void ForwardingBackend::augment_images(const Tensor& images, const Tensor& transforms, Tensor& out,
                                       float scale) {
  // Per output value: two 3-term affine coordinates and a scale: ~10 FLOPs.
  forward("augment_images", dims(out),
          {10.0 * static_cast<double>(out.numel()), tensor_bytes({&images, &transforms, &out})},
          [&] { inner_.augment_images(images, transforms, out, scale); });
}

void ForwardingBackend::count_correct(const Tensor& logits, const Tensor& labels, Tensor& count) {
  forward("count_correct", dims(logits), mixed_cost(logits, 1.0, {&logits}),
          [&] { inner_.count_correct(logits, labels, count); });
}

void ForwardingBackend::sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity, float lr,
                                   float momentum) {
  forward("sgd_update", dims(param), elementwise_cost(param.numel(), 4.0, 5),
          [&] { inner_.sgd_update(param, grad, velocity, lr, momentum); });
}

void ForwardingBackend::adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v,
                                    const AdamConfig& config, const Tensor& step) {
  // Read p, g, m, v; write p, m, v: 7 arrays; ~12 FLOPs with a square root.
  forward("adam_update", dims(param), elementwise_cost(param.numel(), 12.0, 7),
          [&] { inner_.adam_update(param, grad, m, v, config, step); });
}

void ForwardingBackend::increment(Tensor& counter) {
  forward("increment", "scalar", {1.0, 8.0}, [&] { inner_.increment(counter); });
}

void ForwardingBackend::conv2d_forward(const Conv2dGeometry& g, const Tensor& x, const Tensor& w,
                                       Tensor& y) {
  forward("conv2d_forward", conv_shape(g), conv2d_cost(g),
          [&] { inner_.conv2d_forward(g, x, w, y); });
}

void ForwardingBackend::conv2d_backward_data(const Conv2dGeometry& g, const Tensor& dy,
                                             const Tensor& w, Tensor& dx) {
  forward("conv2d_backward_data", conv_shape(g), conv2d_cost(g),
          [&] { inner_.conv2d_backward_data(g, dy, w, dx); });
}

void ForwardingBackend::conv2d_backward_filter(const Conv2dGeometry& g, const Tensor& x,
                                               const Tensor& dy, Tensor& dw) {
  forward("conv2d_backward_filter", conv_shape(g), conv2d_cost(g),
          [&] { inner_.conv2d_backward_filter(g, x, dy, dw); });
}

void ForwardingBackend::max_pool2d_forward(const Conv2dGeometry& g, const Tensor& x, Tensor& y) {
  forward(
      "max_pool2d_forward", dims(x),
      {static_cast<double>(numel(g.y_shape()) * g.kernel_h * g.kernel_w), tensor_bytes({&x, &y})},
      [&] { inner_.max_pool2d_forward(g, x, y); });
}

void ForwardingBackend::max_pool2d_backward(const Conv2dGeometry& g, const Tensor& x,
                                            const Tensor& y, const Tensor& dy, Tensor& dx) {
  forward("max_pool2d_backward", dims(x),
          {static_cast<double>(numel(g.y_shape()) * g.kernel_h * g.kernel_w),
           tensor_bytes({&x, &y, &dy, &dx})},
          [&] { inner_.max_pool2d_backward(g, x, y, dy, dx); });
}

void ForwardingBackend::rmsprop_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                                       float lr, float rho, float epsilon) {
  forward("rmsprop_update", dims(param), elementwise_cost(param.numel(), 8.0, 5),
          [&] { inner_.rmsprop_update(param, grad, mean_square, lr, rho, epsilon); });
}

void ForwardingBackend::adadelta_update(Tensor& param, const Tensor& grad, Tensor& mean_square,
                                        Tensor& mean_square_delta, float lr, float rho,
                                        float epsilon) {
  forward("adadelta_update", dims(param), elementwise_cost(param.numel(), 14.0, 7), [&] {
    inner_.adadelta_update(param, grad, mean_square, mean_square_delta, lr, rho, epsilon);
  });
}

void ForwardingBackend::elementwise_jvp(Activation act, const Tensor& y, const Tensor& t,
                                        Tensor& out) {
  forward("elementwise_jvp", dims(t), elementwise_cost(t.numel(), 2.0, 3),
          [&] { inner_.elementwise_jvp(act, y, t, out); });
}

void ForwardingBackend::strided_copy(const Tensor& x, Tensor& y,
                                     const std::array<int64_t, 3>& extent, const Walk3d& from,
                                     const Walk3d& to) {
  const double moved = 2.0 * 4.0 * static_cast<double>(extent[0] * extent[1] * extent[2]);
  forward("strided_copy", dims(y), {0.0, moved},
          [&] { inner_.strided_copy(x, y, extent, from, to); });
}

}  // namespace engine
