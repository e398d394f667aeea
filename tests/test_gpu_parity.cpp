// CPU vs GPU parity of every op of the Backend interface (core/backend.h), and of a few
// chains of differentiable ops (core/ops.h) through backward. Each op runs on the CPU and
// the CUDA backend on the same seeded random inputs; the GPU result is copied back and
// compared elementwise: |gpu - cpu| <= abs + rel * scale, where scale is |cpu| unless the
// op passes the magnitude its rounding error is relative to (a sum's sum of |terms|).
//
// U = 2^-24 is float32's unit roundoff: a correctly rounded operation errs by at most U
// relative, and a float sum of K terms, in any order, by at most ~K*U relative to the sum
// of |terms| (Higham's gamma_K) on each device, so 2*K*U between the two. An op that is a
// single IEEE operation per element (add, mul, relu, copies) must match bitwise.
//
// Outputs an op overwrites are poisoned first (NaN, or -777 for int32) on both devices, so
// an element a kernel forgets to write fails. PARITY_VERBOSE=1 prints each check's worst
// |diff| / bound. Without a GPU, gpu_skip_main.cpp exits 77
// before any test runs (ctest: "Skipped"); each test case also starts with gpu_or_skip().
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/backend.h"
#include "core/ops.h"
#include "core/rng.h"
#include "core/tensor.h"

using engine::Activation;
using engine::Backend;
using engine::BinaryOp;
using engine::Device;
using engine::DType;
using engine::Shape;
using engine::Tensor;

namespace {

constexpr double U = 1.0 / 16777216.0;  // float32 unit roundoff, 2^-24
const float NaN = std::numeric_limits<float>::quiet_NaN();
constexpr int32_t INT_POISON = -777;

// Elementwise ops: one element, odd sizes, sizes that are not multiples of 4 (vector loads).
const std::vector<Shape> ELEMENTWISE_SHAPES = {{1, 1}, {3, 7}, {33, 65}, {1000, 3}, {1031}, {4099}};
// Row-wise ops (N, C): single rows/columns, rows wider than a warp and than a block.
const std::vector<Shape> ROW_SHAPES = {{1, 1}, {3, 7}, {33, 65}, {1000, 3}, {3, 1031}, {1, 2049}};

// ---- skipping ---------------------------------------------------------------------------------

// False, loudly, when no GPU can be used: every test case starts `if (!gpu_or_skip()) return;`.
bool gpu_or_skip() {
  std::string why;
  if (engine::device_available(Device::cuda(), &why)) return true;
  MESSAGE("SKIPPED: no GPU (", why, ") — GPU parity not tested");
  std::fprintf(stderr, "*** GPU TEST SKIPPED: no GPU: %s ***\n", why.c_str());
  return false;
}

// ---- the same tensors on both devices -----------------------------------------------------------

enum class Side { Cpu, Gpu };

struct Pair {
  Tensor cpu, gpu;
  Tensor& on(Side side) { return side == Side::Cpu ? cpu : gpu; }
};

Pair both(const std::vector<float>& values, const Shape& shape) {
  return {Tensor::from_vector(values, shape, Device::cpu()),
          Tensor::from_vector(values, shape, Device::cuda())};
}

Pair both_ints(const std::vector<int32_t>& values, const Shape& shape) {
  return {Tensor::from_ints(values, shape, Device::cpu()),
          Tensor::from_ints(values, shape, Device::cuda())};
}

size_t count(const Shape& shape) { return static_cast<size_t>(engine::numel(shape)); }

// An output to be overwritten, poisoned on both devices.
Pair poisoned(const Shape& shape, DType dtype = DType::F32) {
  if (dtype == DType::I32) return both_ints(std::vector<int32_t>(count(shape), INT_POISON), shape);
  return both(std::vector<float>(count(shape), NaN), shape);
}

// `values` as a view at element `offset` of a larger buffer: parameters are slices of one flat
// buffer (Tensor::slice), so an op may get a pointer that is not 16-byte aligned.
Pair both_at_offset(const std::vector<float>& values, const Shape& shape, int64_t offset) {
  std::vector<float> padded(static_cast<size_t>(offset), 123.0f);
  padded.insert(padded.end(), values.begin(), values.end());
  const Pair whole = both(padded, {static_cast<int64_t>(padded.size())});
  return {whole.cpu.slice(offset, shape), whole.gpu.slice(offset, shape)};
}

// Runs op(backend, side) on the CPU backend, then on the GPU backend, and waits for the GPU.
template <typename Fn>
void run_both(Fn&& op) {
  op(engine::backend_for(Device::cpu()), Side::Cpu);
  Backend& gpu = engine::backend_for(Device::cuda());
  op(gpu, Side::Gpu);
  gpu.synchronize();
}

// ---- random inputs (Philox: the same numbers on every platform) ---------------------------------

std::vector<float> uniform(engine::Generator& rng, size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (float& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

// Random sign, magnitude in [lo, hi]: never zero.
std::vector<float> nonzero(engine::Generator& rng, size_t n, float lo, float hi) {
  std::vector<float> v = uniform(rng, n, lo, hi);
  for (float& x : v) x = rng.uniform() < 0.5f ? -x : x;
  return v;
}

std::vector<int32_t> random_ints(engine::Generator& rng, size_t n, int32_t below) {
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = static_cast<int32_t>(rng.below(static_cast<uint64_t>(below)));
  return v;
}

// Row-wise softmax in double, rounded to float (or its log): valid inputs for the backwards.
std::vector<float> host_softmax(const std::vector<float>& x, size_t cols, bool log) {
  std::vector<float> y(x.size());
  for (size_t r = 0; r < x.size() / cols; ++r) {
    const float* row = &x[r * cols];
    const double max = *std::max_element(row, row + cols);
    double total = 0.0;
    for (size_t c = 0; c < cols; ++c) total += std::exp(row[c] - max);
    for (size_t c = 0; c < cols; ++c) {
      const double log_p = row[c] - max - std::log(total);
      y[r * cols + c] = static_cast<float>(log ? log_p : std::exp(log_p));
    }
  }
  return y;
}

// ---- comparison ---------------------------------------------------------------------------------

struct Tol {
  double rel;
  double abs;
};
constexpr Tol EXACT{0.0, 0.0};
// tanhf/expf: glibc within 1-2 ulp, CUDA's tanhf/expf within 2, __expf within 2 + 1.2|x| ulp
// (1 ulp <= 2U relative), plus the roundings around the call: 16U relative; 16U absolute as
// well, since a large __expf error only shows on outputs near 0 and a tanh written through
// e^2x is accurate in absolute, not relative, terms near 0.
constexpr Tol TRANSCENDENTAL{16 * U, 16 * U};
// act'(y) * dy from the same y: 1 - y*y or y*(1 - y) and a product, up to 3 roundings each
// side (or an FMA), and 1 - y*y cancels near |y| = 1, where its error is U absolute.
constexpr Tol ACT_BACKWARD{4 * U, 4 * U};

// Row-wise softmax of (., cols) inputs with |x| <= max_abs: the row sum of `cols` exp() terms
// errs by ~cols*U relative, so log-sum-exp by ~cols*U absolute, plus the rounding of lse and of
// x - lse (~|lse| U each), plus expf's 2 ulp: that absolute error of log p is the relative
// error of p. Doubled for two devices.
Tol softmax_tol(int64_t cols, double max_abs) {
  const double e =
      2.0 *
      (static_cast<double>(cols) + 2.0 * (max_abs + std::log(static_cast<double>(cols))) + 32.0) *
      U;
  return {e, e};
}

// Checks |gpu - cpu| <= tol.abs + tol.rel * scale_i (scale_i = |cpu_i| when `scale` is empty);
// a NaN anywhere fails. Reports the number of bad elements and the worst one.
void check_close(const std::string& what, const std::vector<float>& cpu,
                 const std::vector<float>& gpu, Tol tol, const std::vector<double>& scale = {}) {
  INFO(what);
  REQUIRE(cpu.size() == gpu.size());
  REQUIRE((scale.empty() || scale.size() == cpu.size()));
  size_t bad = 0, worst = 0;
  double worst_ratio = -1.0, worst_bound = 0.0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double c = cpu[i], g = gpu[i];
    const double bound = tol.abs + tol.rel * (scale.empty() ? std::fabs(c) : scale[i]);
    const double err = std::fabs(g - c);
    const bool ok = c == g || err <= bound;  // c == g also admits equal infinities
    const double ratio =
        ok ? err / std::max(bound, 1e-300) : std::numeric_limits<double>::infinity();
    if (!ok) ++bad;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
      worst_bound = bound;
    }
  }
  if (std::getenv("PARITY_VERBOSE") != nullptr) {
    std::printf("%-72s worst |diff| / bound %.3f\n", what.c_str(), worst_ratio);
  }
  if (bad == 0) return;
  CHECK_MESSAGE(bad == 0, bad, " of ", cpu.size(), " elements differ; worst [", worst, "]: cpu ",
                cpu[worst], " gpu ", gpu[worst], " bound ", worst_bound);
}

void check_close(const std::string& what, const Pair& out, Tol tol,
                 const std::vector<double>& scale = {}) {
  CHECK(out.gpu.device() == Device::cuda());
  check_close(what, out.cpu.to_vector(), out.gpu.to_vector(), tol, scale);
}

void check_ints(const std::string& what, const Pair& out) {
  INFO(what);
  CHECK(out.cpu.to_int_vector() == out.gpu.to_int_vector());
}

// Normwise: max|gpu - cpu| / max|cpu| <= tol, for results of a chain of ops.
void check_normwise(const std::string& what, const std::vector<float>& cpu,
                    const std::vector<float>& gpu, double tol) {
  INFO(what);
  REQUIRE(cpu.size() == gpu.size());
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double d = std::fabs(static_cast<double>(gpu[i]) - cpu[i]);
    diff = std::isfinite(d) ? std::max(diff, d) : std::numeric_limits<double>::infinity();
    scale = std::max(scale, std::fabs(static_cast<double>(cpu[i])));
  }
  CHECK(scale > 0.0);
  if (std::getenv("PARITY_VERBOSE") != nullptr) {
    std::printf("%-72s normwise %.2e (tol %.0e)\n", what.c_str(), diff / scale, tol);
  }
  CHECK_MESSAGE(diff <= tol * scale, "max|diff| ", diff, " max|cpu| ", scale, " tol ", tol);
}

