// conv2d and max_pool2d on the CPU: the geometry against TensorFlow's padding rule, forward
// and gradients against double references (central differences through the ops at odd sizes,
// and the CPU's three convolution passes, cpu::conv2d_*, directly at sizes that run on the
// whole team in several chunks), tie-breaking and padding in pooling, error messages.
// Tolerances: tests/gradcheck.h (sum_tol, FD_TOL); GRADCHECK_VERBOSE=1 prints the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/conv_geometry.h"
#include "core/error.h"
#include "core/linearize.h"
#include "core/ops.h"
#include "core/rng.h"
#include "cpu/cpu_device.h"
#include "gradcheck.h"

using engine::Conv2dGeometry;
using engine::Padding;
using engine::Shape;
using engine::Tensor;
using gradcheck::FD_TOL;
using gradcheck::FLT_EPS;
using gradcheck::Input;
using gradcheck::sum_tol;
using gradcheck::Tolerance;

namespace {

// ---- double references, straight from the definitions in core/ops/conv2d.h and pool.h -----

// x[n, ih, iw, c] with ih = oh * stride_h + kh - pad_top (likewise iw), or -1 outside x.
int64_t x_index(const Conv2dGeometry& g, int64_t n, int64_t oh, int64_t ow, int64_t kh,
                int64_t kw, int64_t c) {
  const int64_t ih = oh * g.stride_h + kh - g.pad_top, iw = ow * g.stride_w + kw - g.pad_left;
  if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) return -1;
  return ((n * g.in_h + ih) * g.in_w + iw) * g.in_c + c;
}

int64_t y_index(const Conv2dGeometry& g, int64_t n, int64_t oh, int64_t ow, int64_t c) {
  return ((n * g.out_h + oh) * g.out_w + ow) * g.out_c + c;
}

int64_t w_index(const Conv2dGeometry& g, int64_t kh, int64_t kw, int64_t ci, int64_t co) {
  return ((kh * g.kernel_w + kw) * g.in_c + ci) * g.out_c + co;
}

// Calls f(y, x, w) with the flat indices of every (output, input, filter) product of the
// convolution that does not fall on padding.
template <typename F>
void for_each_product(const Conv2dGeometry& g, F&& f) {
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        for (int64_t kh = 0; kh < g.kernel_h; ++kh)
          for (int64_t kw = 0; kw < g.kernel_w; ++kw)
            for (int64_t ci = 0; ci < g.in_c; ++ci) {
              const int64_t xi = x_index(g, n, oh, ow, kh, kw, ci);
              if (xi < 0) continue;
              for (int64_t co = 0; co < g.out_c; ++co) {
                f(static_cast<size_t>(y_index(g, n, oh, ow, co)), static_cast<size_t>(xi),
                  static_cast<size_t>(w_index(g, kh, kw, ci, co)));
              }
            }
}

std::vector<double> ref_conv(const Conv2dGeometry& g, const std::vector<double>& x,
                             const std::vector<double>& w) {
  std::vector<double> y(static_cast<size_t>(engine::numel(g.y_shape())), 0.0);
  for_each_product(g, [&](size_t yi, size_t xi, size_t wi) { y[yi] += x[xi] * w[wi]; });
  return y;
}

std::vector<double> ref_conv_dx(const Conv2dGeometry& g, const std::vector<double>& dy,
                                const std::vector<double>& w) {
  std::vector<double> dx(static_cast<size_t>(engine::numel(g.x_shape())), 0.0);
  for_each_product(g, [&](size_t yi, size_t xi, size_t wi) { dx[xi] += dy[yi] * w[wi]; });
  return dx;
}

std::vector<double> ref_conv_dw(const Conv2dGeometry& g, const std::vector<double>& x,
                                const std::vector<double>& dy) {
  std::vector<double> dw(static_cast<size_t>(engine::numel(g.w_shape())), 0.0);
  for_each_product(g, [&](size_t yi, size_t xi, size_t wi) { dw[wi] += x[xi] * dy[yi]; });
  return dw;
}

