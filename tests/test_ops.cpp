// Every differentiable op of core/ops.h on the CPU: forward against a double
// reference written here, gradient against central differences of that reference
// (tests/gradcheck.h), at several odd shapes; plus the ops' error messages.
//
// Tolerances are normwise (max error / max magnitude) and written at each call with where
// they come from. FLT_EPS = 2^-23; "a float32 sum of n terms" has a rounding error that
// grows at most like n * eps relative to the magnitudes summed (Higham's gamma_n), so such
// ops get sum_tol(n). The numerical gradient itself is accurate to ~1e-10 (h = 1e-5:
// truncation h^2 f''' ~ 1e-10, double rounding 1e-16 |L| / h ~ 1e-11 |L|): FD_TOL.
// Run with GRADCHECK_VERBOSE=1 to print every measured error next to its tolerance.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "gradcheck.h"

using engine::Shape;
using engine::Tensor;
using gradcheck::FLT_EPS;
using gradcheck::Input;
using gradcheck::FD_TOL;
using gradcheck::sum_tol;
using gradcheck::Tolerance;

namespace {

// Spacing of floats in [512, 1024): the resolution of logits of size ~1000.
constexpr double ULP_1000 = 1.0 / 16384.0;

std::string shape_name(const Shape& shape) { return engine::to_string(shape); }

// The shapes every elementwise op is checked at: odd sizes, one element, 3-D.
const std::vector<Shape> ELEMENTWISE_SHAPES = {{3, 7}, {1, 1}, {33, 65}, {2, 3, 5}};
// Row-wise ops (N, C).
const std::vector<Shape> ROW_SHAPES = {{3, 7}, {1, 1}, {33, 65}, {5, 1}, {1, 13}};

Tensor from_doubles(const std::vector<double>& v, const Shape& shape) {
  std::vector<float> f(v.size());
  for (size_t i = 0; i < v.size(); ++i) f[i] = static_cast<float>(v[i]);
  return Tensor::from_vector(f, shape);
}

// Whether `text` contains `part`, reported with both in a failure.
bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The message of the engine::Error that `fn` throws ("" when it throws none).
template <typename Fn>
std::string error_message(Fn&& fn) {
  try {
    fn();
  } catch (const engine::Error& e) {
    return e.what();
  }
  return "";
}

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

// ---- double references ---------------------------------------------------------------------

// op(a) @ op(b): a stored (M, K) or, transposed, (K, M); b stored (K, N) or (N, K).
std::vector<double> ref_matmul(const std::vector<double>& a, const std::vector<double>& b,
                               size_t m, size_t k, size_t n, bool ta, bool tb) {
  std::vector<double> c(m * n, 0.0);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      double total = 0.0;
      for (size_t p = 0; p < k; ++p) {
        const double av = ta ? a[p * m + i] : a[i * k + p];
        const double bv = tb ? b[j * k + p] : b[p * n + j];
        total += av * bv;
      }
      c[i * n + j] = total;
    }
  }
  return c;
}

// Row-wise log softmax of an (rows, cols) matrix, subtracting each row's maximum.
std::vector<double> ref_log_softmax(const std::vector<double>& x, size_t rows, size_t cols) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < rows; ++r) {
    const double* row = &x[r * cols];
    double max = row[0];
    for (size_t c = 1; c < cols; ++c) max = std::max(max, row[c]);
    double total = 0.0;
    for (size_t c = 0; c < cols; ++c) total += std::exp(row[c] - max);
    const double log_sum_exp = max + std::log(total);
    for (size_t c = 0; c < cols; ++c) y[r * cols + c] = row[c] - log_sum_exp;
  }
  return y;
}

// Keras' binary cross-entropy, elementwise.
double ref_bce(double p, double t) {
  const double eps = 1e-7;
  const double pc = std::min(std::max(p, eps), 1.0 - eps);
  return -(t * std::log(pc + eps) + (1.0 - t) * std::log(1.0 - pc + eps));
}

// Binary cross-entropy of sigmoid(z) against t, in double: -(t log s + (1 - t) log(1 - s)).
double ref_sigmoid_bce(double z, double t) {
  const double log_s = -std::log1p(std::exp(-z));       // log sigmoid(z)
  const double log_1ms = -z - std::log1p(std::exp(-z));  // log(1 - sigmoid(z))
  return -(t * log_s + (1.0 - t) * log_1ms);
}

// An elementwise reference applied to input 0.
gradcheck::RefFn elementwise_ref(double (*f)(double)) {
  return [f](const std::vector<Input>& in) {
    std::vector<double> y(in[0].values.size());
    for (size_t i = 0; i < y.size(); ++i) y[i] = f(in[0].values[i]);
    return y;
  };
}

// An elementwise reference of inputs 0 and 1.
gradcheck::RefFn binary_ref(double (*f)(double, double)) {
  return [f](const std::vector<Input>& in) {
    std::vector<double> y(in[0].values.size());
    for (size_t i = 0; i < y.size(); ++i) y[i] = f(in[0].values[i], in[1].values[i]);
    return y;
  };
}

}  // namespace

// ---- the checker itself ----------------------------------------------------------------------

TEST_CASE("gradcheck detects a wrong forward and a wrong gradient") {
  engine::Generator rng(1);
  const Shape shape{3, 7};
  const std::vector<Input> inputs = {gradcheck::floats(shape, gradcheck::uniform(rng, 21, -2, 2))};
  const auto square_ref = elementwise_ref([](double x) { return x * x; });

  // Right forward and gradient: both errors tiny.
  const auto good = gradcheck::measure(
      [](const std::vector<Tensor>& t) { return engine::mul(t[0], t[0]); }, square_ref, inputs);
  REQUIRE(good.problem.empty());
  CHECK(good.forward_error < 1e-6);
  CHECK(good.gradient_error.at(0) < 1e-6);

  // Right forward, half the gradient (the second factor is detached): caught.
  const auto half_grad = gradcheck::measure(
      [](const std::vector<Tensor>& t) { return engine::mul(t[0], t[0].detach()); }, square_ref,
      inputs);
  REQUIRE(half_grad.problem.empty());
  CHECK(half_grad.forward_error < 1e-6);
  CHECK(half_grad.gradient_error.at(0) > 0.4);

  // Forward off by 1e-3 relative: caught.
  const auto off = gradcheck::measure(
      [](const std::vector<Tensor>& t) { return engine::scale(engine::mul(t[0], t[0]), 1.001f); },
      square_ref, inputs);
  REQUIRE(off.problem.empty());
  CHECK(off.forward_error > 5e-4);

  // An output that records no gradient is reported, not silently passed.
  const auto no_grad = gradcheck::measure(
      [](const std::vector<Tensor>& t) { return engine::mul(t[0], t[0]).detach(); }, square_ref,
      inputs);
  CHECK_FALSE(no_grad.problem.empty());
}

// ---- linear algebra ---------------------------------------------------------------------------