std::string name(const Shape& shape) { return engine::to_string(shape); }

const char* name(Activation act) {
  switch (act) {
    case Activation::None:
      return "none";
    case Activation::Relu:
      return "relu";
    case Activation::Tanh:
      return "tanh";
    case Activation::Sigmoid:
      return "sigmoid";
    case Activation::Softmax:
      return "softmax";
  }
  return "?";
}

// A valid forward output y of `act` (the input of the backwards), relu with exact zeros.
std::vector<float> activation_output(engine::Generator& rng, Activation act, size_t n) {
  std::vector<float> y = uniform(rng, n, -3.0f, 3.0f);
  for (float& v : y) {
    if (act == Activation::Relu) v = std::max(v, 0.0f);
    if (act == Activation::Tanh) v = std::tanh(v);
    if (act == Activation::Sigmoid) v = 1.0f / (1.0f + std::exp(-v));
  }
  return y;
}

}  // namespace

// ---- fill -------------------------------------------------------------------------------------

TEST_CASE("parity: fill, float32 and int32, whole tensors and a slice") {
  if (!gpu_or_skip()) return;
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    for (const float value : {0.0f, -1.5f, 3.0e7f, 1.0e-3f}) {
      Pair y = poisoned(shape);
      run_both([&](Backend& b, Side s) { b.fill(y.on(s), value); });
      check_close("fill f32 " + name(shape) + " " + std::to_string(value), y, EXACT);  // a copy
    }
    for (const float value : {0.0f, 7.0f, -3.0f, 123456.0f}) {  // integral: conversion is exact
      Pair y = poisoned(shape, DType::I32);
      run_both([&](Backend& b, Side s) { b.fill(y.on(s), value); });
      check_ints("fill i32 " + name(shape) + " " + std::to_string(value), y);
    }
  }
  // Elements [5, 5 + 1031) of a poisoned buffer: the rest must stay NaN on both.
  Pair whole = poisoned({1100});
  Pair part{whole.cpu.slice(5, {1031}), whole.gpu.slice(5, {1031})};
  run_both([&](Backend& b, Side s) { b.fill(part.on(s), 2.5f); });
  const std::vector<float> g = whole.gpu.to_vector();
  size_t wrong = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool inside = i >= 5 && i < 5 + 1031;
    wrong += (inside ? g[i] != 2.5f : !std::isnan(g[i])) ? 1 : 0;
  }
  CHECK_MESSAGE(wrong == 0, "fill of a slice: ", wrong, " elements wrong or written outside it");
}