std::vector<double> ref_max_pool(const Conv2dGeometry& g, const std::vector<double>& x) {
  std::vector<double> y(static_cast<size_t>(engine::numel(g.y_shape())),
                        -std::numeric_limits<double>::infinity());
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        for (int64_t kh = 0; kh < g.kernel_h; ++kh)
          for (int64_t kw = 0; kw < g.kernel_w; ++kw)
            for (int64_t c = 0; c < g.in_c; ++c) {
              const int64_t xi = x_index(g, n, oh, ow, kh, kw, c);
              double& out = y[static_cast<size_t>(y_index(g, n, oh, ow, c))];
              if (xi >= 0) out = std::max(out, x[static_cast<size_t>(xi)]);
            }
  return y;
}

// max|ours - ref| / max|ref|.
double normwise_error(const std::vector<float>& ours, const std::vector<double>& ref) {
  REQUIRE(ours.size() == ref.size());
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(ours[i]) - ref[i]));
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return scale > 0.0 ? diff / scale : diff;
}

std::vector<double> as_doubles(const Tensor& t) {
  const std::vector<float> v = t.to_vector();
  return std::vector<double>(v.begin(), v.end());
}

Tensor from_doubles(const std::vector<double>& v, const Shape& shape) {
  std::vector<float> f(v.begin(), v.end());
  return Tensor::from_vector(f, shape);
}

// n distinct values, shuffled, at least 1/64 apart: no ties within a pooling window, and no
// finite-difference step (h ~ 1e-5) can change which element is a window's maximum.
std::vector<double> distinct_values(engine::Generator& rng, size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (static_cast<double>(i) - static_cast<double>(n) / 2) / 64.0;
  for (size_t i = n - 1; i > 0; --i) std::swap(v[i], v[rng.below(i + 1)]);
  return v;
}

std::string geometry_name(const Conv2dGeometry& g, Padding padding) {
  return engine::to_string(g.x_shape()) + " window " + std::to_string(g.kernel_h) + "x" +
         std::to_string(g.kernel_w) + " stride " + std::to_string(g.stride_h) + "x" +
         std::to_string(g.stride_w) + " " + engine::to_string(padding);
}

// Restores the thread count a test changed.
struct ThreadsGuard {
  int saved = engine::cpu::num_threads();
  ~ThreadsGuard() { engine::cpu::set_num_threads(saved); }
};

}  // namespace

// ---- geometry ---------------------------------------------------------------------------------

TEST_CASE("conv2d_geometry follows TensorFlow's valid and same padding") {
  struct Case {
    int64_t in, k, stride;
    Padding padding;
    int64_t out, pad_before;
  };
  // Worked by hand from TF's rule: same: out = ceil(in / s), total pad = max((out - 1) s + k -
  // in, 0), the smaller half before; valid: out = floor((in - k) / s) + 1, no padding.
  const std::vector<Case> cases = {
      {32, 3, 1, Padding::Same, 32, 1},  {7, 3, 2, Padding::Same, 4, 1},
      {6, 3, 2, Padding::Same, 3, 0},    // total 1: the odd pad goes after
      {13, 6, 5, Padding::Same, 3, 1},   // TF's documentation example: pads 1 and 2
      {4, 5, 1, Padding::Same, 4, 2},    {5, 1, 2, Padding::Same, 3, 0},
      {2, 5, 3, Padding::Same, 1, 1},    {28, 3, 1, Padding::Valid, 26, 0},
      {13, 6, 5, Padding::Valid, 2, 0},  {7, 3, 2, Padding::Valid, 3, 0},
      {5, 5, 1, Padding::Valid, 1, 0},   {5, 2, 2, Padding::Valid, 2, 0},
  };
  for (const Case& c : cases) {
    INFO("in ", c.in, " k ", c.k, " stride ", c.stride, " ", engine::to_string(c.padding));
    // The rows axis and the columns axis get the same rule; the other axis is a fixed 9/1/1.
    const Conv2dGeometry rows =
        engine::conv2d_geometry({2, c.in, 9, 3}, {c.k, 1, 3, 4}, c.stride, 1, c.padding);
    CHECK(rows.out_h == c.out);
    CHECK(rows.pad_top == c.pad_before);
    CHECK(rows.out_w == 9);
    CHECK(rows.pad_left == 0);
    const Conv2dGeometry cols =
        engine::conv2d_geometry({2, 9, c.in, 3}, {1, c.k, 3, 4}, 1, c.stride, c.padding);
    CHECK(cols.out_w == c.out);
    CHECK(cols.pad_left == c.pad_before);
    CHECK(cols.y_shape() == Shape{2, 9, c.out, 4});
  }
  const Conv2dGeometry g = engine::conv2d_geometry({100, 32, 32, 32}, {3, 3, 32, 64}, 1, 1, Padding::Same);
  CHECK(g.gemm_m() == 102400);
  CHECK(g.gemm_k() == 288);
  CHECK(g.gemm_n() == 64);
  const Conv2dGeometry pool = engine::pool2d_geometry({100, 32, 32, 32}, 2, 2, 2, 2, Padding::Valid);
  CHECK(pool.y_shape() == Shape{100, 16, 16, 32});
}