TEST_CASE("matmul: forward and gradients, all four transpose combinations") {
  struct Dims {
    int64_t m, k, n;
  };
  const std::vector<Dims> dims = {{3, 7, 5}, {1, 1, 1}, {33, 65, 9}, {5, 1, 3}, {1, 13, 1}};
  engine::Generator rng(2);
  for (const Dims& d : dims) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        const Shape a_shape = ta ? Shape{d.k, d.m} : Shape{d.m, d.k};
        const Shape b_shape = tb ? Shape{d.n, d.k} : Shape{d.k, d.n};
        const std::vector<Input> inputs = {
            gradcheck::floats(a_shape, gradcheck::uniform(rng, gradcheck::count(a_shape), -1, 1)),
            gradcheck::floats(b_shape, gradcheck::uniform(rng, gradcheck::count(b_shape), -1, 1))};
        const size_t m = static_cast<size_t>(d.m), k = static_cast<size_t>(d.k),
                     n = static_cast<size_t>(d.n);
        const std::string what = "matmul " + shape_name(a_shape) + (ta ? "^T" : "") + " @ " +
                                 shape_name(b_shape) + (tb ? "^T" : "");
        // Forward: float32 dot products of K terms. Gradients: dA sums N terms, dB sums M.
        gradcheck::check(
            what,
            [ta, tb](const std::vector<Tensor>& t) { return engine::matmul(t[0], t[1], ta, tb); },
            [=](const std::vector<Input>& in) {
              return ref_matmul(in[0].values, in[1].values, m, k, n, ta, tb);
            },
            inputs, Tolerance{sum_tol(d.k), sum_tol(std::max(d.m, d.n)) + FD_TOL});
      }
    }
  }
}

TEST_CASE("matmul: output shape") {
  const Tensor a = Tensor::full({4, 3}, 1.0f);
  const Tensor b = Tensor::full({5, 3}, 2.0f);
  const Tensor c = engine::matmul(a, b, false, true);
  CHECK(c.shape() == Shape{4, 5});
  CHECK(c.to_vector().at(0) == doctest::Approx(6.0));
  CHECK(engine::matmul(a, Tensor::full({4, 2}, 1.0f), true, false).shape() == Shape{3, 2});
}

TEST_CASE("add_bias: forward and gradients w.r.t. x and bias") {
  engine::Generator rng(3);
  std::vector<Shape> shapes = ROW_SHAPES;
  shapes.push_back({1500, 5});  // a conv layer's tall bias sum: several row blocks, the last partial
  for (const Shape& shape : shapes) {
    const int64_t rows = shape[0], cols = shape[1];
    const std::vector<Input> inputs = {
        gradcheck::floats(shape, gradcheck::uniform(rng, gradcheck::count(shape), -2, 2)),
        gradcheck::floats({cols}, gradcheck::uniform(rng, static_cast<size_t>(cols), -2, 2))};
    // Forward: one float addition, one rounding. d bias sums the N rows' weights.
    gradcheck::check(
        "add_bias " + shape_name(shape),
        [](const std::vector<Tensor>& t) { return engine::add_bias(t[0], t[1]); },
        [](const std::vector<Input>& in) {
          const size_t f = in[1].values.size();
          std::vector<double> y(in[0].values.size());
          for (size_t i = 0; i < y.size(); ++i) y[i] = in[0].values[i] + in[1].values[i % f];
          return y;
        },
        inputs, Tolerance{FLT_EPS, sum_tol(rows) + FD_TOL});
  }
}

// ---- elementwise ------------------------------------------------------------------------------

TEST_CASE("add, sub, mul: forward and gradients w.r.t. both inputs") {
  struct Case {
    const char* name;
    Tensor (*op)(const Tensor&, const Tensor&);
    double (*ref)(double, double);
  };
  const std::vector<Case> cases = {
      {"add", engine::add, [](double a, double b) { return a + b; }},
      {"sub", engine::sub, [](double a, double b) { return a - b; }},
      {"mul", engine::mul, [](double a, double b) { return a * b; }},
  };
  engine::Generator rng(4);
  for (const Case& c : cases) {
    for (const Shape& shape : ELEMENTWISE_SHAPES) {
      const size_t n = gradcheck::count(shape);
      const std::vector<Input> inputs = {
          gradcheck::floats(shape, gradcheck::uniform(rng, n, -2, 2)),
          gradcheck::floats(shape, gradcheck::uniform(rng, n, -2, 2))};
      auto op = c.op;
      // Forward: one float operation, at most half an ulp, normwise <= eps. Gradients are
      // w, -w (exact) or w * other (one rounding).
      gradcheck::check(
          std::string(c.name) + " " + shape_name(shape),
          [op](const std::vector<Tensor>& t) { return op(t[0], t[1]); }, binary_ref(c.ref), inputs,
          Tolerance{FLT_EPS, FLT_EPS + FD_TOL});
    }
  }
}

TEST_CASE("mul of a tensor by itself sums both gradient contributions") {
  engine::Generator rng(5);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    const std::vector<Input> inputs = {
        gradcheck::floats(shape, gradcheck::uniform(rng, gradcheck::count(shape), -2, 2))};
    // x * x: one rounding forward; gradient w*x + w*x, two roundings.
    gradcheck::check(
        "mul(x, x) " + shape_name(shape),
        [](const std::vector<Tensor>& t) { return engine::mul(t[0], t[0]); },
        elementwise_ref([](double x) { return x * x; }), inputs,
        Tolerance{FLT_EPS, 2 * FLT_EPS + FD_TOL});
  }
}

TEST_CASE("scale: forward and gradient") {
  engine::Generator rng(6);
  for (const float factor : {-1.7f, 0.37f, 3.0f}) {
    for (const Shape& shape : ELEMENTWISE_SHAPES) {
      const std::vector<Input> inputs = {
          gradcheck::floats(shape, gradcheck::uniform(rng, gradcheck::count(shape), -2, 2))};
      // One float multiplication each way.
      gradcheck::check(
          "scale " + std::to_string(factor) + " " + shape_name(shape),
          [factor](const std::vector<Tensor>& t) { return engine::scale(t[0], factor); },
          [factor](const std::vector<Input>& in) {
            std::vector<double> y(in[0].values);
            for (double& v : y) v *= static_cast<double>(factor);
            return y;
          },
          inputs, Tolerance{FLT_EPS, FLT_EPS + FD_TOL});
    }
  }
}

TEST_CASE("relu: forward and gradient, inputs away from the kink at 0") {
  engine::Generator rng(7);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    // |x| >= 0.05, far beyond the difference step h = 1e-5: no difference straddles 0.
    std::vector<double> x = gradcheck::away_from_zero(rng, gradcheck::count(shape), 0.05, 2.0);
    if (x.size() == 1) x[0] = 0.75;  // the one-element case must have a non-zero gradient
    // relu copies or zeroes: exact forward, exact gradient (w or 0).
    gradcheck::check(
        "relu " + shape_name(shape), [](const std::vector<Tensor>& t) { return engine::relu(t[0]); },
        elementwise_ref([](double v) { return v > 0.0 ? v : 0.0; }),
        {gradcheck::floats(shape, x)}, Tolerance{0.0, FD_TOL});
  }
  // Both signs occur, so the check above covered the zeroed branch too.
  const std::vector<float> y = engine::relu(Tensor::from_vector({-1.5f, 2.5f, -0.0f}, {3})).to_vector();
  CHECK(y == std::vector<float>{0.0f, 2.5f, 0.0f});
}