// ---- matmul -----------------------------------------------------------------------------------

TEST_CASE("parity: matmul, all transpose combinations, alpha/beta, odd and larger shapes") {
  if (!gpu_or_skip()) return;
  struct Dims {
    int64_t m, n, k;
  };
  std::vector<Dims> dims;
  for (const int64_t m : {1, 7, 33, 130})
    for (const int64_t n : {1, 7, 33, 130})
      for (const int64_t k : {1, 7, 33, 130}) dims.push_back({m, n, k});
  dims.push_back({257, 129, 300});
  struct Scaling {
    float alpha, beta;
  };
  // beta 0 must not read C (it is poisoned); beta 1 accumulates, as a gradient does.
  const std::vector<Scaling> scalings = {{1.0f, 0.0f}, {1.0f, 1.0f}, {-0.75f, 1.0f}, {1.5f, 0.25f}};
  engine::Generator rng(11);
  for (const Dims& d : dims) {
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        const Shape a_shape = ta ? Shape{d.k, d.m} : Shape{d.m, d.k};
        const Shape b_shape = tb ? Shape{d.n, d.k} : Shape{d.k, d.n};
        const std::vector<float> a = uniform(rng, count(a_shape), -1.0f, 1.0f);
        const std::vector<float> bv = uniform(rng, count(b_shape), -1.0f, 1.0f);
        const std::vector<float> c0 = uniform(rng, static_cast<size_t>(d.m * d.n), -1.0f, 1.0f);
        // sum_p |op(a)[i, p]| |op(b)[p, j]|: the magnitude the dot product's rounding is relative
        // to.
        const size_t m = static_cast<size_t>(d.m), n = static_cast<size_t>(d.n),
                     k = static_cast<size_t>(d.k);
        std::vector<double> abs_ab(m * n, 0.0);
        for (size_t i = 0; i < m; ++i)
          for (size_t p = 0; p < k; ++p) {
            const double av = std::fabs(static_cast<double>(ta ? a[p * m + i] : a[i * k + p]));
            for (size_t j = 0; j < n; ++j)
              abs_ab[i * n + j] += av * std::fabs(tb ? bv[j * k + p] : bv[p * n + j]);
          }
        // b at an odd offset once per shape: a misaligned operand, as a parameter slice is.
        Pair pa = both(a, a_shape), pb = both_at_offset(bv, b_shape, 1);
        for (const Scaling& sc : scalings) {
          Pair c = sc.beta == 0.0f ? poisoned({d.m, d.n}) : both(c0, {d.m, d.n});
          run_both([&](Backend& b, Side s) {
            b.matmul(pa.on(s), ta, pb.on(s), tb, c.on(s), sc.alpha, sc.beta);
          });
          std::vector<double> scale(m * n);
          for (size_t i = 0; i < m * n; ++i) {
            scale[i] = std::fabs(sc.alpha) * abs_ab[i] + std::fabs(sc.beta * c0[i]);
          }
          // K-term float dot product, then alpha and beta C: ~(K + 2) U of the magnitudes summed
          // on each device, whatever the summation order (split-K, tiles): 2 (K + 2) U apart.
          check_close("matmul M=" + std::to_string(d.m) + " N=" + std::to_string(d.n) +
                          " K=" + std::to_string(d.k) + (ta ? " A^T" : "") + (tb ? " B^T" : "") +
                          " alpha=" + std::to_string(sc.alpha) + " beta=" + std::to_string(sc.beta),
                      c, {2.0 * static_cast<double>(d.k + 2) * U, 0.0}, scale);
        }
      }
    }
  }
}

// ---- Dense epilogue: bias + activation, and its backward; sum_rows ------------------------------

TEST_CASE("parity: bias_activation_forward, None/Relu/Tanh/Sigmoid") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(21);
  for (const Shape& shape : ROW_SHAPES) {
    const size_t cols = static_cast<size_t>(shape[1]);
    const std::vector<float> x = uniform(rng, count(shape), -4.0f, 4.0f);
    const std::vector<float> bias = uniform(rng, cols, -1.0f, 1.0f);
    Pair px = both(x, shape), pbias = both_at_offset(bias, {shape[1]}, 3);
    for (const Activation act :
         {Activation::None, Activation::Relu, Activation::Tanh, Activation::Sigmoid}) {
      Pair y = poisoned(shape);
      run_both([&](Backend& b, Side s) {
        b.bias_activation_forward(act, px.on(s), pbias.on(s), y.on(s));
      });
      // x + bias is one IEEE addition (identical), relu a selection: exact; tanh/sigmoid: libm vs
      // CUDA.
      const bool exact = act == Activation::None || act == Activation::Relu;
      check_close(std::string("bias_activation_forward ") + name(act) + " " + name(shape), y,
                  exact ? EXACT : TRANSCENDENTAL);
    }
  }
}

TEST_CASE("parity: bias_activation_backward, Relu/Tanh/Sigmoid, with and without dbias") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(22);
  for (const Shape& shape : ROW_SHAPES) {
    const size_t rows = static_cast<size_t>(shape[0]), cols = static_cast<size_t>(shape[1]);
    for (const Activation act : {Activation::Relu, Activation::Tanh, Activation::Sigmoid}) {
      Pair y = both(activation_output(rng, act, count(shape)), shape);
      Pair dy = both(uniform(rng, count(shape), -1.0f, 1.0f), shape);
      const std::string what =
          std::string("bias_activation_backward ") + name(act) + " " + name(shape);
      const Tol dx_tol = act == Activation::Relu ? EXACT : ACT_BACKWARD;  // relu': a selection
      for (const bool with_dbias : {true, false}) {
        Pair dx = poisoned(shape);
        Pair dbias = with_dbias ? poisoned({shape[1]}) : Pair{};  // Pair{}: undefined tensors
        run_both([&](Backend& b, Side s) {
          b.bias_activation_backward(act, y.on(s), dy.on(s), dx.on(s), dbias.on(s));
        });
        check_close(what + (with_dbias ? " dx" : " dx (no dbias)"), dx, dx_tol);
        if (!with_dbias) continue;
        const std::vector<float> dx_cpu = dx.cpu.to_vector();
        std::vector<double> col_abs(cols, 0.0);
        for (size_t i = 0; i < dx_cpu.size(); ++i) col_abs[i % cols] += std::fabs(dx_cpu[i]);
        // A column sum of N terms (2 (N + 2) U of sum|dx|), over terms that themselves differ
        // by ACT_BACKWARD: N * 4U absolute.
        check_close(what + " dbias", dbias,
                    {2.0 * static_cast<double>(rows + 2) * U, 4.0 * static_cast<double>(rows) * U},
                    col_abs);
      }
    }
  }
}

