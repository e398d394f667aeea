// The costs and descriptions of op calls (core/op_cost.h).
#include "core/op_cost.h"

#include <cstdio>

namespace engine {

OpCost matmul_cost(int64_t m, int64_t n, int64_t k, size_t element_bytes) {
  const double e = static_cast<double>(element_bytes);
  return {2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k),
          e * static_cast<double>(m * k + k * n + m * n)};
}

OpCost conv2d_cost(const Conv2dGeometry& g) {
  const double flops = 2.0 * static_cast<double>(g.gemm_m()) * static_cast<double>(g.gemm_n()) *
                       static_cast<double>(g.gemm_k());
  const double bytes =
      4.0 * static_cast<double>(numel(g.x_shape()) + numel(g.w_shape()) + numel(g.y_shape()));
  return {flops, bytes};
}

OpCost elementwise_cost(int64_t elements, double flops_per_element, int tensors) {
  const double n = static_cast<double>(elements);
  return {n * flops_per_element, 4.0 * n * tensors};
}

std::string si(double value, const char* unit) {
  char text[32];
  if (value >= 1e12)
    std::snprintf(text, sizeof text, "%.2f T%s", value / 1e12, unit);
  else if (value >= 1e9)
    std::snprintf(text, sizeof text, "%.2f G%s", value / 1e9, unit);
  else if (value >= 1e6)
    std::snprintf(text, sizeof text, "%.2f M%s", value / 1e6, unit);
  else if (value >= 1e3)
    std::snprintf(text, sizeof text, "%.2f k%s", value / 1e3, unit);
  else
    std::snprintf(text, sizeof text, "%.0f %s", value, unit);
  return text;
}

double tensor_bytes(std::initializer_list<const Tensor*> tensors) {
  double bytes = 0.0;
  for (const Tensor* t : tensors) bytes += t->defined() ? static_cast<double>(t->nbytes()) : 0.0;
  return bytes;
}

OpCost mixed_cost(const Tensor& shape_of, double flops_per_element,
                  std::initializer_list<const Tensor*> tensors) {
  return {flops_per_element * static_cast<double>(shape_of.numel()), tensor_bytes(tensors)};
}

std::string dims(const Tensor& t) {
  std::string s;
  for (int i = 0; i < t.ndim(); ++i) s += (i ? "x" : "") + std::to_string(t.dim(i));
  return s.empty() ? "scalar" : s;
}

std::string conv_shape(const Conv2dGeometry& g) {
  return std::to_string(g.batch) + "x" + std::to_string(g.in_h) + "x" + std::to_string(g.in_w) +
         "x" + std::to_string(g.in_c) + " * " + std::to_string(g.kernel_h) + "x" +
         std::to_string(g.kernel_w) + "x" + std::to_string(g.out_c);
}

}  // namespace engine