TEST_CASE("tanh and sigmoid: forward and gradient") {
  engine::Generator rng(8);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    const std::vector<Input> inputs = {
        gradcheck::floats(shape, gradcheck::uniform(rng, gradcheck::count(shape), -3, 3))};
    // std::tanh in float: a few ulp. Gradient 1 - y^2 from the float y: an error of a few
    // ulp(1) in y^2, i.e. a few eps of the largest gradient.
    gradcheck::check(
        "tanh " + shape_name(shape), [](const std::vector<Tensor>& t) { return engine::tanh(t[0]); },
        elementwise_ref([](double v) { return std::tanh(v); }), inputs,
        Tolerance{4 * FLT_EPS, 16 * FLT_EPS + FD_TOL});
    // 1 / (1 + exp(-x)) in float: exp, add, divide, ~3 ulp. Gradient y (1 - y) from the
    // float y: 1 - y cancels, an error of a few ulp(1) against max gradient 0.25.
    gradcheck::check(
        "sigmoid " + shape_name(shape),
        [](const std::vector<Tensor>& t) { return engine::sigmoid(t[0]); },
        elementwise_ref([](double v) { return 1.0 / (1.0 + std::exp(-v)); }), inputs,
        Tolerance{4 * FLT_EPS, 16 * FLT_EPS + FD_TOL});
  }
}

TEST_CASE("gelu: forward and gradient against erf in double") {
  engine::Generator rng(9);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    const std::vector<Input> inputs = {
        gradcheck::floats(shape, gradcheck::uniform(rng, gradcheck::count(shape), -4, 4))};
    // The CPU computes in double and rounds once: forward and gradient within an ulp or two.
    gradcheck::check(
        "gelu " + shape_name(shape), [](const std::vector<Tensor>& t) { return engine::gelu(t[0]); },
        elementwise_ref([](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }),
        inputs, Tolerance{4 * FLT_EPS, 16 * FLT_EPS + FD_TOL});
  }
  // Known values: gelu(0) = 0, gelu(1) = Phi(1) = 0.8413447, gelu(-1) = -(1 - Phi(1)).
  const std::vector<float> y = engine::gelu(Tensor::from_vector({0.0f, 1.0f, -1.0f}, {3})).to_vector();
  CHECK(y[0] == 0.0f);
  CHECK(y[1] == doctest::Approx(0.8413447).epsilon(1e-6));
  CHECK(y[2] == doctest::Approx(-0.1586553).epsilon(1e-6));
}

TEST_CASE("tanh and sigmoid saturate without NaN at large |x|") {
  const Tensor x = Tensor::from_vector({-1000.0f, -100.0f, 100.0f, 1000.0f}, {4});
  const std::vector<float> t = engine::tanh(x).to_vector();
  CHECK(t == std::vector<float>{-1.0f, -1.0f, 1.0f, 1.0f});
  const std::vector<float> s = engine::sigmoid(x).to_vector();
  CHECK(s == std::vector<float>{0.0f, 0.0f, 1.0f, 1.0f});
}

TEST_CASE("activation() dispatches by name") {
  const Tensor x = Tensor::from_vector({-0.7f, 0.2f, 1.3f, -2.0f, 0.5f, 0.9f}, {2, 3});
  CHECK(engine::activation(x, engine::Activation::None).same_storage(x));
  CHECK(engine::activation(x, engine::Activation::Relu).to_vector() == engine::relu(x).to_vector());
  CHECK(engine::activation(x, engine::Activation::Tanh).to_vector() == engine::tanh(x).to_vector());
  CHECK(engine::activation(x, engine::Activation::Sigmoid).to_vector() ==
        engine::sigmoid(x).to_vector());
  CHECK(engine::activation(x, engine::Activation::Softmax).to_vector() ==
        engine::softmax(x).to_vector());
}

TEST_CASE("activation_name: the names the autograd nodes and the profiler give each activation") {
  using engine::Activation;
  CHECK(std::string(engine::activation_name(Activation::None)) == "none");
  CHECK(std::string(engine::activation_name(Activation::Relu)) == "relu");
  CHECK(std::string(engine::activation_name(Activation::Tanh)) == "tanh");
  CHECK(std::string(engine::activation_name(Activation::Sigmoid)) == "sigmoid");
  CHECK(std::string(engine::activation_name(Activation::Softmax)) == "softmax");
  const Tensor x = Tensor::from_vector({-0.7f, 0.2f}, {1, 2}).set_requires_grad(true);
  CHECK(std::string(engine::tanh(x).grad_fn()->name()) == "tanh");
}

// ---- row-wise ---------------------------------------------------------------------------------

TEST_CASE("softmax and log_softmax: forward and gradient") {
  engine::Generator rng(9);
  for (const Shape& shape : ROW_SHAPES) {
    const size_t rows = static_cast<size_t>(shape[0]), cols = static_cast<size_t>(shape[1]);
    const std::vector<Input> inputs = {
        gradcheck::floats(shape, gradcheck::uniform(rng, rows * cols, -4, 4))};
    // One column: softmax is constantly 1 (log_softmax 0), so the true gradient is zero.
    gradcheck::Options options;
    options.nonzero_gradient = cols > 1;
    // Forward: a float sum of C exponentials (sum_tol(C)), and exp/log of arguments up to
    // ~|8 + log C| whose rounding is a few ulp of that size (16 eps). Backward: one float
    // sum of C terms per row.
    const Tolerance tol{sum_tol(shape[1]) + 16 * FLT_EPS, sum_tol(shape[1]) + 16 * FLT_EPS + FD_TOL};
    gradcheck::check(
        "softmax " + shape_name(shape),
        [](const std::vector<Tensor>& t) { return engine::softmax(t[0]); },
        [rows, cols](const std::vector<Input>& in) {
          std::vector<double> y = ref_log_softmax(in[0].values, rows, cols);
          for (double& v : y) v = std::exp(v);
          return y;
        },
        inputs, tol, options);
    gradcheck::check(
        "log_softmax " + shape_name(shape),
        [](const std::vector<Tensor>& t) { return engine::log_softmax(t[0]); },
        [rows, cols](const std::vector<Input>& in) { return ref_log_softmax(in[0].values, rows, cols); },
        inputs, tol, options);
  }
}

TEST_CASE("softmax and log_softmax: rows sum to one, stable at logits of +-1000") {
  const Tensor x = Tensor::from_vector({1000.0f, -1000.0f, 0.0f, -1000.0f, -1000.0f, -999.0f,
                                        1000.0f, 1000.0f, 999.0f},
                                       {3, 3});
  const std::vector<float> p = engine::softmax(x).to_vector();
  const std::vector<float> lp = engine::log_softmax(x).to_vector();
  REQUIRE(all_finite(p));
  REQUIRE(all_finite(lp));
  const std::vector<double> ref = ref_log_softmax({1000, -1000, 0, -1000, -1000, -999, 1000, 1000, 999}, 3, 3);
  // The CPU forms log p = x - (max + log sum) with the bracket rounded at the size of the
  // logits: half an ulp of ~1000 = 3.1e-5 absolute in log p, so 3.1e-5 relative in p.
  // Tolerance one ulp of 1000, absolute for log p (and at -2000: relative 1e-6 of it).
  for (size_t i = 0; i < ref.size(); ++i) {
    INFO("element ", i, ": log p ", lp[i], " vs ", ref[i], ", p ", p[i], " vs ", std::exp(ref[i]));
    CHECK(std::fabs(static_cast<double>(lp[i]) - ref[i]) <= ULP_1000 + 1e-6 * std::fabs(ref[i]));
    CHECK(std::fabs(static_cast<double>(p[i]) - std::exp(ref[i])) <= ULP_1000 * std::exp(ref[i]));
  }
  for (size_t r = 0; r < 3; ++r) {
    const double row_sum = static_cast<double>(p[3 * r]) + static_cast<double>(p[3 * r + 1]) +
                           static_cast<double>(p[3 * r + 2]);
    CHECK(std::fabs(row_sum - 1.0) <= ULP_1000);
  }
}