TEST_CASE("parity: sum_rows") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(23);
  for (const Shape& shape : ROW_SHAPES) {
    const size_t rows = static_cast<size_t>(shape[0]), cols = static_cast<size_t>(shape[1]);
    const std::vector<float> dy = uniform(rng, count(shape), -1.0f, 1.0f);
    Pair pdy = both(dy, shape), db = poisoned({shape[1]});
    run_both([&](Backend& b, Side s) { b.sum_rows(pdy.on(s), db.on(s)); });
    std::vector<double> col_abs(cols, 0.0);
    for (size_t i = 0; i < dy.size(); ++i) col_abs[i % cols] += std::fabs(dy[i]);
    // A float sum of N terms in any order: 2 (N + 1) U of sum|dy| between the devices.
    check_close("sum_rows " + name(shape), db, {2.0 * static_cast<double>(rows + 1) * U, 0.0},
                col_abs);
  }
}

// ---- elementwise: binary, axpby, activations ----------------------------------------------------

TEST_CASE("parity: binary Add/Sub/Mul, including misaligned views") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(31);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    for (const int64_t offset : {0, 1}) {
      const std::vector<float> a = uniform(rng, count(shape), -2.0f, 2.0f);
      const std::vector<float> bv = uniform(rng, count(shape), -2.0f, 2.0f);
      Pair pa = both_at_offset(a, shape, offset), pb = both(bv, shape);
      for (const BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul}) {
        Pair y = poisoned(shape);
        run_both([&](Backend& b, Side s) { b.binary(op, pa.on(s), pb.on(s), y.on(s)); });
        const char* op_name = op == BinaryOp::Add ? "add" : op == BinaryOp::Sub ? "sub" : "mul";
        // One correctly rounded IEEE operation per element: bitwise identical.
        check_close(std::string("binary ") + op_name + " " + name(shape) + " offset " +
                        std::to_string(offset),
                    y, EXACT);
      }
    }
  }
}

TEST_CASE("parity: axpby, beta 0 (y not read) and beta 1 (accumulate)") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(32);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    const std::vector<float> x = uniform(rng, count(shape), -1.0f, 1.0f);
    const std::vector<float> y0 = uniform(rng, count(shape), -1.0f, 1.0f);
    Pair px = both(x, shape);
    for (const float alpha : {1.0f, -0.3f, 2.5f}) {
      for (const float beta : {0.0f, 1.0f, 0.5f}) {
        Pair y = beta == 0.0f ? poisoned(shape) : both(y0, shape);
        run_both([&](Backend& b, Side s) { b.axpby(alpha, px.on(s), beta, y.on(s)); });
        std::vector<double> scale(x.size());
        for (size_t i = 0; i < x.size(); ++i)
          scale[i] = std::fabs(alpha * x[i]) + std::fabs(beta * y0[i]);
        // beta 0: alpha * x, one rounding, exact. Otherwise two products and a sum, or FMAs:
        // each side within 2U of sum|terms|, so 4U apart (the terms may cancel).
        check_close("axpby " + name(shape) + " alpha " + std::to_string(alpha) + " beta " +
                        std::to_string(beta),
                    y, beta == 0.0f ? EXACT : Tol{4 * U, 0.0}, scale);
      }
    }
  }
}

TEST_CASE("parity: activation_forward and activation_backward, Relu/Tanh/Sigmoid") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(33);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    std::vector<float> x = uniform(rng, count(shape), -5.0f, 5.0f);
    // Saturated inputs: e^x overflows for |x| > 88, which must still give 0, 1 or +-1, not NaN.
    for (size_t i = 0; i < x.size(); i += 97) x[i] = (i / 97) % 2 == 0 ? 100.0f : -30.0f;
    Pair px = both(x, shape);
    for (const Activation act : {Activation::Relu, Activation::Tanh, Activation::Sigmoid}) {
      Pair y = poisoned(shape);
      run_both([&](Backend& b, Side s) { b.activation_forward(act, px.on(s), y.on(s)); });
      check_close(std::string("activation_forward ") + name(act) + " " + name(shape), y,
                  act == Activation::Relu ? EXACT : TRANSCENDENTAL);

      Pair out = both(activation_output(rng, act, count(shape)), shape);
      Pair dy = both(uniform(rng, count(shape), -1.0f, 1.0f), shape), dx = poisoned(shape);
      run_both(
          [&](Backend& b, Side s) { b.activation_backward(act, out.on(s), dy.on(s), dx.on(s)); });
      check_close(std::string("activation_backward ") + name(act) + " " + name(shape), dx,
                  act == Activation::Relu ? EXACT : ACT_BACKWARD);
    }
  }
}

// ---- softmax and the losses ---------------------------------------------------------------------

TEST_CASE("parity: softmax_forward and softmax_backward, log false and true") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(41);
  for (const Shape& shape : ROW_SHAPES) {
    const size_t cols = static_cast<size_t>(shape[1]);
    std::vector<float> x = uniform(rng, count(shape), -4.0f, 4.0f);
    // Every third row shifted by 50: exp() would overflow without subtracting the row max.
    for (size_t i = 0; i < x.size(); ++i) x[i] += (i / cols) % 3 == 2 ? 50.0f : 0.0f;
    Pair px = both(x, shape);
    for (const bool log : {false, true}) {
      const std::string what = std::string(log ? "log_softmax " : "softmax ") + name(shape);
      Pair y = poisoned(shape);
      run_both([&](Backend& b, Side s) { b.softmax_forward(px.on(s), y.on(s), log); });
      check_close(what + " forward", y, softmax_tol(shape[1], 54.0));

      // Backward from a valid y, in double: log=false dx = p (dy - sum(dy p)), log=true
      // dx = dy - p sum(dy). The row sum of C terms errs by C U of its sum|terms|, which the
      // subtraction may expose; expf adds 2 ulp: 2 (C + 24) U of the magnitudes per element.
      const std::vector<float> p = host_softmax(x, cols, false);
      const std::vector<float> dy = uniform(rng, count(shape), -1.0f, 1.0f);
      Pair py = both(log ? host_softmax(x, cols, true) : p, shape), pdy = both(dy, shape),
           dx = poisoned(shape);
      run_both([&](Backend& b, Side s) { b.softmax_backward(py.on(s), pdy.on(s), dx.on(s), log); });
      std::vector<double> scale(x.size());
      for (size_t r = 0; r < x.size() / cols; ++r) {
        double row_abs = 0.0;  // sum |dy p| (log false) or sum |dy| (log true)
        for (size_t c = 0; c < cols; ++c)
          row_abs += std::fabs(dy[r * cols + c]) * (log ? 1.0 : p[r * cols + c]);
        for (size_t c = 0; c < cols; ++c) {
          const size_t i = r * cols + c;
          scale[i] = log ? std::fabs(dy[i]) + p[i] * row_abs : p[i] * (std::fabs(dy[i]) + row_abs);
        }
      }
      check_close(what + " backward", dx, {2.0 * static_cast<double>(cols + 24) * U, 0.0}, scale);
    }
  }
}