TEST_CASE("conv2d_geometry and the ops refuse shapes that do not fit, naming them") {
  using doctest::Contains;
  CHECK_THROWS_WITH_AS(engine::conv2d_geometry({5, 7, 3}, {3, 3, 3, 4}, 1, 1, Padding::Same),
                       Contains("(batch, height, width, channels)"), engine::Error);
  CHECK_THROWS_WITH_AS(engine::conv2d_geometry({2, 5, 7, 3}, {3, 3, 4}, 1, 1, Padding::Same),
                       Contains("(kernel_h, kernel_w, in_c, out_c)"), engine::Error);
  CHECK_THROWS_WITH_AS(engine::conv2d_geometry({2, 5, 7, 3}, {3, 3, 2, 4}, 1, 1, Padding::Same),
                       Contains("has 3 channels but the filters"), engine::Error);
  CHECK_THROWS_WITH_AS(engine::conv2d_geometry({2, 5, 7, 3}, {6, 3, 3, 4}, 1, 1, Padding::Valid),
                       Contains("a window of 6 does not fit in 5 with padding 'valid'"), engine::Error);
  CHECK_THROWS_WITH_AS(engine::conv2d_geometry({2, 5, 7, 3}, {3, 3, 3, 4}, 0, 1, Padding::Same),
                       Contains("stride 0 must be at least 1"), engine::Error);
  CHECK_THROWS_WITH_AS(engine::pool2d_geometry({2, 5, 7, 3}, 2, 8, 2, 8, Padding::Valid),
                       Contains("max_pool2d: a window of 8 does not fit in 7"), engine::Error);

  const Tensor x = Tensor::zeros({2, 5, 7, 3});
  CHECK_THROWS_WITH_AS(engine::conv2d(x, Tensor::zeros({3, 3, 2, 4}), 1, Padding::Same),
                       Contains("input (2, 5, 7, 3) has 3 channels but the filters (3, 3, 2, 4)"), engine::Error);
  CHECK_THROWS_WITH_AS(engine::conv2d(x, Tensor::zeros({3, 3, 3, 4}, engine::DType::I32), 1,
                                      Padding::Same),
                       Contains("conv2d: filters must be float32"), engine::Error);
  CHECK_THROWS_WITH_AS(engine::max_pool2d(Tensor::zeros({5, 7, 3}), 2),
                       Contains("max_pool2d: input must be (batch, height, width, channels)"),
                       engine::Error);
}

// ---- conv2d -------------------------------------------------------------------------------------