// ---- losses -----------------------------------------------------------------------------------

namespace {

// -log softmax(logits)[n, labels[n]] in double.
std::vector<double> ref_sparse_ce(const std::vector<Input>& in) {
  const size_t rows = in[1].ints.size();
  const size_t cols = in[0].values.size() / rows;
  const std::vector<double> lp = ref_log_softmax(in[0].values, rows, cols);
  std::vector<double> loss(rows);
  for (size_t r = 0; r < rows; ++r) loss[r] = -lp[r * cols + static_cast<size_t>(in[1].ints[r])];
  return loss;
}

Tensor engine_sparse_ce(const std::vector<Tensor>& t) {
  return engine::sparse_softmax_cross_entropy(t[0], t[1]);
}

}  // namespace

TEST_CASE("sparse_softmax_cross_entropy: forward and gradient, int labels") {
  engine::Generator rng(10);
  for (const Shape& shape : ROW_SHAPES) {
    const size_t rows = static_cast<size_t>(shape[0]), cols = static_cast<size_t>(shape[1]);
    const std::vector<Input> inputs = {
        gradcheck::floats(shape, gradcheck::uniform(rng, rows * cols, -4, 4)),
        gradcheck::ints({shape[0]}, gradcheck::random_ints(rng, rows, static_cast<int32_t>(cols)))};
    gradcheck::Options options;
    options.nonzero_gradient = cols > 1;  // one class: loss 0 whatever the logit
    // Forward: log of a float sum of C exponentials, less a logit: sum_tol(C) + a few ulp
    // of the ~8 + log C sized terms. Gradient: w (p - onehot) with p from that same sum.
    const Tolerance tol{sum_tol(shape[1]) + 16 * FLT_EPS, sum_tol(shape[1]) + 16 * FLT_EPS + FD_TOL};
    gradcheck::check("sparse_softmax_cross_entropy " + shape_name(shape), engine_sparse_ce,
                     ref_sparse_ce, inputs, tol, options);
  }
}

TEST_CASE("sparse_softmax_cross_entropy: finite loss and gradient at logits of +-1000") {
  // Labels on the largest logit (loss ~0), on the smallest (loss ~2000), and rows whose
  // logits are all huge of one sign.
  const std::vector<double> logits = {1000, -1000, 0,     3,     -2,     //
                                      1000, -1000, 0,     3,     -2,     //
                                      -1000, -1000.5, -999, -1001, -1000,  //
                                      1000, 1001, 1002, 1003, 1004};
  const std::vector<int32_t> labels = {0, 1, 2, 4};
  const Tensor x = from_doubles(logits, {4, 5}).set_requires_grad(true);
  const Tensor loss = engine::sparse_softmax_cross_entropy(x, Tensor::from_ints(labels, {4}));
  const std::vector<float> l = loss.to_vector();
  REQUIRE(all_finite(l));
  CHECK(l[0] == doctest::Approx(0.0).scale(1.0).epsilon(1e-6));
  CHECK(l[1] == doctest::Approx(2000.0).epsilon(1e-6));
  engine::sum(loss).backward();
  CHECK(all_finite(x.grad().to_vector()));

  // And the full check: numerical gradient with a small step, since the curvature around
  // logits of size 1000 is that of logits of size 1 (step 1e-8 * 1000 = 1e-5).
  gradcheck::Options options;
  options.step = 1e-8;
  // Forward: losses up to 2000, with log-sum-exp rounded at ~1000 (half an ulp, 3.1e-5):
  // normwise ~ 1.5e-8, a few eps. Gradient w (p - onehot): p = exp(x - lse) carries that
  // same 3.1e-5 absolute error in its exponent, i.e. 3.1e-5 relative; one ULP_1000 bounds it.
  gradcheck::check("sparse_softmax_cross_entropy +-1000", engine_sparse_ce, ref_sparse_ce,
                   {gradcheck::floats({4, 5}, logits), gradcheck::ints({4}, labels)},
                   Tolerance{4 * FLT_EPS, ULP_1000 + FD_TOL}, options);
}

TEST_CASE("binary_cross_entropy: forward and gradient w.r.t. p (Keras formula)") {
  engine::Generator rng(11);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    const size_t n = gradcheck::count(shape);
    // Soft targets in [0, 1] and hard 0/1 targets.
    std::vector<double> soft = gradcheck::uniform(rng, n, 0.0, 1.0);
    std::vector<double> hard(n);
    for (size_t i = 0; i < n; ++i) hard[i] = rng.uniform() < 0.5f ? 0.0 : 1.0;
    for (const auto& target : {soft, hard}) {
      const std::vector<Input> inputs = {
          gradcheck::floats(shape, gradcheck::uniform(rng, n, 0.05, 0.95)),
          gradcheck::floats(shape, target, /*differentiable=*/false)};
      // log(1 - p + 1e-7) with 1 - p rounded in float: an absolute error of ulp(1)/2 in an
      // argument >= 0.05 is a relative error <= 1.2e-6 (10 eps); the gradient divides by
      // the same rounded 1 - p + eps.
      gradcheck::check(
          "binary_cross_entropy " + shape_name(shape),
          [](const std::vector<Tensor>& t) { return engine::binary_cross_entropy(t[0], t[1]); },
          binary_ref(ref_bce), inputs, Tolerance{16 * FLT_EPS, 16 * FLT_EPS + FD_TOL});
    }
  }
}

TEST_CASE("binary_cross_entropy: p at 0 and 1 is clipped, finite, and passes no gradient") {
  const std::vector<float> p = {0.0f, 0.0f, 1.0f, 1.0f, 1e-9f, 0.5f};
  const std::vector<float> t = {1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 1.0f};
  const Tensor pt = Tensor::from_vector(p, {6}).set_requires_grad(true);
  const Tensor loss = engine::binary_cross_entropy(pt, Tensor::from_vector(t, {6}));
  const std::vector<float> l = loss.to_vector();
  REQUIRE(all_finite(l));
  for (size_t i = 0; i < p.size(); ++i) {
    INFO("p = ", p[i], ", t = ", t[i]);
    // 1 - 1e-7 is not a float (the nearest is 1 - 1.19e-7), so where 1 - p' + eps ~ 2e-7
    // the float loss differs from the double one by log(2.19 / 2) ~ 0.6%.
    CHECK(static_cast<double>(l[i]) ==
          doctest::Approx(ref_bce(static_cast<double>(p[i]), static_cast<double>(t[i]))).epsilon(1e-2));
  }
  CHECK(l[0] > 15.0f);  // -log(2e-7) = 15.4: confidently wrong costs, but finitely
  engine::sum(loss).backward();
  const std::vector<float> g = pt.grad().to_vector();
  REQUIRE(all_finite(g));
  // Clipped (p outside [1e-7, 1 - 1e-7]): no gradient, as tf.clip_by_value passes none.
  for (size_t i = 0; i < 5; ++i) CHECK(g[i] == 0.0f);
  CHECK(static_cast<double>(g[5]) == doctest::Approx(-1.0 / (0.5 + 1e-7)).epsilon(1e-6));
}