TEST_CASE("parity: softmax_cross_entropy_forward and _backward") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(42);
  for (const Shape& shape : ROW_SHAPES) {
    const size_t rows = static_cast<size_t>(shape[0]), cols = static_cast<size_t>(shape[1]);
    const std::vector<float> logits = uniform(rng, count(shape), -6.0f, 6.0f);
    Pair pl = both(logits, shape),
         labels = both_ints(random_ints(rng, rows, static_cast<int32_t>(cols)), {shape[0]});
    Pair probs = poisoned(shape), loss = poisoned({shape[0]});
    run_both([&](Backend& b, Side s) {
      b.softmax_cross_entropy_forward(pl.on(s), labels.on(s), probs.on(s), loss.on(s));
    });
    // probs as softmax; loss = lse - logit[label] carries log-sum-exp's absolute error.
    const Tol tol = softmax_tol(shape[1], 6.0);
    check_close("softmax_cross_entropy_forward probs " + name(shape), probs, tol);
    check_close("softmax_cross_entropy_forward loss " + name(shape), loss, {0.0, tol.abs});

    Pair p = both(host_softmax(logits, cols, false), shape);
    Pair dloss = both(uniform(rng, rows, -1.0f, 1.0f), {shape[0]}), dlogits = poisoned(shape);
    run_both([&](Backend& b, Side s) {
      b.softmax_cross_entropy_backward(p.on(s), labels.on(s), dloss.on(s), dlogits.on(s));
    });
    // dloss * (p - [c == label]): a subtraction (exact near p = 1) and a product, or one FMA;
    // |dloss| <= 1 and |p - 1| <= 1: 4U absolute covers either way.
    check_close("softmax_cross_entropy_backward " + name(shape), dlogits, ACT_BACKWARD);
  }
}

TEST_CASE("parity: binary_cross_entropy_forward and _backward, including clipped p") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(43);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    std::vector<float> p = uniform(rng, count(shape), 0.0f, 1.0f);
    std::vector<float> t = uniform(rng, count(shape), 0.0f, 1.0f);
    for (size_t i = 0; i < p.size(); ++i) {  // the clip's edges and hard 0/1 targets
      if (i % 17 == 3) p[i] = 0.0f;
      if (i % 19 == 4) p[i] = 1.0f;
      if (i % 23 == 5) p[i] = 1e-8f;
      if (i % 7 == 6) t[i] = static_cast<float>(i % 2);
    }
    Pair pp = both(p, shape), pt = both(t, shape), loss = poisoned(shape);
    run_both([&](Backend& b, Side s) {
      b.binary_cross_entropy_forward(pp.on(s), pt.on(s), loss.on(s));
    });
    // Two logf (within 1-3 ulp; a fast __logf errs by 2^-21.4 absolute near 1) and four
    // roundings of same-sign terms: 16U relative, 2^-20 absolute.
    check_close("binary_cross_entropy_forward " + name(shape), loss, {16 * U, 1.0 / 1048576.0});

    const std::vector<float> g = uniform(rng, count(shape), -1.0f, 1.0f);
    Pair dloss = both(g, shape), dp = poisoned(shape);
    run_both([&](Backend& b, Side s) {
      b.binary_cross_entropy_backward(pp.on(s), pt.on(s), dloss.on(s), dp.on(s));
    });
    // -g (t / (p + eps) - (1 - t) / (1 - p + eps)): two divisions whose difference may cancel,
    // ~6 roundings per side relative to |g| (t / (p + eps) + (1 - t) / (1 - p + eps)).
    std::vector<double> scale(p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      scale[i] = std::fabs(g[i]) * (t[i] / (p[i] + 1e-7) + (1.0 - t[i]) / (1.0 - p[i] + 1e-7));
    }
    check_close("binary_cross_entropy_backward " + name(shape), dp, {16 * U, 0.0}, scale);
  }
}

// ---- dropout ------------------------------------------------------------------------------------

TEST_CASE("parity: dropout_forward/backward drop the same elements on both devices") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(51);
  const std::vector<Shape> shapes = {{1}, {3}, {7}, {33, 65}, {1031}, {4099}, {65539}};
  for (const Shape& shape : shapes) {
    const std::vector<float> x = nonzero(rng, count(shape), 0.1f, 2.0f);  // zero <=> dropped
    Pair px = both(x, shape);
    for (const float rate : {0.1f, 0.5f, 0.9f}) {
      for (const uint64_t seed : {uint64_t{0}, uint64_t{0x9E3779B97F4A7C15ull}}) {
        for (const int32_t step : {0, 41, 123457}) {
          Pair pstep = both_ints({step}, {});
          Pair y = poisoned(shape), dx = poisoned(shape);
          run_both([&](Backend& b, Side s) {
            b.dropout_forward(px.on(s), y.on(s), rate, seed, pstep.on(s));
            b.dropout_backward(px.on(s), dx.on(s), rate, seed, pstep.on(s));  // dy = x
          });
          const std::string what = "dropout " + name(shape) + " rate " + std::to_string(rate) +
                                   " seed " + std::to_string(seed) + " step " +
                                   std::to_string(step);
          const std::vector<float> yc = y.cpu.to_vector(), yg = y.gpu.to_vector(),
                                   dxg = dx.gpu.to_vector();
          size_t mask_mismatch = 0;
          for (size_t i = 0; i < yc.size(); ++i) {
            mask_mismatch += (yc[i] == 0.0f) != (yg[i] == 0.0f) ? 1 : 0;
            mask_mismatch += (yg[i] == 0.0f) != (dxg[i] == 0.0f) ? 1 : 0;  // backward: same mask
          }
          INFO(what);
          CHECK_MESSAGE(mask_mismatch == 0, mask_mismatch, " elements kept on one side only");
          // Kept values: x / (1 - rate) or x * (1 / (1 - rate)), both valid: <= 3 roundings apart.
          check_close(what + " forward", yc, yg, {4 * U, 0.0});
          check_close(what + " backward", dx, {4 * U, 0.0});
        }
      }
    }
  }
}

