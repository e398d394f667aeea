// --device cudnn (kernels/vendor/): cuDNN's convolutions and max pooling and cuBLAS' matmul
// against double-precision direct loops written here, at odd sizes (strides 1 and 2, valid and
// same padding, Keras' odd padding at the bottom/right, even and 1x1 kernels) and at every conv
// and pool shape of the seed models (batch 2); FP32 that really is FP32; the ops recorded into a
// CUDA graph; and whole training steps on cuBLAS + cuDNN against our kernels.
//
// Tolerances, per element: |got - want| <= rel * sum|terms| + floor * max(sum|terms|).
//   FP32: rel = 2 T U for a sum of T terms (U = 2^-24: Higham's gamma_T, summation in any order,
//     with room for cuDNN's split reductions). The floor, 1e-5 of the largest output's scale,
//     admits algorithms that transform whole tiles (Winograd, FFT), whose rounding is relative
//     to the tile, not to each sum. An indexing or padding mistake errs by O(1) of the scale.
//   TF32 (--tf32): operands rounded to 10-bit mantissas (2^-11 each): rel = 2^-9 + 2 T U, floor
//     1e-4.
//   Pooling: the maximum is exact (bitwise); gradients add at most 4 values (overlapping windows).
// Outputs are poisoned with NaN first, so an element an op forgets to write fails.
// Without a GPU, gpu_skip_main.cpp exits 77 (ctest: "Skipped"); a build without cuDNN runs a
// stub that says so and exits 77 as well (tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/conv_geometry.h"
#include "core/device_services.h"
#include "core/ops/conv2d.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/ops/pool.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "kernels/vendor/cudnn_conv.h"
#include "nn/layers.h"
#include "nn/sequential.h"

using namespace engine;
// The cuBLAS/cuDNN calls themselves (kernels/vendor/cudnn_conv.h); engine::vendor holds the ops'
// vendor variants (core/ops/matmul.h, conv2d.h, pool.h), which raw:: runs under --device cudnn.
namespace cuda_vendor = engine::cuda::vendor;

namespace {

constexpr double U = 1.0 / 16777216.0;  // float32 unit roundoff, 2^-24
const float NaN = std::numeric_limits<float>::quiet_NaN();

Device gpu() { return Device::cuda(); }
DeviceServices& gpu_services() { return device_services(gpu()); }

// --device cudnn for one scope, back to our kernels (and FP32) at its end.
class VendorLibraries {
 public:
  explicit VendorLibraries(bool tf32 = false) {
    gpu_services().set_vendor_libraries(true);
    gpu_services().set_tf32(tf32);
  }
  ~VendorLibraries() {
    gpu_services().set_vendor_libraries(false);
    gpu_services().set_tf32(false);
  }
  VendorLibraries(const VendorLibraries&) = delete;
  VendorLibraries& operator=(const VendorLibraries&) = delete;
};

std::vector<float> uniform(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Generator rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

size_t count(const Shape& shape) { return static_cast<size_t>(numel(shape)); }

Tensor on_gpu(const std::vector<float>& v, const Shape& shape) {
  return Tensor::from_vector(v, shape, gpu());
}
Tensor poisoned(const Shape& shape) { return Tensor::full(shape, NaN, gpu()); }

// A reference result: each element's value and the sum of |terms| its rounding scales with.
struct Ref {
  std::vector<double> value, magnitude;
  explicit Ref(size_t n = 0) : value(n, 0.0), magnitude(n, 0.0) {}
  void add(size_t i, double term) {
    value[i] += term;
    magnitude[i] += std::fabs(term);
  }
};

void expect_close(const std::string& what, const std::vector<float>& got, const Ref& want,
                  double rel, double floor_fraction) {
  REQUIRE(got.size() == want.value.size());
  double scale = 0.0;
  for (double m : want.magnitude) scale = std::max(scale, m);
  const double floor = floor_fraction * scale;
  size_t bad = 0, worst = 0;
  double worst_ratio = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double bound = rel * want.magnitude[i] + floor;
    const double err = std::fabs(static_cast<double>(got[i]) - want.value[i]);
    const double ratio = err / std::max(bound, 1e-300);
    if (!(err <= bound)) ++bad;  // NaN fails too
    if (!(ratio <= worst_ratio)) {
      worst_ratio = ratio;
      worst = i;
    }
  }
  std::ostringstream out;
  out << what << ": " << bad << " of " << got.size() << " elements off; worst at " << worst
      << ": got " << got[worst] << ", want " << want.value[worst] << ", error/bound "
      << worst_ratio;
  CHECK_MESSAGE(bad == 0, out.str());
}

// ---- convolution references (NHWC, Keras filters, zero padding) -------------------------------

size_t x_index(const Conv2dGeometry& g, int64_t n, int64_t h, int64_t w, int64_t c) {
  return static_cast<size_t>(((n * g.in_h + h) * g.in_w + w) * g.in_c + c);
}
size_t y_index(const Conv2dGeometry& g, int64_t n, int64_t h, int64_t w, int64_t c) {
  return static_cast<size_t>(((n * g.out_h + h) * g.out_w + w) * g.out_c + c);
}
size_t w_index(const Conv2dGeometry& g, int64_t kh, int64_t kw, int64_t ci, int64_t co) {
  return static_cast<size_t>(((kh * g.kernel_w + kw) * g.in_c + ci) * g.out_c + co);
}

// Calls visit(x index, w index, y index) for every product of the convolution.
template <typename Visit>
void for_each_term(const Conv2dGeometry& g, Visit visit) {
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
          const int64_t ih = oh * g.stride_h + kh - g.pad_top;
          if (ih < 0 || ih >= g.in_h) continue;
          for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
            const int64_t iw = ow * g.stride_w + kw - g.pad_left;
            if (iw < 0 || iw >= g.in_w) continue;
            for (int64_t ci = 0; ci < g.in_c; ++ci)
              for (int64_t co = 0; co < g.out_c; ++co)
                visit(x_index(g, n, ih, iw, ci), w_index(g, kh, kw, ci, co),
                      y_index(g, n, oh, ow, co));
          }
        }
}