TEST_CASE("sigmoid_binary_cross_entropy: forward and gradient w.r.t. the logits") {
  engine::Generator rng(21);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    const size_t n = gradcheck::count(shape);
    std::vector<double> hard(n);
    for (size_t i = 0; i < n; ++i) hard[i] = rng.uniform() < 0.5f ? 0.0 : 1.0;
    for (const auto& target : {gradcheck::uniform(rng, n, 0.0, 1.0), hard}) {
      const std::vector<Input> inputs = {
          gradcheck::floats(shape, gradcheck::uniform(rng, n, -6.0, 6.0)),
          gradcheck::floats(shape, target, /*differentiable=*/false)};
      // max(z, 0) - z t + log1p(exp(-|z|)): a few roundings of terms up to |z| <= 6, which
      // may cancel to a loss near 0: relative to the terms' size, 16 eps.
      gradcheck::check(
          "sigmoid_binary_cross_entropy " + shape_name(shape),
          [](const std::vector<Tensor>& t) {
            return engine::sigmoid_binary_cross_entropy(t[0], t[1]);
          },
          binary_ref(ref_sigmoid_bce), inputs, Tolerance{64 * FLT_EPS, 16 * FLT_EPS + FD_TOL});
    }
  }
}

TEST_CASE("sigmoid_binary_cross_entropy: finite and exact at logits of +-1000") {
  const std::vector<float> z = {1000.0f, -1000.0f, 1000.0f, -1000.0f, 0.0f, 30.0f};
  const std::vector<float> t = {1.0f, 0.0f, 0.0f, 1.0f, 1.0f, 0.0f};
  const Tensor zt = Tensor::from_vector(z, {6}).set_requires_grad(true);
  const Tensor loss = engine::sigmoid_binary_cross_entropy(zt, Tensor::from_vector(t, {6}));
  const std::vector<float> l = loss.to_vector();
  REQUIRE(all_finite(l));
  CHECK(l[0] == 0.0f);  // confidently right: nothing
  CHECK(l[1] == 0.0f);
  CHECK(l[2] == 1000.0f);  // confidently wrong: the whole logit, where the clipped form stops at 15.4
  CHECK(l[3] == 1000.0f);
  CHECK(static_cast<double>(l[4]) == doctest::Approx(std::log(2.0)).epsilon(1e-6));
  CHECK(static_cast<double>(l[5]) == doctest::Approx(30.0).epsilon(1e-6));
  engine::sum(loss).backward();
  const std::vector<float> g = zt.grad().to_vector();
  REQUIRE(all_finite(g));
  // sigmoid(z) - t: no vanishing gradient at a confidently wrong output.
  const std::vector<float> expected = {0.0f, 0.0f, 1.0f, -1.0f, -0.5f, 1.0f};
  for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == doctest::Approx(expected[i]).epsilon(1e-6));
}

// ---- regression losses -----------------------------------------------------------------------

namespace {

// The shapes the per-sample regression losses are checked at: (N, F), and (N,) for one output.
const std::vector<Shape> REGRESSION_SHAPES = {{3, 7}, {1, 1}, {33, 65}, {5, 1}, {1, 13}, {9}};

// Per row of pred and target (rows = dim 0), the mean over its F outputs of term(pred - target).
gradcheck::RefFn row_mean_ref(double (*term)(double)) {
  return [term](const std::vector<Input>& in) {
    const size_t rows = static_cast<size_t>(in[0].shape[0]);
    const size_t cols = in[0].values.size() / rows;
    std::vector<double> loss(rows, 0.0);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = r * cols; c < (r + 1) * cols; ++c) {
        loss[r] += term(in[0].values[c] - in[1].values[c]);
      }
      loss[r] /= static_cast<double>(cols);
    }
    return loss;
  };
}

double squared(double d) { return d * d; }
double absolute(double d) { return std::fabs(d); }

}  // namespace

TEST_CASE("mean_squared_error: per-sample forward and gradient w.r.t. pred") {
  engine::Generator rng(24);
  for (const Shape& shape : REGRESSION_SHAPES) {
    const size_t n = gradcheck::count(shape);
    const std::vector<Input> inputs = {
        gradcheck::floats(shape, gradcheck::uniform(rng, n, -2.0, 2.0)),
        gradcheck::floats(shape, gradcheck::uniform(rng, n, -2.0, 2.0), /*differentiable=*/false)};
    // The CPU works in double from the float inputs and rounds once: half an ulp of each loss
    // and of each gradient element (w 2 d / F).
    gradcheck::check(
        "mean_squared_error " + shape_name(shape),
        [](const std::vector<Tensor>& t) { return engine::mean_squared_error(t[0], t[1]); },
        row_mean_ref(squared), inputs, Tolerance{FLT_EPS, FLT_EPS + FD_TOL});
  }
}

TEST_CASE("mean_absolute_error: per-sample forward and gradient, away from the kink") {
  engine::Generator rng(25);
  for (const Shape& shape : REGRESSION_SHAPES) {
    const size_t n = gradcheck::count(shape);
    // Targets at least 0.05 from the prediction, so that a central difference (step ~1e-5)
    // never straddles |d|'s kink at d = 0.
    const std::vector<double> pred = gradcheck::uniform(rng, n, -2.0, 2.0);
    std::vector<double> target = gradcheck::away_from_zero(rng, n, 0.05, 2.0);
    for (size_t i = 0; i < n; ++i) {
      target[i] = static_cast<double>(static_cast<float>(pred[i] + target[i]));
    }
    const std::vector<Input> inputs = {gradcheck::floats(shape, pred),
                                       gradcheck::floats(shape, target, /*differentiable=*/false)};
    // As for MSE: one rounding of a double result, w sign(d) / F for the gradient.
    gradcheck::check(
        "mean_absolute_error " + shape_name(shape),
        [](const std::vector<Tensor>& t) { return engine::mean_absolute_error(t[0], t[1]); },
        row_mean_ref(absolute), inputs, Tolerance{FLT_EPS, FLT_EPS + FD_TOL});
  }
}