TEST_CASE("dropout on the GPU: keep fraction, scaling, fresh mask per step and per seed") {
  if (!gpu_or_skip()) return;
  Backend& gpu = engine::backend_for(Device::cuda());
  const int64_t n = 1 << 20;
  const float rate = 0.3f;
  const double keep = 1.0 - rate, scale = 1.0 / keep;
  const Tensor ones = Tensor::full({n}, 1.0f, Device::cuda());
  auto mask = [&](uint64_t seed, int32_t step) {
    Tensor y = Tensor::full({n}, NaN, Device::cuda());
    gpu.dropout_forward(ones, y, rate, seed, Tensor::from_ints({step}, {}, Device::cuda()));
    return y.to_vector();
  };
  const std::vector<float> a = mask(7, 5), b = mask(7, 6), c = mask(8, 5);
  size_t kept = 0, bad_value = 0, differ_step = 0, differ_seed = 0;
  double total = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    kept += a[i] != 0.0f ? 1 : 0;
    total += a[i];
    bad_value += a[i] != 0.0f && std::fabs(a[i] - scale) > 2 * U * scale ? 1 : 0;  // also NaN
    differ_step += (a[i] == 0.0f) != (b[i] == 0.0f) ? 1 : 0;
    differ_seed += (a[i] == 0.0f) != (c[i] == 0.0f) ? 1 : 0;
  }
  const double nd = static_cast<double>(n);
  // Binomial: the kept fraction has sd sqrt(keep rate / n) ~ 4.5e-4; allow 5 sd. Independent
  // masks differ where exactly one keeps: fraction 2 keep rate, sd ~ 4.8e-4.
  const double sd_keep = std::sqrt(keep * rate / nd), p_differ = 2.0 * keep * rate;
  const double sd_differ = std::sqrt(p_differ * (1.0 - p_differ) / nd);
  CHECK(std::fabs(static_cast<double>(kept) / nd - keep) < 5.0 * sd_keep);
  CHECK(bad_value == 0);
  CHECK(std::fabs(total / nd - 1.0) < 5.0 * sd_keep * scale);  // inverted dropout keeps the mean
  CHECK(std::fabs(static_cast<double>(differ_step) / nd - p_differ) < 5.0 * sd_differ);
  CHECK(std::fabs(static_cast<double>(differ_seed) / nd - p_differ) < 5.0 * sd_differ);
  CHECK(mask(7, 5) == a);  // and the same seed and step give the same mask again
}

// ---- reductions, broadcast, gather, accuracy ----------------------------------------------------

TEST_CASE("parity: sum, exact on dyadic inputs and bounded on general ones") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(61);
  // Values k / q with |k| <= q: every partial sum of n <= 2^24 / q of them is a multiple of
  // 1/q below n in size, exact in float, so any summation order gives the exact sum and only
  // the final scale * sum is rounded, once on each device.
  for (const int64_t n :
       {int64_t{1}, int64_t{7}, int64_t{1031}, int64_t{65536}, int64_t{1} << 20}) {
    const int32_t q = n <= 65536 ? 256 : 16;
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x)
      v = static_cast<float>(static_cast<int32_t>(rng.below(static_cast<uint64_t>(2 * q + 1))) -
                             q) /
          static_cast<float>(q);
    Pair px = both(x, {n});
    for (const float scale : {1.0f, 1.0f / static_cast<float>(n), -3.0f}) {
      Pair y = poisoned({});
      run_both([&](Backend& b, Side s) { b.sum(px.on(s), y.on(s), scale); });
      check_close("sum dyadic n=" + std::to_string(n) + " scale " + std::to_string(scale), y,
                  {2 * U, 0.0});
    }
  }
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    const std::vector<float> x = uniform(rng, count(shape), -1.0f, 1.0f);
    double abs_sum = 0.0;
    for (const float v : x) abs_sum += std::fabs(v);
    Pair px = both(x, shape), y = poisoned({});
    run_both([&](Backend& b, Side s) { b.sum(px.on(s), y.on(s), 0.5f); });
    // An n-term float sum (the CPU sums in double: smaller): (n + 2) U of 0.5 sum|x|.
    check_close("sum " + name(shape), y, {static_cast<double>(x.size() + 2) * U, 0.0},
                {0.5 * abs_sum});
  }
}

TEST_CASE("parity: broadcast_scalar") {
  if (!gpu_or_skip()) return;
  Pair s = both({0.7371f}, {});
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    for (const float scale : {1.0f, 1.0f / 1031.0f, -2.0f}) {
      Pair y = poisoned(shape);
      run_both([&](Backend& b, Side side) { b.broadcast_scalar(s.on(side), scale, y.on(side)); });
      check_close("broadcast_scalar " + name(shape) + " scale " + std::to_string(scale), y,
                  EXACT);  // one product
    }
  }
}

TEST_CASE("parity: gather_rows, float32 and int32") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(62);
  const std::vector<Shape> sources = {{1, 1}, {7, 3}, {33, 65}, {1000, 3}, {10, 3, 5}, {4099}};
  for (const Shape& shape : sources) {
    for (const int64_t batch : {1, 5, 64, 1031}) {  // indices repeat when batch > rows
      Pair index = both_ints(
          random_ints(rng, static_cast<size_t>(batch), static_cast<int32_t>(shape[0])), {batch});
      Shape out_shape = shape;
      out_shape[0] = batch;
      const std::string what = name(shape) + " batch " + std::to_string(batch);
      Pair x = both(uniform(rng, count(shape), -1.0f, 1.0f), shape), y = poisoned(out_shape);
      run_both([&](Backend& b, Side s) { b.gather_rows(x.on(s), index.on(s), y.on(s)); });
      check_close("gather_rows f32 " + what, y, EXACT);  // a copy
      std::vector<int32_t> xi(count(shape));
      for (int32_t& v : xi) v = static_cast<int32_t>(rng.below(2000000)) - 1000000;
      Pair pxi = both_ints(xi, shape), yi = poisoned(out_shape, DType::I32);
      run_both([&](Backend& b, Side s) { b.gather_rows(pxi.on(s), index.on(s), yi.on(s)); });
      check_ints("gather_rows i32 " + what, yi);
    }
  }
}