struct ConvRefs {
  Ref y, dx, dw;
};
ConvRefs conv_references(const Conv2dGeometry& g, const std::vector<float>& x,
                         const std::vector<float>& w, const std::vector<float>& dy) {
  ConvRefs r{Ref(dy.size()), Ref(x.size()), Ref(w.size())};
  for_each_term(g, [&](size_t xi, size_t wi, size_t yi) {
    r.y.add(yi, double{x[xi]} * w[wi]);
    r.dx.add(xi, double{dy[yi]} * w[wi]);
    r.dw.add(wi, double{x[xi]} * dy[yi]);
  });
  return r;
}

struct ConvCase {
  const char* name;
  int64_t batch, h, w, c, kernel, filters, stride;
  Padding padding;
};

const ConvCase CONV_CASES[] = {
    {"5x7x3, 3x3, stride 1, valid", 2, 5, 7, 3, 3, 4, 1, Padding::Valid},
    {"5x7x3, 3x3, stride 2, same (even padding)", 2, 5, 7, 3, 3, 4, 2, Padding::Same},
    {"6x8x3, 3x3, stride 2, same (odd padding: bottom/right)", 2, 6, 8, 3, 3, 5, 2, Padding::Same},
    {"5x7x3, 2x2, stride 1, same (even kernel)", 3, 5, 7, 3, 2, 4, 1, Padding::Same},
    {"7x5x2, 5x5, stride 2, valid (rows left over)", 1, 7, 5, 2, 5, 3, 2, Padding::Valid},
    {"4x6x5, 1x1, stride 1", 2, 4, 6, 5, 1, 3, 1, Padding::Valid},
    {"1x1x3 image, 3x3, same, batch 1", 1, 1, 1, 3, 3, 2, 1, Padding::Same},
    // Seed 003's CIFAR-10 CNN and the Keras MNIST CNN, at batch 2.
    {"cifar conv1 32x32x3 -> 32", 2, 32, 32, 3, 3, 32, 1, Padding::Same},
    {"cifar conv2 32x32x32 -> 32", 2, 32, 32, 32, 3, 32, 1, Padding::Same},
    {"cifar conv3 16x16x32 -> 64", 2, 16, 16, 32, 3, 64, 1, Padding::Same},
    {"cifar conv4 16x16x64 -> 64", 2, 16, 16, 64, 3, 64, 1, Padding::Same},
    {"cifar conv5 8x8x64 -> 128", 2, 8, 8, 64, 3, 128, 1, Padding::Same},
    {"cifar conv6 8x8x128 -> 128", 2, 8, 8, 128, 3, 128, 1, Padding::Same},
    {"mnist conv1 28x28x1 -> 32", 2, 28, 28, 1, 3, 32, 1, Padding::Valid},
    {"mnist conv2 26x26x32 -> 64", 2, 26, 26, 32, 3, 64, 1, Padding::Valid},
};