TEST_CASE("conv2d: forward and gradients w.r.t. x and filters, odd sizes, every kernel, stride and padding") {
  const Shape x_shape{2, 5, 7, 3};
  const int64_t out_c = 4;
  const std::vector<std::pair<int64_t, int64_t>> kernels = {{3, 3}, {2, 2}, {1, 1}, {5, 3}};
  engine::Generator rng(31);
  for (const auto& [kh, kw] : kernels) {
    for (const int64_t stride : {1, 2}) {
      for (const Padding padding : {Padding::Valid, Padding::Same}) {
        const Shape w_shape{kh, kw, x_shape[3], out_c};
        const Conv2dGeometry g = engine::conv2d_geometry(x_shape, w_shape, stride, stride, padding);
        const std::vector<Input> inputs = {
            gradcheck::floats(x_shape, gradcheck::uniform(rng, gradcheck::count(x_shape), -1, 1)),
            gradcheck::floats(w_shape, gradcheck::uniform(rng, gradcheck::count(w_shape), -1, 1))};
        // Forward: float sums of K products. dx sums kh * kw * out_c products per pixel, dw
        // sums M = batch * out_h * out_w.
        const int64_t grad_terms = std::max(kh * kw * out_c, g.gemm_m());
        gradcheck::check(
            geometry_name(g, padding),
            [stride, padding](const std::vector<Tensor>& t) {
              return engine::conv2d(t[0], t[1], stride, padding);
            },
            [g](const std::vector<Input>& in) { return ref_conv(g, in[0].values, in[1].values); },
            inputs, Tolerance{sum_tol(g.gemm_k()), sum_tol(grad_terms) + FD_TOL});
      }
    }
  }
}

TEST_CASE("conv2d backend passes against double references: several threads, chunked patches, rectangular strides") {
  ThreadsGuard restore;
  engine::cpu::set_num_threads(3);  // an odd team: chunk counts that do not divide evenly
  struct Case {
    Shape x, w;
    int64_t stride_h, stride_w;
    Padding padding;
  };
  // 40x40 images with K = 288: one image's patches (1600 x 288 floats) need two chunks of the
  // 1 MB patch buffer; 11 images on 3 threads leave one thread a different share.
  const std::vector<Case> cases = {
      {{11, 40, 40, 32}, {3, 3, 32, 8}, 1, 1, Padding::Same},
      {{3, 21, 17, 5}, {3, 3, 5, 7}, 2, 1, Padding::Same},
      {{3, 21, 17, 5}, {4, 2, 5, 7}, 1, 3, Padding::Valid},
      {{2, 9, 11, 6}, {1, 1, 6, 5}, 1, 1, Padding::Same},  // pointwise: a plain matmul
      {{1, 2, 3, 4}, {5, 5, 4, 3}, 1, 1, Padding::Same},   // windows wider than the image
  };
  engine::Generator rng(32);
  for (const Case& c : cases) {
    const Conv2dGeometry g = engine::conv2d_geometry(c.x, c.w, c.stride_h, c.stride_w, c.padding);
    INFO(geometry_name(g, c.padding));
    const std::vector<double> x = gradcheck::uniform(rng, gradcheck::count(c.x), -1, 1);
    const std::vector<double> w = gradcheck::uniform(rng, gradcheck::count(c.w), -1, 1);
    const std::vector<double> dy = gradcheck::uniform(rng, gradcheck::count(g.y_shape()), -1, 1);
    const Tensor xt = from_doubles(x, c.x), wt = from_doubles(w, c.w), dyt = from_doubles(dy, g.y_shape());
    Tensor y = Tensor::full(g.y_shape(), NAN), dx = Tensor::full(c.x, NAN), dw = Tensor::full(c.w, NAN);
    engine::cpu::conv2d_forward(g, xt, wt, y);
    engine::cpu::conv2d_backward_data(g, dyt, wt, dx);
    engine::cpu::conv2d_backward_filter(g, xt, dyt, dw);
    // Outputs start as NaN: every element must be written (overwritten, not accumulated).
    CHECK(normwise_error(y.to_vector(), ref_conv(g, x, w)) <= sum_tol(g.gemm_k()));
    CHECK(normwise_error(dx.to_vector(), ref_conv_dx(g, dy, w)) <=
          sum_tol(g.kernel_h * g.kernel_w * g.out_c));
    CHECK(normwise_error(dw.to_vector(), ref_conv_dw(g, x, dy)) <= sum_tol(g.gemm_m()));

    // One thread agrees with three, up to the order of the sums (chunks and partials differ).
    engine::cpu::set_num_threads(1);
    Tensor y1 = Tensor::empty(g.y_shape()), dx1 = Tensor::empty(c.x), dw1 = Tensor::empty(c.w);
    engine::cpu::conv2d_forward(g, xt, wt, y1);
    engine::cpu::conv2d_backward_data(g, dyt, wt, dx1);
    engine::cpu::conv2d_backward_filter(g, xt, dyt, dw1);
    engine::cpu::set_num_threads(3);
    CHECK(normwise_error(y1.to_vector(), as_doubles(y)) <= sum_tol(g.gemm_k()));
    CHECK(normwise_error(dx1.to_vector(), as_doubles(dx)) <= sum_tol(g.kernel_h * g.kernel_w * g.out_c));
    CHECK(normwise_error(dw1.to_vector(), as_doubles(dw)) <= sum_tol(g.gemm_m()));
  }
}