TEST_CASE("parity: count_correct accumulates the same count") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(63);
  const std::vector<Shape> shapes = {{1, 1}, {3, 7}, {33, 65}, {1000, 3}, {4099, 10}};
  for (const Shape& shape : shapes) {
    const size_t rows = static_cast<size_t>(shape[0]), cols = static_cast<size_t>(shape[1]);
    const std::vector<float> logits = uniform(rng, count(shape), -3.0f, 3.0f);
    std::vector<int32_t> labels = random_ints(rng, rows, static_cast<int32_t>(cols));
    for (size_t r = 0; r < rows; r += 2) {  // half the rows right, by construction
      const float* row = &logits[r * cols];
      labels[r] = static_cast<int32_t>(std::max_element(row, row + cols) - row);
    }
    Pair pl = both(logits, shape), plab = both_ints(labels, {shape[0]}), correct = both({5.0f}, {});
    run_both([&](Backend& b, Side s) {
      b.count_correct(pl.on(s), plab.on(s), correct.on(s));
      b.count_correct(pl.on(s), plab.on(s), correct.on(s));  // += twice
    });
    check_close("count_correct " + name(shape), correct, EXACT);  // integers below 2^24
    CHECK(correct.cpu.item() >= 5.0f + 2.0f * static_cast<float>((rows + 1) / 2));
  }
}

// ---- optimizers and the step counter ------------------------------------------------------------

TEST_CASE("parity: sgd_update, momentum 0 and 0.9") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(71);
  const float lr = 0.01f;
  for (const int64_t n : {int64_t{1}, int64_t{1031}, int64_t{101770}}) {
    const std::vector<float> p0 = uniform(rng, static_cast<size_t>(n), -1.0f, 1.0f);
    const std::vector<float> g = uniform(rng, static_cast<size_t>(n), -1.0f, 1.0f);
    const std::vector<float> v0 = uniform(rng, static_cast<size_t>(n), -0.1f, 0.1f);
    Pair grad = both(g, {n});
    for (const float momentum : {0.0f, 0.9f}) {
      Pair p = both(p0, {n});
      Pair v = momentum == 0.0f ? Pair{} : both(v0, {n});  // unused (undefined) at momentum 0
      run_both(
          [&](Backend& b, Side s) { b.sgd_update(p.on(s), grad.on(s), v.on(s), lr, momentum); });
      std::vector<double> v_scale(p0.size()), p_scale(p0.size());
      for (size_t i = 0; i < p0.size(); ++i) {
        v_scale[i] = std::fabs(momentum * v0[i]) + std::fabs(lr * g[i]);
        p_scale[i] = std::fabs(p0[i]) + v_scale[i];
      }
      // v = m v - lr g and p += v: two products and a sum per line, or FMAs; each side within
      // 2U of the terms' magnitudes per line, and p inherits v's error: 4U and 8U apart.
      const std::string what =
          "sgd_update n=" + std::to_string(n) + " momentum " + std::to_string(momentum);
      check_close(what + " param", p, {8 * U, 0.0}, p_scale);
      if (momentum != 0.0f) check_close(what + " velocity", v, {4 * U, 0.0}, v_scale);
    }
  }
}

TEST_CASE("parity: adam_update at steps 0 and 41, and five steps with increment") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(72);
  const engine::AdamConfig config{1e-3f, 0.9f, 0.999f, 1e-7f};
  for (const int64_t n : {int64_t{1}, int64_t{1031}, int64_t{101770}}) {
    const size_t un = static_cast<size_t>(n);
    const std::vector<float> p0 = uniform(rng, un, -1.0f, 1.0f), g = uniform(rng, un, -1.0f, 1.0f);
    const std::vector<float> m0 = uniform(rng, un, -0.1f, 0.1f), v0 = uniform(rng, un, 0.0f, 0.01f);
    Pair grad = both(g, {n});
    for (const int32_t step : {0, 41}) {
      Pair p = both(p0, {n}), m = both(m0, {n}), v = both(v0, {n}), pstep = both_ints({step}, {});
      run_both([&](Backend& b, Side s) {
        b.adam_update(p.on(s), grad.on(s), m.on(s), v.on(s), config, pstep.on(s));
      });
      const double b1 = config.beta1, b2 = config.beta2;
      const double lr_t = engine::adam_step_size(config, step + 1);
      std::vector<double> m_scale(un), p_scale(un);
      for (size_t i = 0; i < un; ++i) {
        m_scale[i] = b1 * std::fabs(m0[i]) + (1.0 - b1) * std::fabs(g[i]);
        const double v_new = b2 * v0[i] + (1.0 - b2) * g[i] * g[i];
        // p -= lr_t m / (sqrt(v) + eps): m's error (4U of m_scale), sqrt, +eps, a division,
        // a product and lr_t's own rounding: under 24U of the update's magnitude per side,
        // then 2U of |p| for the subtraction.
        const double update_scale = lr_t * m_scale[i] / (std::sqrt(v_new) + config.epsilon);
        p_scale[i] = std::fabs(p0[i]) + 24.0 * update_scale;
      }
      const std::string what =
          "adam_update n=" + std::to_string(n) + " step " + std::to_string(step);
      check_close(what + " m", m, {4 * U, 0.0},
                  m_scale);                       // b1 m + (1 - b1) g: 2U of the terms each side
      check_close(what + " v", v, {4 * U, 0.0});  // all terms >= 0: relative to v itself
      check_close(what + " param", p, {2 * U, 0.0}, p_scale);
    }
  }
  // Five training steps from zero state, the step counter advanced on the device in between.
  const int64_t n = 4099;
  Pair p = both(uniform(rng, 4099, -1.0f, 1.0f), {n}),
       m = both(std::vector<float>(4099, 0.0f), {n});
  Pair v = both(std::vector<float>(4099, 0.0f), {n}), step = both_ints({0}, {});
  for (int k = 0; k < 5; ++k) {
    Pair grad = both(uniform(rng, 4099, -1.0f, 1.0f), {n});
    run_both([&](Backend& b, Side s) {
      b.adam_update(p.on(s), grad.on(s), m.on(s), v.on(s), config, step.on(s));
      b.increment(step.on(s));
    });
  }
  check_ints("adam five steps: step counter", step);
  CHECK(step.gpu.to_int_vector() == std::vector<int32_t>{5});
  // From zero state Adam's update is below lr (1 - b1) / sqrt(1 - b2) ~ 3.2 lr < 0.01 per step:
  // five steps of (24U of that + 2U of |p| <= 1).
  check_close("adam five steps: param", p, {10 * U, 5 * 24 * U * 0.01});
}