Conv2dGeometry geometry_of(const ConvCase& c) {
  return conv2d_geometry({c.batch, c.h, c.w, c.c}, {c.kernel, c.kernel, c.c, c.filters}, c.stride,
                         c.stride, c.padding);
}

// FP32 tolerance (see the top): 2 T U per sum of T terms, and the floor for tile transforms.
double fp32_rel(double terms) { return 2.0 * terms * U; }
constexpr double FP32_FLOOR = 1e-5;

// The terms per element of each op: the tolerance's T.
double forward_terms(const Conv2dGeometry& g) { return static_cast<double>(g.gemm_k()); }
double backward_data_terms(const Conv2dGeometry& g) {
  return static_cast<double>(g.kernel_h * g.kernel_w * g.out_c);
}
double backward_filter_terms(const Conv2dGeometry& g) {
  return static_cast<double>(g.batch * g.out_h * g.out_w);
}

// ---- pooling references ------------------------------------------------------------------------

// Forward: each window's maximum (padding never wins); backward: dy to the window's first
// maximum in row-major order, added where windows overlap.
struct PoolRefs {
  Ref y, dx;
};
PoolRefs pool_references(const Conv2dGeometry& g, const std::vector<float>& x,
                         const std::vector<float>& dy) {
  PoolRefs r{Ref(dy.size()), Ref(x.size())};
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        for (int64_t c = 0; c < g.in_c; ++c) {
          double best = -std::numeric_limits<double>::infinity();
          size_t arg = 0;
          for (int64_t kh = 0; kh < g.kernel_h; ++kh)
            for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
              const int64_t ih = oh * g.stride_h + kh - g.pad_top;
              const int64_t iw = ow * g.stride_w + kw - g.pad_left;
              if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
              const size_t xi = x_index(g, n, ih, iw, c);
              if (x[xi] > best) {
                best = x[xi];
                arg = xi;
              }
            }
          const size_t yi = y_index(g, n, oh, ow, c);
          r.y.value[yi] = best;
          r.dx.add(arg, dy[yi]);
        }
  return r;
}

// Distinct values (a shuffled ramp), so that no window has a tie; all negative when asked, so
// that a padded zero would win if padding took part.
std::vector<float> distinct_values(size_t n, uint64_t seed, bool negative) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) / static_cast<float>(n);
  Generator rng(seed);
  for (size_t i = n; i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
  for (float& x : v) x = negative ? -0.25f - x : x - 0.5f;
  return v;
}

struct PoolCase {
  const char* name;
  int64_t batch, h, w, c, pool, stride;
  Padding padding;
  bool negative;
};

const PoolCase POOL_CASES[] = {
    {"5x7x3, 2x2, valid (rows left over)", 2, 5, 7, 3, 2, 2, Padding::Valid, false},
    {"7x9x2, 3x3 stride 2, valid (overlapping windows)", 2, 7, 9, 2, 3, 2, Padding::Valid, false},
    {"5x7x3, 2x2, same (odd padding: bottom/right), all negative", 2, 5, 7, 3, 2, 2, Padding::Same,
     true},
    {"4x5x2, 3x3 stride 1, same (padding all round), all negative", 1, 4, 5, 2, 3, 1, Padding::Same,
     true},
    {"cifar pool1 32x32x32", 2, 32, 32, 32, 2, 2, Padding::Valid, false},
    {"cifar pool2 16x16x64", 2, 16, 16, 64, 2, 2, Padding::Valid, false},
    {"mnist pool 24x24x64", 2, 24, 24, 64, 2, 2, Padding::Valid, false},
};

// ---- training ---------------------------------------------------------------------------------

// A small CNN and an MLP on random images; returns each epoch's loss and the final weights.
struct Trained {
  std::vector<double> losses;
  std::vector<float> weights;
};