TEST_CASE("conv2d: an empty batch gives empty outputs and a zero filter gradient") {
  const Tensor x = Tensor::zeros({0, 5, 7, 3}).set_requires_grad(true);
  const Tensor w = Tensor::full({3, 3, 3, 4}, 1.0f).set_requires_grad(true);
  const Tensor y = engine::conv2d(x, w, 1, Padding::Same);
  CHECK(y.shape() == Shape{0, 5, 7, 4});
  engine::sum(y).backward();
  for (const float v : w.grad().to_vector()) CHECK(v == 0.0f);
}

TEST_CASE("conv2d in reverse-mode Jacobians: K directions match one backward each, parameter gradients untouched") {
  engine::Generator rng(34);
  const Shape x_shape{2, 5, 4, 3}, w_shape{3, 2, 3, 2};
  const Tensor x = from_doubles(gradcheck::uniform(rng, gradcheck::count(x_shape), -1, 1), x_shape)
                       .set_requires_grad(true);
  Tensor w = from_doubles(gradcheck::uniform(rng, gradcheck::count(w_shape), -1, 1), w_shape);
  w.set_requires_grad(true);
  const Tensor w_grad = Tensor::full(w_shape, 7.0f);
  w.set_grad(w_grad);
  w.set_overwrite_grad(true);  // as in a training step: backward() would write dw here
  const Tensor y = engine::conv2d(x, w, 2, Padding::Same);
  const engine::Linearization lin(x, y);
  const int64_t K = 3;
  const Shape y_shape = y.shape();
  const std::vector<double> dys = gradcheck::uniform(rng, static_cast<size_t>(K * y.numel()), -1, 1);
  const std::vector<float> dx = lin.vjp(K, from_doubles(dys, engine::stacked_shape(K, y_shape))).to_vector();
  const Conv2dGeometry g = engine::conv2d_geometry(x_shape, w_shape, 2, 2, Padding::Same);
  const std::vector<double> wv = as_doubles(w);
  const size_t per_x = gradcheck::count(x_shape), per_y = gradcheck::count(y_shape);
  for (int64_t k = 0; k < K; ++k) {
    const std::vector<double> dy_k(dys.begin() + static_cast<std::ptrdiff_t>(k * per_y),
                                   dys.begin() + static_cast<std::ptrdiff_t>((k + 1) * per_y));
    const std::vector<float> dx_k(dx.begin() + static_cast<std::ptrdiff_t>(k * per_x),
                                  dx.begin() + static_cast<std::ptrdiff_t>((k + 1) * per_x));
    CHECK(normwise_error(dx_k, ref_conv_dx(g, dy_k, wv)) <= sum_tol(3 * 2 * 2));
  }
  for (const float v : w_grad.to_vector()) CHECK(v == 7.0f);
}