TEST_CASE("mean_squared_error and mean_absolute_error: hand-computed values and gradients") {
  // Two samples of three outputs; d = pred - target = [0, 2, 2] and [-1, -2, 0].
  const std::vector<float> pred = {1.0f, 2.0f, 3.0f, 0.0f, -1.0f, 0.5f};
  const std::vector<float> target = {1.0f, 0.0f, 1.0f, 1.0f, 1.0f, 0.5f};
  struct Case {
    const char* name;
    Tensor (*loss)(const Tensor&, const Tensor&);
    std::vector<double> values, gradient;  // of sum(loss)
  };
  const std::vector<Case> cases = {
      // (0 + 4 + 4) / 3, (1 + 4 + 0) / 3; gradient 2 d / 3.
      {"mean_squared_error", engine::mean_squared_error, {8.0 / 3, 5.0 / 3},
       {0.0, 4.0 / 3, 4.0 / 3, -2.0 / 3, -4.0 / 3, 0.0}},
      // (0 + 2 + 2) / 3, (1 + 2 + 0) / 3; gradient sign(d) / 3, 0 where d = 0.
      {"mean_absolute_error", engine::mean_absolute_error, {4.0 / 3, 1.0},
       {0.0, 1.0 / 3, 1.0 / 3, -1.0 / 3, -1.0 / 3, 0.0}}};
  for (const Case& c : cases) {
    INFO(c.name);
    const Tensor p = Tensor::from_vector(pred, {2, 3}).set_requires_grad(true);
    const Tensor loss = c.loss(p, Tensor::from_vector(target, {2, 3}));
    REQUIRE(loss.shape() == Shape{2});
    const std::vector<float> l = loss.to_vector();
    for (size_t i = 0; i < l.size(); ++i) {
      CHECK(static_cast<double>(l[i]) == doctest::Approx(c.values[i]).epsilon(1e-7));
    }
    engine::sum(loss).backward();
    const std::vector<float> g = p.grad().to_vector();
    for (size_t i = 0; i < g.size(); ++i) {
      CHECK(static_cast<double>(g[i]) == doctest::Approx(c.gradient[i]).epsilon(1e-7));
    }
  }
  // A single output as (N,): one loss per element, (N,) as well.
  const Tensor p1 = Tensor::from_vector({1.0f, -2.0f, 0.5f}, {3});
  const Tensor t1 = Tensor::from_vector({0.0f, 1.0f, 0.5f}, {3});
  CHECK(engine::mean_squared_error(p1, t1).to_vector() == std::vector<float>{1.0f, 9.0f, 0.0f});
  CHECK(engine::mean_absolute_error(p1, t1).to_vector() == std::vector<float>{1.0f, 3.0f, 0.0f});
  CHECK(engine::mean_squared_error(p1, t1).shape() == Shape{3});
}

TEST_CASE("mean_squared_error and mean_absolute_error refuse what has no per-sample loss") {
  const Tensor a = Tensor::zeros({2, 3});
  for (const auto loss : {engine::mean_squared_error, engine::mean_absolute_error}) {
    const std::string msg = error_message([&] { loss(a, Tensor::zeros({3, 2})); });
    INFO(msg);
    CHECK(contains(msg, "(2, 3)"));
    CHECK(contains(msg, "(3, 2)"));
    CHECK_THROWS_AS(loss(a, Tensor::from_ints({0, 0, 0, 0, 0, 0}, {2, 3})), engine::Error);
    CHECK_THROWS_AS(loss(Tensor::zeros({2, 3, 4}), Tensor::zeros({2, 3, 4})), engine::Error);
    CHECK_THROWS_AS(loss(Tensor::zeros({}), Tensor::zeros({})), engine::Error);
    CHECK_THROWS_AS(loss(Tensor::zeros({2, 0}), Tensor::zeros({2, 0})), engine::Error);
  }
}

TEST_CASE("count_correct with float targets: a sigmoid head at threshold 0.5") {
  // Logits > 0 predict 1; a logit of exactly 0 (probability 0.5) predicts 0, like Keras' round.
  const Tensor logits = Tensor::from_vector({2.0f, -1.0f, 0.0f, 0.0f, -3.0f}, {5, 1});
  const Tensor targets = Tensor::from_vector({1.0f, 1.0f, 0.0f, 1.0f, 0.0f}, {5});
  Tensor count = Tensor::zeros({});
  engine::raw::count_correct(logits, targets, count);
  CHECK(count.item() == 3.0f);
}

// ---- dropout ----------------------------------------------------------------------------------

TEST_CASE("dropout (training): kept fraction, scaling, gradient, reproducible mask") {
  engine::Generator data(12);
  const Shape shape{257, 129};  // 33153 elements: above the CPU's parallel threshold
  const size_t n = gradcheck::count(shape);
  // Non-zero inputs, so y == 0 exactly where the mask dropped the element.
  const std::vector<double> xv = gradcheck::away_from_zero(data, n, 0.1, 2.0);
  for (const float rate : {0.3f, 0.5f}) {
    INFO("rate ", rate);
    const double keep_scale = 1.0 / (1.0 - static_cast<double>(rate));
    const Tensor x = from_doubles(xv, shape).set_requires_grad(true);
    const engine::DropoutStream stream{99, Tensor::from_ints({1000}, {})};
    const Tensor y = engine::dropout(x, rate, true, stream);
    const std::vector<float> yv = y.to_vector();

    // The mask, recovered from the output; it is the documented Philox rule.
    std::vector<bool> kept(n);
    size_t kept_count = 0, rule_mismatches = 0, scale_mismatches = 0;
    for (size_t i = 0; i < n; ++i) {
      kept[i] = yv[i] != 0.0f;
      kept_count += kept[i] ? 1 : 0;
      const bool rule = engine::dropout_uniform(99, 1000, i) >= rate;
      rule_mismatches += rule != kept[i] ? 1 : 0;
      // Kept values are x / (1 - rate): two float roundings (the scale and the product).
      if (kept[i] && std::fabs(static_cast<double>(yv[i]) - xv[i] * keep_scale) >
                         2 * FLT_EPS * std::fabs(xv[i] * keep_scale)) {
        ++scale_mismatches;
      }
    }
    CHECK(rule_mismatches == 0);
    CHECK(scale_mismatches == 0);
    // Kept fraction ~ Binomial(n, 1 - rate) / n: within 5 standard deviations.
    const double fraction = static_cast<double>(kept_count) / static_cast<double>(n);
    const double sigma = std::sqrt(static_cast<double>(rate) * (1.0 - static_cast<double>(rate)) /
                                   static_cast<double>(n));
    CHECK(std::fabs(fraction - (1.0 - static_cast<double>(rate))) < 5 * sigma);

    // Gradient of sum(y): mask * scale (recomputed in backward from the same counters).
    engine::sum(y).backward();
    const std::vector<float> g = x.grad().to_vector();
    size_t grad_mismatches = 0;
    for (size_t i = 0; i < n; ++i) {
      const double expected = kept[i] ? keep_scale : 0.0;
      grad_mismatches += std::fabs(static_cast<double>(g[i]) - expected) > FLT_EPS * keep_scale;
    }
    CHECK(grad_mismatches == 0);

    // The same seed and step give the same mask; the next step, or another seed, a different one.
    CHECK(engine::dropout(x, rate, true, {99, Tensor::from_ints({1000}, {})}).to_vector() == yv);
    for (const engine::DropoutStream& other :
         {engine::DropoutStream{99, Tensor::from_ints({1001}, {})},
          engine::DropoutStream{100, Tensor::from_ints({1000}, {})}}) {
      const std::vector<float> next = engine::dropout(x, rate, true, other).to_vector();
      size_t differ = 0;
      for (size_t i = 0; i < n; ++i) differ += (next[i] != 0.0f) != kept[i] ? 1 : 0;
      CHECK(differ > n / 10);
    }
  }
}