Trained train(bool cnn, int epochs) {
  Generator rng(17);
  const int64_t n = 96;  // 3 full batches of 32: the second and third replay a CUDA graph
  std::vector<float> images(static_cast<size_t>(n * 9 * 9 * 2));
  std::vector<int32_t> labels(static_cast<size_t>(n));
  for (float& v : images) v = rng.uniform();
  for (int32_t& v : labels) v = static_cast<int32_t>(rng.below(10));
  const nn::Dataset data{Tensor::from_vector(images, {n, 9, 9, 2}, gpu()),
                         Tensor::from_ints(labels, {n}, gpu())};
  using Layers = std::vector<std::shared_ptr<nn::Layer>>;
  nn::Sequential model(cnn ? Layers{nn::conv2d(8, 3, Padding::Same, Activation::Relu),
                                    nn::max_pool2d(2), nn::conv2d(8, 3), nn::flatten(),
                                    nn::dense(10, Activation::Softmax)}
                           : Layers{nn::flatten(), nn::dense(32, Activation::Relu),
                                    nn::dense(10, Activation::Softmax)});
  model.build({9, 9, 2}, gpu(), 5);
  model.compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy);
  std::ostringstream log;
  nn::FitOptions options;
  options.epochs = epochs;
  options.batch_size = 32;
  options.seed = 3;
  options.out = &log;
  Trained t;
  for (const nn::EpochRecord& e : model.fit(data, options).epochs) t.losses.push_back(e.loss);
  t.weights = model.parameters().values.to_vector();
  return t;
}

}  // namespace

TEST_CASE("--device cudnn switches on and off, and the device's name lists the libraries") {
  const std::string ours = gpu_services().name();
  CHECK(ours.find("cuDNN") == std::string::npos);
  {
    VendorLibraries on;
    const std::string name = gpu_services().name();
    MESSAGE("--device cudnn: ", name);
    CHECK(name.find("cuBLAS") != std::string::npos);
    CHECK(name.find("cuDNN") != std::string::npos);
  }
  CHECK(gpu_services().name() == ours);
  std::string why;
  CHECK_MESSAGE(cuda_vendor::cudnn_available(&why), why);
}

namespace {
// One geometry's three cuDNN passes, at one precision, against conv_references.
void check_cudnn_against_double_loop(const ConvCase& c, bool tf32) {
  const std::string what = std::string(c.name) + (tf32 ? " (TF32)" : " (FP32)");
  const Conv2dGeometry g = geometry_of(c);
  const std::vector<float> x = uniform(count(g.x_shape()), 1);
  const std::vector<float> w = uniform(count(g.w_shape()), 2);
  const std::vector<float> dy = uniform(count(g.y_shape()), 3);
  const ConvRefs ref = conv_references(g, x, w, dy);
  Tensor y = poisoned(g.y_shape()), dx = poisoned(g.x_shape()), dw = poisoned(g.w_shape());
  const Tensor xg = on_gpu(x, g.x_shape()), wg = on_gpu(w, g.w_shape()),
               dyg = on_gpu(dy, g.y_shape());
  cuda_vendor::cudnn_conv2d_forward(g, xg, wg, y, tf32);
  cuda_vendor::cudnn_conv2d_backward_data(g, dyg, wg, dx, tf32);
  cuda_vendor::cudnn_conv2d_backward_filter(g, xg, dyg, dw, tf32);
  const double tf32_rel = tf32 ? 1.0 / 512 : 0.0, floor = tf32 ? 1e-4 : FP32_FLOOR;
  expect_close(what + " forward", y.to_vector(), ref.y, tf32_rel + fp32_rel(forward_terms(g)),
               floor);
  expect_close(what + " backward-data", dx.to_vector(), ref.dx,
               tf32_rel + fp32_rel(backward_data_terms(g)), floor);
  expect_close(what + " backward-filter", dw.to_vector(), ref.dw,
               tf32_rel + fp32_rel(backward_filter_terms(g)), floor);
}
}  // namespace

TEST_CASE("cuDNN convolutions (forward, backward-data, backward-filter) match a double loop") {
  // A subcase per geometry and precision, so that a slow tool (compute-sanitizer's initcheck
  // over cuDNN's kernels) can run them in separate processes: -sc="*(TF32)".
  for (const bool tf32 : {false, true}) {
    for (const ConvCase& c : CONV_CASES) {
      const std::string name = std::string(c.name) + (tf32 ? " (TF32)" : " (FP32)");
      SUBCASE(name.c_str()) { check_cudnn_against_double_loop(c, tf32); }
    }
  }
}