TEST_CASE("conv2d_bias_activation equals conv2d then bias_activation: values, gradients and K-direction vjps") {
  using engine::Activation;
  engine::Generator rng(35);
  const Shape x_shape{2, 5, 4, 3}, w_shape{3, 3, 3, 4}, b_shape{4};
  const auto random = [&](const Shape& shape) {
    return from_doubles(gradcheck::uniform(rng, gradcheck::count(shape), -1, 1), shape);
  };
  for (const Activation act : {Activation::None, Activation::Relu, Activation::Tanh, Activation::Sigmoid}) {
    // Named copies, not a structured binding: C++17 lets no lambda (INFO's, the fused one)
    // capture a binding, and Clang refuses it where GCC lets it through.
    for (const auto& setting :
         {std::pair{int64_t{1}, Padding::Same}, std::pair{int64_t{2}, Padding::Valid}}) {
      const int64_t stride = setting.first;
      const Padding padding = setting.second;
      INFO(engine::activation_name(act), ", stride ", stride);
      Tensor x = random(x_shape).set_requires_grad(true);
      Tensor w = random(w_shape).set_requires_grad(true);
      Tensor b = random(b_shape).set_requires_grad(true);
      const auto fused = [&](const Tensor& input) {
        return engine::conv2d_bias_activation(input, w, b, act, stride, padding);
      };
      const auto composed = [&](const Tensor& input) {
        const Tensor z = engine::conv2d(input, w, stride, padding);
        const Shape shape = z.shape();
        const Tensor rows = engine::reshape(z, {shape[0] * shape[1] * shape[2], shape[3]});
        return engine::reshape(engine::bias_activation(rows, b, act), shape);
      };
      const Tensor y = fused(x), y_ref = composed(x);
      REQUIRE(y.shape() == y_ref.shape());
      CHECK(normwise_error(y.to_vector(), as_doubles(y_ref)) <= 1e-6);
      // Gradients of sum(y * r) for the same r: x, w and the bias.
      const Tensor r = random(y.shape());
      auto gradients = [&](const Tensor& out) {
        x.set_grad(Tensor());
        w.set_grad(Tensor());
        b.set_grad(Tensor());
        engine::sum(engine::mul(out, r)).backward();
        return std::vector<std::vector<float>>{x.grad().to_vector(), w.grad().to_vector(),
                                               b.grad().to_vector()};
      };
      const auto g = gradients(y), g_ref = gradients(y_ref);
      for (size_t i = 0; i < g.size(); ++i) {
        std::vector<double> expected(g_ref[i].begin(), g_ref[i].end());
        CHECK(normwise_error(g[i], expected) <= 1e-6);
      }
      // A network's first layer, whose input needs no gradient: the filter and bias gradients
      // come from one op (conv2d_activation_backward_filter, or conv2d_bias_backward_filter
      // without an activation), the same as composed.
      {
        const Tensor data = x.detach();
        w.set_grad(Tensor());
        b.set_grad(Tensor());
        engine::sum(engine::mul(fused(data), r)).backward();
        const std::vector<float> dw = w.grad().to_vector(), db = b.grad().to_vector();
        w.set_grad(Tensor());
        b.set_grad(Tensor());
        engine::sum(engine::mul(composed(data), r)).backward();
        CHECK(normwise_error(dw, as_doubles(w.grad())) <= 1e-6);
        CHECK(normwise_error(db, as_doubles(b.grad())) <= 1e-6);
      }
      // Three directions at once through the node's vjp, as jacobian() takes them.
      const int64_t K = 3;
      const Tensor dys = random(engine::stacked_shape(K, y.shape()));
      const std::vector<float> dx = engine::Linearization(x, y).vjp(K, dys).to_vector();
      const std::vector<float> dx_ref = engine::Linearization(x, y_ref).vjp(K, dys).to_vector();
      CHECK(normwise_error(dx, std::vector<double>(dx_ref.begin(), dx_ref.end())) <= 1e-6);
    }
  }
  // A bias of the wrong length, or softmax, is refused by name.
  const Tensor x = Tensor::zeros(x_shape), w = Tensor::zeros(w_shape);
  CHECK_THROWS_WITH_AS(
      engine::conv2d_bias_activation(x, w, Tensor::zeros({3}), engine::Activation::None, 1, Padding::Same),
      doctest::Contains("conv2d_bias_activation: bias of shape (3,) for 4 filters (expected (4,))"), engine::Error);
  CHECK_THROWS_WITH_AS(
      engine::conv2d_bias_activation(x, w, Tensor::zeros(b_shape), engine::Activation::Softmax, 1, Padding::Same),
      doctest::Contains("softmax is not elementwise"), engine::Error);
}