TEST_CASE("parity: increment is exact int32 arithmetic") {
  if (!gpu_or_skip()) return;
  // 2^24 + 1 is not a float: a counter that went through float would come out wrong.
  for (const int32_t start : {0, 41, (1 << 24) + 1, 2147483600}) {
    Pair counter = both_ints({start}, {});
    run_both([&](Backend& b, Side s) {
      for (int k = 0; k < 3; ++k) b.increment(counter.on(s));
    });
    check_ints("increment from " + std::to_string(start), counter);
    CHECK(counter.gpu.to_int_vector() == std::vector<int32_t>{start + 3});
  }
}

// ---- chains of differentiable ops through backward ----------------------------------------------

namespace {

struct ChainResult {
  float loss;
  std::vector<std::vector<float>> grads;
};

Tensor parameter(const std::vector<float>& values, const Shape& shape, Device device) {
  Tensor t = Tensor::from_vector(values, shape, device);
  t.set_requires_grad(true);
  return t;
}

// Dense(tanh) -> dropout -> Dense (weights stored (C, H), used transposed) -> softmax
// cross-entropy -> mean -> backward; returns the loss and the four parameter gradients.
ChainResult dense_classifier(Device device, uint64_t data_seed) {
  const int64_t batch = 64, in = 33, hidden = 20, classes = 10;
  engine::Generator rng(data_seed);
  const Tensor x = Tensor::from_vector(uniform(rng, static_cast<size_t>(batch * in), -1.0f, 1.0f),
                                       {batch, in}, device);
  Tensor w1 =
      parameter(uniform(rng, static_cast<size_t>(in * hidden), -0.3f, 0.3f), {in, hidden}, device);
  Tensor b1 = parameter(uniform(rng, static_cast<size_t>(hidden), -0.1f, 0.1f), {hidden}, device);
  Tensor w2 = parameter(uniform(rng, static_cast<size_t>(classes * hidden), -0.5f, 0.5f),
                        {classes, hidden}, device);
  Tensor b2 = parameter(uniform(rng, static_cast<size_t>(classes), -0.1f, 0.1f), {classes}, device);
  const Tensor labels = Tensor::from_ints(
      random_ints(rng, static_cast<size_t>(batch), static_cast<int32_t>(classes)), {batch}, device);
  const engine::DropoutStream stream{99, Tensor::from_ints({3}, {}, device)};
  // tanh, not relu: no kink, so a 1-ulp difference in a pre-activation cannot flip a gradient.
  const Tensor h = engine::dropout(
      engine::bias_activation(engine::matmul(x, w1), b1, Activation::Tanh), 0.25f, true, stream);
  const Tensor logits =
      engine::bias_activation(engine::matmul(h, w2, false, true), b2, Activation::None);
  const Tensor loss = engine::mean(engine::sparse_softmax_cross_entropy(logits, labels));
  loss.backward();
  return {
      loss.item(),
      {w1.grad().to_vector(), b1.grad().to_vector(), w2.grad().to_vector(), b2.grad().to_vector()}};
}

// Dense(sigmoid) -> binary cross-entropy -> mean, plus 0.01 * sum(log_softmax(z) * w) on the
// same pre-activations z: the gradients of W and b meet from two branches.
ChainResult sigmoid_head(Device device, uint64_t data_seed) {
  const int64_t batch = 130, in = 7, out = 5;
  engine::Generator rng(data_seed);
  const Tensor x = Tensor::from_vector(uniform(rng, static_cast<size_t>(batch * in), -1.0f, 1.0f),
                                       {batch, in}, device);
  const Tensor t = Tensor::from_vector(uniform(rng, static_cast<size_t>(batch * out), 0.0f, 1.0f),
                                       {batch, out}, device);
  const Tensor w = Tensor::from_vector(uniform(rng, static_cast<size_t>(batch * out), -1.0f, 1.0f),
                                       {batch, out}, device);
  Tensor weights =
      parameter(uniform(rng, static_cast<size_t>(out * in), -0.5f, 0.5f), {out, in}, device);
  Tensor bias = parameter(uniform(rng, static_cast<size_t>(out), -0.1f, 0.1f), {out}, device);
  const Tensor z = engine::add_bias(engine::matmul(x, weights, false, true), bias);
  const Tensor bce = engine::mean(engine::binary_cross_entropy(engine::sigmoid(z), t));
  const Tensor loss =
      engine::add(bce, engine::scale(engine::sum(engine::mul(engine::log_softmax(z), w)), 0.01f));
  loss.backward();
  return {loss.item(), {weights.grad().to_vector(), bias.grad().to_vector()}};
}

void check_chain(const std::string& what, ChainResult (*chain)(Device, uint64_t)) {
  const ChainResult cpu = chain(Device::cpu(), 2024), gpu = chain(Device::cuda(), 2024);
  // A few float32 dot products of <= 130 terms chained, each within ~2 * 130 U ~ 1.5e-5 of
  // the magnitudes summed; the gradients' random signs cancel to results several times
  // smaller than those magnitudes: 1e-4 normwise. The loss, a mean of same-sign terms: 1e-5.
  check_normwise(what + " loss", {cpu.loss}, {gpu.loss}, 1e-5);
  REQUIRE(cpu.grads.size() == gpu.grads.size());
  for (size_t i = 0; i < cpu.grads.size(); ++i) {
    check_normwise(what + " gradient " + std::to_string(i), cpu.grads[i], gpu.grads[i], 1e-4);
  }
}

}  // namespace

TEST_CASE("parity through ops: Dense(tanh) -> dropout -> Dense -> softmax cross-entropy") {
  if (!gpu_or_skip()) return;
  check_chain("dense classifier", dense_classifier);
}

TEST_CASE("parity through ops: sigmoid + binary cross-entropy and log_softmax branches") {
  if (!gpu_or_skip()) return;
  check_chain("sigmoid head", sigmoid_head);
}