TEST_CASE("without --tf32, cuDNN convolutions are FP32: no TF32 rounding of the operands") {
  // x = 1 + 2^-12 everywhere and w = dy = 1: every product is 1 + 2^-12, which TF32 (10-bit
  // mantissa) rounds to 1, while FP32 sums T of them exactly (T (1 + 2^-12) needs 19 bits).
  // So FP32 gives T + T 2^-12 where TF32 would lose the T 2^-12; the check allows a quarter.
  const Conv2dGeometry g = conv2d_geometry({2, 8, 8, 16}, {3, 3, 16, 32}, 1, 1, Padding::Valid);
  const float one_plus = 1.0f + 1.0f / 4096;
  const Tensor x = Tensor::full(g.x_shape(), one_plus, gpu());
  const Tensor w = Tensor::full(g.w_shape(), 1.0f, gpu());
  const Tensor dy = Tensor::full(g.y_shape(), 1.0f, gpu());
  Tensor y = poisoned(g.y_shape()), dw = poisoned(g.w_shape()), dx = poisoned(g.x_shape());
  cuda_vendor::cudnn_conv2d_forward(g, x, w, y, false);
  cuda_vendor::cudnn_conv2d_backward_filter(g, x, dy, dw, false);
  cuda_vendor::cudnn_conv2d_backward_data(g, dy, Tensor::full(g.w_shape(), one_plus, gpu()), dx,
                                          false);
  const auto check_all = [](const char* what, const std::vector<float>& got, double terms) {
    const double want = terms * (1.0 + 1.0 / 4096), slack = 0.25 * terms / 4096;
    double worst = 0.0;
    for (float v : got) worst = std::max(worst, std::fabs(v - want));
    CHECK_MESSAGE(worst <= slack, what, ": worst |got - ", want, "| = ", worst,
                  " (TF32 would lose ", terms / 4096, ")");
  };
  check_all("forward", y.to_vector(), forward_terms(g));
  check_all("backward-filter", dw.to_vector(), backward_filter_terms(g));
  // backward-data: the centre pixel (3, 3) of each image is under every one of the 9 window
  // positions, so its sum has 9 * out_c terms.
  const std::vector<float> dxv = dx.to_vector();
  std::vector<float> centre;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t c = 0; c < g.in_c; ++c) centre.push_back(dxv[x_index(g, n, 3, 3, c)]);
  check_all("backward-data", centre, backward_data_terms(g));
}

TEST_CASE("cuDNN max pooling matches a double loop: windows, padding never wins, gradients") {
  for (const PoolCase& c : POOL_CASES) {
    const Conv2dGeometry g =
        pool2d_geometry({c.batch, c.h, c.w, c.c}, c.pool, c.pool, c.stride, c.stride, c.padding);
    const std::vector<float> x = distinct_values(count(g.x_shape()), 7, c.negative);
    const std::vector<float> dy = uniform(count(g.y_shape()), 8);
    const PoolRefs ref = pool_references(g, x, dy);
    const Tensor xg = on_gpu(x, g.x_shape()), dyg = on_gpu(dy, g.y_shape());
    Tensor y = poisoned(g.y_shape()), dx = poisoned(g.x_shape());
    cuda_vendor::cudnn_max_pool2d_forward(g, xg, y);
    cuda_vendor::cudnn_max_pool2d_backward(g, xg, y, dyg, dx);
    expect_close(std::string(c.name) + " forward", y.to_vector(), ref.y, 0.0, 0.0);
    expect_close(std::string(c.name) + " backward", dx.to_vector(), ref.dx, 4 * U, 0.0);
  }
}