TEST_CASE("conv2d has no forward-mode rule and says so by name") {
  const Tensor x = Tensor::full({1, 3, 3, 1}, 1.0f).set_requires_grad(true);
  const Tensor y = engine::conv2d(x, Tensor::full({3, 3, 1, 1}, 1.0f), 1, Padding::Same);
  REQUIRE(y.grad_fn());
  CHECK_FALSE(y.grad_fn()->has_jvp());
  CHECK_THROWS_WITH_AS(y.grad_fn()->jvp(1, {Tensor(), Tensor()}),
                       doctest::Contains("'conv2d' has no forward-mode rule"), engine::Error);
}

// ---- max_pool2d -------------------------------------------------------------------------------

TEST_CASE("max_pool2d: forward and gradient, odd sizes, Keras' pools and overlapping or padded windows") {
  struct Case {
    int64_t pool, stride;
    Padding padding;
  };
  const std::vector<Case> cases = {
      {2, 2, Padding::Valid},  // Keras MaxPooling2D(2): 5x7 -> 2x3, the last row and column dropped
      {3, 3, Padding::Valid}, {1, 1, Padding::Valid},
      {3, 2, Padding::Valid},  // overlapping windows: a pixel's gradient sums two windows
      {3, 2, Padding::Same},   {2, 1, Padding::Same}, {2, 2, Padding::Same},
  };
  const Shape x_shape{2, 5, 7, 3};
  engine::Generator rng(33);
  for (const Case& c : cases) {
    const Conv2dGeometry g = engine::pool2d_geometry(x_shape, c.pool, c.pool, c.stride, c.stride, c.padding);
    const std::vector<Input> inputs = {
        gradcheck::floats(x_shape, distinct_values(rng, gradcheck::count(x_shape)))};
    // Forward: a max is one of its inputs, exactly. Gradient: each pixel sums the weights of
    // at most (ceil(pool / stride))^2 = 4 windows.
    gradcheck::check(
        geometry_name(g, c.padding),
        [c](const std::vector<Tensor>& t) {
          return c.stride == c.pool && c.padding == Padding::Valid
                     ? engine::max_pool2d(t[0], c.pool)
                     : engine::max_pool2d(t[0], c.pool, c.stride, c.padding);
        },
        [g](const std::vector<Input>& in) { return ref_max_pool(g, in[0].values); }, inputs,
        Tolerance{0.0, sum_tol(4) + FD_TOL});
  }
}