TEST_CASE("dropout: a batch in parts, each with its first element, draws the whole batch's mask") {
  // What a data-parallel rank relies on (core/data_parallel.h): rank r's rows of the global
  // batch get the mask one device would draw for them, whatever the split.
  const int64_t n = 1001;
  const Tensor ones = Tensor::full({n}, 1.0f);
  const engine::DropoutStream whole{42, Tensor::from_ints({17}, {})};
  const std::vector<float> expected = engine::dropout(ones, 0.5f, true, whole).to_vector();
  for (const int64_t split : {int64_t{1}, int64_t{3}, int64_t{500}, int64_t{998}}) {
    INFO("split at ", split);
    const Tensor head = Tensor::full({split}, 1.0f), tail = Tensor::full({n - split}, 1.0f);
    std::vector<float> parts = engine::dropout(head, 0.5f, true, whole).to_vector();
    const engine::DropoutStream rest{42, whole.step, static_cast<uint64_t>(split)};
    for (const float v : engine::dropout(tail, 0.5f, true, rest).to_vector()) parts.push_back(v);
    CHECK(parts == expected);
  }
}

TEST_CASE("dropout (training): gradcheck against the reference with the recovered mask") {
  engine::Generator data(13);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    const size_t n = gradcheck::count(shape);
    const std::vector<double> xv = gradcheck::away_from_zero(data, n, 0.1, 2.0);
    const float rate = 0.4f;
    const uint64_t seed = 7;
    // Same seed and step on every call: the same mask each time.
    const engine::DropoutStream stream{seed, Tensor::from_ints({5}, {})};
    const auto f = [rate, stream](const std::vector<Tensor>& t) {
      return engine::dropout(t[0], rate, true, stream);
    };
    const std::vector<float> y = f({from_doubles(xv, shape)}).to_vector();
    std::vector<bool> kept(n);
    bool any_kept = false;
    for (size_t i = 0; i < n; ++i) {
      kept[i] = y[i] != 0.0f;
      any_kept = any_kept || kept[i];
    }
    gradcheck::Options options;
    options.nonzero_gradient = any_kept;  // a one-element input may be dropped entirely
    // Forward: x * float(1 / (1 - rate)), two roundings; gradient: w * the same scale.
    gradcheck::check(
        "dropout " + shape_name(shape), f,
        [kept, rate](const std::vector<Input>& in) {
          std::vector<double> out(in[0].values.size());
          for (size_t i = 0; i < out.size(); ++i) {
            out[i] = kept[i] ? in[0].values[i] / (1.0 - static_cast<double>(rate)) : 0.0;
          }
          return out;
        },
        {gradcheck::floats(shape, xv)}, Tolerance{2 * FLT_EPS, 2 * FLT_EPS + FD_TOL}, options);
  }
}

TEST_CASE("dropout: identity in eval mode and at rate 0; bad rates are refused") {
  engine::Generator data(14);
  const std::vector<double> xv = gradcheck::away_from_zero(data, 21, 0.1, 2.0);
  for (const bool training : {false, true}) {
    const float rate = training ? 0.0f : 0.5f;
    INFO("training ", training, ", rate ", rate);
    const engine::DropoutStream stream{3, Tensor::from_ints({0}, {})};
    // Identity: the forward and the gradient (w passes through unchanged).
    gradcheck::check(
        std::string("dropout identity ") + (training ? "rate 0" : "eval"),
        [stream, rate, training](const std::vector<Tensor>& t) {
          return engine::dropout(t[0], rate, training, stream);
        },
        [](const std::vector<Input>& in) { return in[0].values; },
        {gradcheck::floats({3, 7}, xv)}, Tolerance{0.0, FD_TOL});
  }
  const engine::DropoutStream stream{3, Tensor::from_ints({0}, {})};
  const Tensor x = from_doubles(xv, {3, 7});
  CHECK_THROWS_AS(engine::dropout(x, 1.0f, true, stream), engine::Error);
  CHECK_THROWS_AS(engine::dropout(x, -0.1f, true, stream), engine::Error);
  CHECK_THROWS_AS(engine::dropout(x, 0.5f, true, {3, Tensor()}), engine::Error);  // no counter
}

// ---- shape and reductions ---------------------------------------------------------------------

TEST_CASE("reshape and flatten: same data in the same order, gradient reshaped back") {
  struct Case {
    Shape from, to;
  };
  const std::vector<Case> cases = {
      {{3, 7}, {7, 3}}, {{3, 7}, {21}}, {{3, 7}, {1, 21, 1}}, {{1, 1}, {1}}, {{2, 3, 5}, {6, 5}}};
  engine::Generator rng(15);
  for (const Case& c : cases) {
    const std::vector<double> xv = gradcheck::uniform(rng, gradcheck::count(c.from), -2, 2);
    const Shape to = c.to;
    const Tensor x = from_doubles(xv, c.from);
    const Tensor y = engine::reshape(x, to);
    CHECK(y.shape() == to);
    CHECK(y.same_storage(x));  // a view, no copy
    // A pure relabelling: exact forward, gradient w reshaped to x's shape.
    gradcheck::check(
        "reshape " + shape_name(c.from) + " -> " + shape_name(to),
        [to](const std::vector<Tensor>& t) { return engine::reshape(t[0], to); },
        [](const std::vector<Input>& in) { return in[0].values; },
        {gradcheck::floats(c.from, xv)}, Tolerance{0.0, FD_TOL});
  }
  const std::vector<std::pair<Shape, Shape>> flat = {
      {{3, 5, 7}, {3, 35}}, {{1, 1, 1}, {1, 1}}, {{4, 6}, {4, 6}}, {{2, 3, 1, 5}, {2, 15}}};
  for (const auto& [from, to] : flat) {
    const std::vector<double> xv = gradcheck::uniform(rng, gradcheck::count(from), -2, 2);
    CHECK(engine::flatten(from_doubles(xv, from)).shape() == to);
    gradcheck::check(
        "flatten " + shape_name(from), [](const std::vector<Tensor>& t) { return engine::flatten(t[0]); },
        [](const std::vector<Input>& in) { return in[0].values; }, {gradcheck::floats(from, xv)},
        Tolerance{0.0, FD_TOL});
  }
  const std::string msg = error_message([] { engine::reshape(Tensor::zeros({3, 7}), {4, 5}); });
  INFO(msg);
  CHECK(contains(msg, "(3, 7)"));
  CHECK(contains(msg, "(4, 5)"));
}

TEST_CASE("sum and mean: scalar output, forward and gradient") {
  engine::Generator rng(16);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    const size_t n = gradcheck::count(shape);
    const std::vector<Input> inputs = {gradcheck::floats(shape, gradcheck::uniform(rng, n, -2, 2))};
    CHECK(engine::sum(Tensor::zeros(shape)).shape() == Shape{});
    // The CPU sums floats in double and rounds once: one ulp of the result. The gradient is
    // the broadcast weight, exact.
    gradcheck::check(
        "sum " + shape_name(shape), [](const std::vector<Tensor>& t) { return engine::sum(t[0]); },
        [](const std::vector<Input>& in) {
          double total = 0.0;
          for (double v : in[0].values) total += v;
          return std::vector<double>{total};
        },
        inputs, Tolerance{FLT_EPS, FD_TOL});
    // mean: also float(1 / n) (half an ulp) and the gradient w * float(1 / n) (one more).
    gradcheck::check(
        "mean " + shape_name(shape), [](const std::vector<Tensor>& t) { return engine::mean(t[0]); },
        [](const std::vector<Input>& in) {
          double total = 0.0;
          for (double v : in[0].values) total += v;
          return std::vector<double>{total / static_cast<double>(in[0].values.size())};
        },
        inputs, Tolerance{2 * FLT_EPS, 2 * FLT_EPS + FD_TOL});
  }
  // A sum with cancellation: 1e8 + 1 - 1e8 is 1 in exact arithmetic; the CPU's sum
  // accumulates in double (cpu/reduce.cpp) and so gets it, where a float running sum gives 0.
  CHECK(engine::sum(Tensor::from_vector({1e8f, 1.0f, -1e8f}, {3})).item() == 1.0f);
}