TEST_CASE("--device cudnn: matmul on cuBLAS matches a double product, all transposes") {
  VendorLibraries on;
  struct Shape3 {
    int64_t M, N, K;
  };
  const Shape3 shapes[] = {{37, 19, 53}, {1, 1, 1000}, {128, 10, 784}, {5, 300, 7}, {32, 128, 784}};
  for (const Shape3& s : shapes)
    for (const bool ta : {false, true})
      for (const bool tb : {false, true})
        for (const float beta : {0.0f, 2.0f}) {
          const float alpha = beta == 0.0f ? 1.0f : 0.5f;
          const std::vector<float> a = uniform(static_cast<size_t>(s.M * s.K), 11);
          const std::vector<float> b = uniform(static_cast<size_t>(s.K * s.N), 12);
          const std::vector<float> c0 = uniform(static_cast<size_t>(s.M * s.N), 13);
          Ref ref(c0.size());
          for (int64_t m = 0; m < s.M; ++m)
            for (int64_t n = 0; n < s.N; ++n) {
              const size_t ci = static_cast<size_t>(m * s.N + n);
              for (int64_t k = 0; k < s.K; ++k) {
                const float av = a[static_cast<size_t>(ta ? k * s.M + m : m * s.K + k)];
                const float bv = b[static_cast<size_t>(tb ? n * s.K + k : k * s.N + n)];
                ref.add(ci, double{alpha} * av * bv);
              }
              if (beta != 0.0f) ref.add(ci, double{beta} * c0[ci]);
            }
          const Tensor ag = on_gpu(a, ta ? Shape{s.K, s.M} : Shape{s.M, s.K});
          const Tensor bg = on_gpu(b, tb ? Shape{s.N, s.K} : Shape{s.K, s.N});
          // beta = 0: C holds NaN, which cuBLAS must not read.
          Tensor c = beta == 0.0f ? poisoned({s.M, s.N}) : on_gpu(c0, {s.M, s.N});
          raw::matmul(ag, ta, bg, tb, c, alpha, beta);
          std::ostringstream what;
          what << s.M << "x" << s.N << "x" << s.K << (ta ? " A^T" : " A") << (tb ? " B^T" : " B")
               << " beta " << beta;
          expect_close(what.str(), c.to_vector(), ref, fp32_rel(static_cast<double>(s.K + 1)), 0.0);
        }
}

TEST_CASE("--device cudnn: the backend's convolution is cuDNN's, bitwise") {
  // While the GPU's vendor libraries are on (DeviceServices::vendor_libraries), the dispatch
  // point raw::conv2d_forward runs vendor::conv2d_forward (kernels/vendor/): the same plan and
  // algorithm, so the same bits (our implicit GEMM sums in another order). Forward only:
  // cuDNN's backward algorithms may add with atomics, in a different order each call.
  VendorLibraries on;
  const Conv2dGeometry g = geometry_of(CONV_CASES[2]);
  const Tensor x = on_gpu(uniform(count(g.x_shape()), 21), g.x_shape());
  const Tensor w = on_gpu(uniform(count(g.w_shape()), 22), g.w_shape());
  Tensor direct = poisoned(g.y_shape()), dispatched = poisoned(g.y_shape());
  cuda_vendor::cudnn_conv2d_forward(g, x, w, direct, false);
  raw::conv2d_forward(g, x, w, dispatched);
  CHECK(direct.to_vector() == dispatched.to_vector());
}