// Windows that tile x: training records each window's tap in the forward pass (a byte an
// output) and the backward writes dx from dy and the taps; the same y and dx, bit for bit, as
// the backward that finds the maxima again in x, with ties (three values), windows of -inf, and
// channel counts on and off a multiple of 4.
TEST_CASE("max_pool2d: the taps' backward is the x-and-y backward, bit for bit") {
  engine::Generator rng(35);
  for (const Shape& x_shape : {Shape{2, 4, 6, 3}, Shape{3, 6, 6, 8}, Shape{1, 2, 2, 1}}) {
    for (const int64_t pool : {1, 2}) {
      const Conv2dGeometry g = engine::pool2d_geometry(x_shape, pool, pool, pool, pool, Padding::Valid);
      REQUIRE(engine::pool_windows_tile_input(g));
      std::vector<float> xv(static_cast<size_t>(engine::numel(x_shape)));
      for (float& v : xv) v = rng.below(5) == 0 ? -INFINITY : static_cast<float>(rng.below(3));
      const Tensor x = Tensor::from_vector(xv, x_shape);
      std::vector<float> dyv(static_cast<size_t>(engine::numel(g.y_shape())));
      for (float& v : dyv) v = 2.0f * rng.uniform() - 1.0f;
      const Tensor dy = Tensor::from_vector(dyv, g.y_shape());
      Tensor y = Tensor::empty(g.y_shape()), dx = Tensor::empty(x_shape);
      engine::raw::max_pool2d_forward(g, x, y);
      engine::raw::max_pool2d_backward(g, x, y, dy, dx);
      Tensor y2 = Tensor::empty(g.y_shape()), dx2 = Tensor::empty(x_shape);
      Tensor taps = Tensor::empty(g.y_shape(), engine::DType::U8, engine::Device::cpu());
      engine::raw::max_pool2d_forward_taps(g, x, y2, taps);
      engine::raw::max_pool2d_backward_taps(g, taps, dy, dx2);
      INFO(engine::to_string(x_shape), " pool ", pool);
      CHECK(y2.to_vector() == y.to_vector());
      CHECK(dx2.to_vector() == dx.to_vector());
    }
  }
  // Not a tiling (a leftover row), or overlapping windows: the plain path, refused by name here.
  const Conv2dGeometry odd = engine::pool2d_geometry({1, 5, 4, 1}, 2, 2, 2, 2, Padding::Valid);
  CHECK_FALSE(engine::pool_windows_tile_input(odd));
  CHECK_FALSE(engine::pool_windows_tile_input(engine::pool2d_geometry({1, 6, 6, 1}, 3, 3, 2, 2, Padding::Valid)));
  // A 16 x 16 window tiles x but has 256 positions, one more than a byte's taps can name: its
  // gradient keeps the x-and-y path.
  const Conv2dGeometry wide = engine::pool2d_geometry({1, 16, 16, 1}, 16, 16, 16, 16, Padding::Valid);
  CHECK(engine::pool_windows_tile_input(wide));
  CHECK_FALSE(engine::pool_records_taps(wide));
  CHECK(engine::pool_records_taps(engine::pool2d_geometry({1, 16, 16, 1}, 2, 2, 2, 2, Padding::Valid)));
  Tensor taps = Tensor::empty(odd.y_shape(), engine::DType::U8, engine::Device::cpu()), y = Tensor::empty(odd.y_shape());
  CHECK_THROWS_WITH_AS(engine::raw::max_pool2d_forward_taps(odd, Tensor::zeros({1, 5, 4, 1}), y, taps),
                       doctest::Contains("the windows must tile x"), engine::Error);
}

TEST_CASE("max_pool2d: ties go to the first position of the window, padding never wins") {
  // Channel 0: all four equal -> the top-left gets dy. Channel 1: the maximum 5 at the
  // top-right and bottom-right -> the top-right (first in row-major order) gets it.
  const Tensor x = Tensor::from_vector({1, 0, 1, 5, 1, -2, 1, 5}, {1, 2, 2, 2}).set_requires_grad(true);
  const Tensor y = engine::max_pool2d(x, 2);
  CHECK(y.to_vector() == std::vector<float>{1, 5});
  engine::sum(engine::mul(y, Tensor::from_vector({3, 7}, {1, 1, 1, 2}))).backward();
  CHECK(x.grad().to_vector() == std::vector<float>{3, 0, 0, 7, 0, 0, 0, 0});

  // All values negative, windows over the padding: the maxima are the negative values, not 0.
  const Tensor neg = Tensor::full({1, 4, 4, 1}, -3.0f);
  const Tensor pooled = engine::max_pool2d(neg, 3, 2, Padding::Same);
  CHECK(pooled.shape() == Shape{1, 2, 2, 1});
  for (const float v : pooled.to_vector()) CHECK(v == -3.0f);
}