TEST_CASE("raw::sum with add_to_y adds the scaled sum to y, as a sum and an add would") {
  // A running sum (the epoch's loss) in one op: y + float(scale * sum), rounded as the
  // two-op route (sum into a scalar, then add it) rounds.
  const Tensor x = Tensor::from_vector({0.1f, 0.25f, -0.3f, 1.7f}, {4});
  for (const float scale : {1.0f, 0.25f}) {
    Tensor alone = Tensor::empty({});
    engine::raw::sum(x, alone, scale);
    Tensor running = Tensor::from_vector({3.3f}, {});
    engine::raw::sum(x, running, scale, /*add_to_y=*/true);
    CHECK(running.item() == 3.3f + alone.item());
    engine::raw::sum(x, running, scale, /*add_to_y=*/true);
    CHECK(running.item() == (3.3f + alone.item()) + alone.item());
  }
}

// ---- not differentiable -----------------------------------------------------------------------

TEST_CASE("gather_rows: picks rows by index, any dtype, records no gradient") {
  engine::Generator rng(17);
  const Shape shape{7, 5};
  const std::vector<double> xv = gradcheck::uniform(rng, gradcheck::count(shape), -2, 2);
  const Tensor x = from_doubles(xv, shape).set_requires_grad(true);
  const std::vector<int32_t> index = {6, 0, 3, 3, 1};
  const Tensor y = engine::gather_rows(x, Tensor::from_ints(index, {5}));
  CHECK(y.shape() == Shape{5, 5});
  CHECK(y.grad_fn() == nullptr);
  const std::vector<float> yv = y.to_vector();
  for (size_t r = 0; r < index.size(); ++r) {
    for (size_t c = 0; c < 5; ++c) {
      CHECK(static_cast<double>(yv[r * 5 + c]) == xv[static_cast<size_t>(index[r]) * 5 + c]);
    }
  }

  // Int rows of a 3-D tensor.
  std::vector<int32_t> iv(4 * 2 * 3);
  for (size_t i = 0; i < iv.size(); ++i) iv[i] = static_cast<int32_t>(i * 7 + 1);
  const Tensor xi = Tensor::from_ints(iv, {4, 2, 3});
  const Tensor yi = engine::gather_rows(xi, Tensor::from_ints({3, 1}, {2}));
  CHECK(yi.shape() == Shape{2, 2, 3});
  CHECK(yi.dtype() == engine::DType::I32);
  const std::vector<int32_t> got = yi.to_int_vector();
  CHECK(std::vector<int32_t>(got.begin(), got.begin() + 6) ==
        std::vector<int32_t>(iv.begin() + 18, iv.begin() + 24));
  CHECK(std::vector<int32_t>(got.begin() + 6, got.end()) ==
        std::vector<int32_t>(iv.begin() + 6, iv.begin() + 12));

  // Out of range, either side: engine::Error naming the index.
  const std::string high = error_message([&] { engine::gather_rows(x, Tensor::from_ints({2, 7}, {2})); });
  INFO(high);
  CHECK(contains(high, "7"));
  CHECK_THROWS_AS(engine::gather_rows(x, Tensor::from_ints({-1}, {1})), engine::Error);
  CHECK_THROWS_AS(engine::gather_rows(x, Tensor::from_vector({1.0f}, {1})), engine::Error);
}

// ---- shape errors -----------------------------------------------------------------------------

TEST_CASE("shape errors name the op and both shapes") {
  const Tensor a = Tensor::zeros({3, 4});
  const Tensor b = Tensor::zeros({5, 6});
  {
    const std::string msg = error_message([&] { engine::matmul(a, b); });
    INFO(msg);
    CHECK(contains(msg, "matmul"));
    CHECK(contains(msg, "(3, 4)"));
    CHECK(contains(msg, "(5, 6)"));
  }
  {  // (3, 4)^T @ (5, 6)^T: inner 3 vs 6
    const std::string msg = error_message([&] { engine::matmul(a, b, true, true); });
    INFO(msg);
    CHECK(contains(msg, "(3, 4)"));
    CHECK(contains(msg, "(5, 6)"));
  }
  // Matching inner dims through the flags must not throw: (3, 4)^T @ (3, 2).
  CHECK_NOTHROW(engine::matmul(a, Tensor::zeros({3, 2}), true, false));
  CHECK_THROWS_AS(engine::matmul(Tensor::zeros({4}), a), engine::Error);
  {
    const std::string msg = error_message([&] { engine::add(a, Tensor::zeros({4, 3})); });
    INFO(msg);
    CHECK(contains(msg, "add"));
    CHECK(contains(msg, "(3, 4)"));
    CHECK(contains(msg, "(4, 3)"));
  }
  CHECK_THROWS_AS(engine::sub(a, b), engine::Error);
  CHECK_THROWS_AS(engine::mul(a, b), engine::Error);
  {
    const std::string msg = error_message([&] { engine::add_bias(a, Tensor::zeros({5})); });
    INFO(msg);
    CHECK(contains(msg, "add_bias"));
    CHECK(contains(msg, "(5,)"));
    CHECK(contains(msg, "(3, 4)"));
  }
  CHECK_THROWS_AS(engine::softmax(Tensor::zeros({4})), engine::Error);
  CHECK_THROWS_AS(engine::log_softmax(Tensor::zeros({2, 3, 4})), engine::Error);
  {
    const std::string msg =
        error_message([&] { engine::binary_cross_entropy(a, Tensor::zeros({4, 3})); });
    INFO(msg);
    CHECK(contains(msg, "(3, 4)"));
    CHECK(contains(msg, "(4, 3)"));
  }
  CHECK_THROWS_AS(engine::sum(Tensor::from_ints({1, 2}, {2})), engine::Error);
}

TEST_CASE("sparse_softmax_cross_entropy refuses bad labels") {
  const Tensor logits = Tensor::zeros({3, 4});
  // Wrong count, wrong dtype, out of range on either side.
  CHECK_THROWS_AS(engine::sparse_softmax_cross_entropy(logits, Tensor::from_ints({0, 1}, {2})),
                  engine::Error);
  CHECK_THROWS_AS(engine::sparse_softmax_cross_entropy(logits, Tensor::zeros({3})), engine::Error);
  const std::string msg = error_message(
      [&] { engine::sparse_softmax_cross_entropy(logits, Tensor::from_ints({0, 4, 1}, {3})); });
  INFO(msg);
  CHECK(contains(msg, "label 4"));
  CHECK_THROWS_AS(
      engine::sparse_softmax_cross_entropy(logits, Tensor::from_ints({0, -1, 1}, {3})),
      engine::Error);
  CHECK_NOTHROW(engine::sparse_softmax_cross_entropy(logits, Tensor::from_ints({0, 3, 1}, {3})));
}