TEST_CASE("cuDNN ops recorded into a CUDA graph replay what they compute op by op") {
  VendorLibraries on;
  DeviceServices& services = gpu_services();
  // Geometry a runs once op by op first (its algorithms measured with cudnnFind); geometry b is
  // new to the process when it is recorded (cuDNN's heuristics choose, nothing runs).
  const Conv2dGeometry a = geometry_of(CONV_CASES[2]);
  const Conv2dGeometry b = conv2d_geometry({3, 11, 13, 6}, {3, 3, 6, 7}, 2, 2, Padding::Same);
  const Conv2dGeometry p = pool2d_geometry({2, 5, 7, 3}, 2, 2, 2, 2, Padding::Same);
  const std::vector<float> xa = uniform(count(a.x_shape()), 31),
                           wa = uniform(count(a.w_shape()), 32),
                           dya = uniform(count(a.y_shape()), 33),
                           xb = uniform(count(b.x_shape()), 34),
                           wb = uniform(count(b.w_shape()), 35),
                           xp = distinct_values(count(p.x_shape()), 36, true),
                           dyp = uniform(count(p.y_shape()), 37);
  const Tensor xag = on_gpu(xa, a.x_shape()), wag = on_gpu(wa, a.w_shape()),
               dyag = on_gpu(dya, a.y_shape()), xbg = on_gpu(xb, b.x_shape()),
               wbg = on_gpu(wb, b.w_shape()), xpg = on_gpu(xp, p.x_shape()),
               dypg = on_gpu(dyp, p.y_shape());
  Tensor ya = poisoned(a.y_shape()), dxa = poisoned(a.x_shape()), dwa = poisoned(a.w_shape());
  Tensor yb = poisoned(b.y_shape()), yp = poisoned(p.y_shape()), dxp = poisoned(p.x_shape());
  const auto step = [&] {
    raw::conv2d_forward(a, xag, wag, ya);
    raw::conv2d_backward_data(a, dyag, wag, dxa);
    raw::conv2d_backward_filter(a, xag, dyag, dwa);
    raw::conv2d_forward(b, xbg, wbg, yb);
    raw::max_pool2d_forward(p, xpg, yp);
    raw::max_pool2d_backward(p, xpg, yp, dypg, dxp);
  };
  raw::conv2d_forward(a, xag, wag, ya);
  raw::conv2d_backward_data(a, dyag, wag, dxa);
  raw::conv2d_backward_filter(a, xag, dyag, dwa);
  const std::unique_ptr<StepGraph> graph = services.capture(step);
  REQUIRE(graph != nullptr);
  for (Tensor* t : {&ya, &dxa, &dwa, &yb, &yp, &dxp}) raw::fill(*t, NaN);
  graph->replay();
  graph->replay();  // twice: a replay must not depend on what the last one left behind
  services.synchronize();
  const ConvRefs ra = conv_references(a, xa, wa, dya);
  const ConvRefs rb = conv_references(b, xb, wb, std::vector<float>(count(b.y_shape())));
  const PoolRefs rp = pool_references(p, xp, dyp);
  expect_close("replayed forward", ya.to_vector(), ra.y, fp32_rel(forward_terms(a)), FP32_FLOOR);
  expect_close("replayed backward-data", dxa.to_vector(), ra.dx,
               fp32_rel(backward_data_terms(a)), FP32_FLOOR);
  expect_close("replayed backward-filter", dwa.to_vector(), ra.dw,
               fp32_rel(backward_filter_terms(a)), FP32_FLOOR);
  expect_close("forward chosen while recording", yb.to_vector(), rb.y, fp32_rel(forward_terms(b)),
               FP32_FLOOR);
  expect_close("replayed pool forward", yp.to_vector(), rp.y, 0.0, 0.0);
  expect_close("replayed pool backward", dxp.to_vector(), rp.dx, 4 * U, 0.0);
}

TEST_CASE("--device cudnn trains like our kernels: an MLP (cuBLAS) and a small CNN (cuDNN)") {
  // Same seed, same data, same dropout-free models: only the order of float sums differs, so
  // after 6 Adam steps losses agree to ~1e-6 and weights to ~1e-6 of lr. Except where a
  // gradient is itself at rounding level: Adam's first steps move a weight by ~lr = 1e-3 in the
  // direction of its gradient's sign, whatever its size, so a few weights may differ by ~1e-3.
  // A wrong convolution or matmul changes nearly every gradient, hence nearly every weight.
  for (const bool cnn : {false, true}) {
    const Trained ours = train(cnn, 2);
    Trained theirs;
    {
      VendorLibraries on;
      theirs = train(cnn, 2);
    }
    const char* what = cnn ? "small CNN" : "MLP";
    REQUIRE(ours.losses.size() == theirs.losses.size());
    for (size_t e = 0; e < ours.losses.size(); ++e) {
      CHECK_MESSAGE(std::fabs(ours.losses[e] - theirs.losses[e]) <= 1e-3 * ours.losses[e], what,
                    " epoch ", e + 1, ": loss ", theirs.losses[e], " on cuBLAS/cuDNN vs ",
                    ours.losses[e], " on our kernels");
    }
    REQUIRE(ours.weights.size() == theirs.weights.size());
    size_t apart = 0;
    for (size_t i = 0; i < ours.weights.size(); ++i) {
      apart += std::fabs(ours.weights[i] - theirs.weights[i]) > 1e-5f ? 1 : 0;
    }
    CHECK_MESSAGE(apart <= ours.weights.size() / 100, what, ": ", apart, " of ",
                  ours.weights.size(), " weights differ by more than 1e-5 after 6 steps");
  }
}
