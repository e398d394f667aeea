// CPU vs GPU parity of the ops' dispatch points (raw::X, core/ops/<family>.h), and of two
// chains of differentiable ops (core/ops.h) through backward. Each raw:: op runs on tensors on
// the CPU and on tensors on the GPU (so cpu::X, then cuda::X) with the same seeded random
// inputs; the GPU result is copied back and compared elementwise: |gpu - cpu| <= abs + rel *
// scale, scale = |cpu| unless the op passes the magnitude its rounding error is relative to
// (for a sum, the sum of |terms|).
//
// U = 2^-24 is float32's unit roundoff: a correctly rounded operation errs by at most U
// relative, a float sum of K terms in any order by at most ~K U of the sum of |terms|
// (Higham's gamma_K) on each device, so 2 K U between the two. An op that is one IEEE
// operation per element (add, mul, relu, copies) must match bitwise.
//
// Outputs an op overwrites are poisoned first (NaN, or -777 for int32) on both devices, so an
// element a kernel forgets to write fails. PARITY_VERBOSE=1 prints each check's worst
// |diff| / bound. Without a GPU, gpu_skip_main.cpp exits 77 before any test runs (ctest:
// "Skipped"); each test case also starts with gpu_or_skip(), so none passes silently.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/autograd.h"
#include "core/device_services.h"
#include "core/ops.h"
#include "core/rng.h"
#include "core/tensor.h"

using engine::Activation;
using engine::Device;
using engine::DType;
using engine::Shape;
using engine::Tensor;
namespace raw = engine::raw;

namespace {

constexpr double U = 1.0 / 16777216.0;  // float32 unit roundoff, 2^-24
const float NaN = std::numeric_limits<float>::quiet_NaN();
constexpr int32_t INT_POISON = -777;

// Elementwise ops: one element, odd sizes, sizes that are not multiples of 4 (vector loads).
const std::vector<Shape> ELEMENTWISE_SHAPES = {{1, 1}, {3, 7}, {33, 65}, {1000, 3}, {1031}, {4099}};
// Row-wise ops (N, C): single rows and columns, rows wider than a warp and than a block.
const std::vector<Shape> ROW_SHAPES = {{1, 1}, {3, 7}, {33, 65}, {1000, 3}, {3, 1031}, {1, 2049}};
// Column sums (bias gradients) also at convolution shapes, (batch * h * w, channels): tall
// inputs whose rows the GPU splits over blocks and adds chunk by chunk.
const std::vector<Shape> COLUMN_SUM_SHAPES = {{1, 1}, {3, 7}, {33, 65}, {1000, 3}, {3, 1031},
                                              {1, 2049}, {5000, 70}, {86528, 32}};
const Activation ELEMENTWISE_ACTS[] = {Activation::Relu, Activation::Tanh, Activation::Sigmoid};

// False, loudly, when no GPU can be used: every test case starts `if (!gpu_or_skip()) return;`.
bool gpu_or_skip() {
  std::string why;
  if (engine::device_available(Device::cuda(), &why)) return true;
  MESSAGE("SKIPPED: no GPU (", why, ") — GPU parity not tested");
  std::fprintf(stderr, "*** GPU TEST SKIPPED: no GPU: %s ***\n", why.c_str());
  return false;
}

template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

std::string name(const Shape& shape) { return engine::to_string(shape); }
const char* name(Activation act) { return engine::activation_name(act); }
size_t count(const Shape& shape) { return static_cast<size_t>(engine::numel(shape)); }
size_t dim(const Shape& shape, size_t i) { return static_cast<size_t>(shape[i]); }

// ---- the same tensors on both devices -----------------------------------------------------

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

// Runs op(side) on the CPU tensors, then on the GPU ones (each raw:: call picks its device's
// implementation from its output), and waits for the GPU.
template <typename Fn>
void run_both(Fn&& op) {
  op(Side::Cpu);
  op(Side::Gpu);
  engine::device_services(Device::cuda()).synchronize();
}

// ---- seeded random inputs (Philox: the same numbers on every platform) ----------------------

std::vector<float> uniform(engine::Generator& rng, size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (float& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

Pair random_pair(engine::Generator& rng, const Shape& shape, float lo, float hi) {
  return both(uniform(rng, count(shape), lo, hi), shape);
}

std::vector<int32_t> random_ints(engine::Generator& rng, size_t n, int32_t below) {
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = static_cast<int32_t>(rng.below(static_cast<uint64_t>(below)));
  return v;
}

// A valid forward output y of `act` (the input of the backwards); relu's has exact zeros.
std::vector<float> activation_output(engine::Generator& rng, Activation act, size_t n) {
  std::vector<float> y = uniform(rng, n, -3.0f, 3.0f);
  for (float& v : y) {
    if (act == Activation::Relu) v = std::max(v, 0.0f);
    if (act == Activation::Tanh) v = std::tanh(v);
    if (act == Activation::Sigmoid) v = 1.0f / (1.0f + std::exp(-v));
  }
  return y;
}

// Row-wise softmax (or log-softmax) in double, rounded to float: inputs for the backwards.
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

// sum_n |m[n, c]| for each column c of a row-major (., cols) matrix.
std::vector<double> column_abs_sums(const std::vector<float>& m, size_t cols) {
  std::vector<double> sums(cols, 0.0);
  for (size_t i = 0; i < m.size(); ++i) sums[i % cols] += std::fabs(m[i]);
  return sums;
}

// ---- comparison -----------------------------------------------------------------------------

struct Tol {
  double rel;
  double abs;
};
constexpr Tol EXACT{0.0, 0.0};
// tanhf/expf: glibc within 1-2 ulp, CUDA's tanhf/expf within 2, __expf within 2 + 1.2|x| ulp
// (1 ulp <= 2U relative), plus the roundings around the call: 16U relative; and 16U absolute,
// since a large __expf error only shows on outputs near 0, and a tanh written through e^2x is
// accurate in absolute, not relative, terms near 0.
constexpr Tol TRANSCENDENTAL{16 * U, 16 * U};
// act'(y) * dy from the same y: 1 - y*y or y (1 - y) and a product, up to 3 roundings a side
// (or an FMA); 1 - y*y cancels near |y| = 1, where its error is U absolute.
constexpr Tol ACT_BACKWARD{4 * U, 4 * U};

// Row-wise softmax of (., cols) inputs with |x| <= max_abs: the row sum of `cols` exp() terms
// errs by ~cols U relative, so log-sum-exp by ~cols U absolute; the roundings of lse and of
// x - lse add ~|lse| U each and expf 2 ulp. That absolute error of log p is the relative error
// of p. Doubled for two devices.
Tol softmax_tol(size_t cols, double max_abs) {
  const double c = static_cast<double>(cols);
  const double e = 2.0 * (c + 2.0 * (max_abs + std::log(c)) + 32.0) * U;
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
    const double ratio = ok ? err / std::max(bound, 1e-300) : INFINITY;
    bad += ok ? 0 : 1;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = i;
      worst_bound = bound;
    }
  }
  if (std::getenv("PARITY_VERBOSE") != nullptr) {
    std::printf("%-80s worst |diff| / bound %.3f\n", what.c_str(), worst_ratio);
  }
  CHECK_MESSAGE(bad == 0, bad, " of ", cpu.size(), " elements differ; worst [", worst, "]: cpu ",
                cpu.empty() ? 0.0f : cpu[worst], " gpu ", gpu.empty() ? 0.0f : gpu[worst],
                " bound ", worst_bound);
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

// Normwise, for the results of a chain of ops: max|gpu - cpu| / max|cpu| <= tol.
void check_normwise(const std::string& what, const std::vector<float>& cpu,
                    const std::vector<float>& gpu, double tol) {
  INFO(what);
  REQUIRE(cpu.size() == gpu.size());
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double d = std::fabs(static_cast<double>(gpu[i]) - cpu[i]);
    diff = std::isfinite(d) ? std::max(diff, d) : INFINITY;
    scale = std::max(scale, std::fabs(static_cast<double>(cpu[i])));
  }
  if (std::getenv("PARITY_VERBOSE") != nullptr) {
    std::printf("%-80s normwise %.2e (tol %.0e)\n", what.c_str(), diff / scale, tol);
  }
  CHECK(scale > 0.0);
  CHECK_MESSAGE(diff <= tol * scale, "max|diff| ", diff, " max|cpu| ", scale, " tol ", tol);
}

}  // namespace

// ---- fill -------------------------------------------------------------------------------------

TEST_CASE("parity: fill, float32 and int32, whole tensors and a slice") {
  if (!gpu_or_skip()) return;
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    for (const float value : {0.0f, -1.5f, 3.0e7f, 1.0e-3f}) {
      Pair y = poisoned(shape);
      run_both([&](Side s) { raw::fill(y.on(s), value); });
      check_close(str("fill f32 ", name(shape), " ", value), y, EXACT);  // a copy
    }
    for (const float value : {0.0f, 7.0f, -3.0f, 123456.0f}) {  // integral: converted exactly
      Pair y = poisoned(shape, DType::I32);
      run_both([&](Side s) { raw::fill(y.on(s), value); });
      check_ints(str("fill i32 ", name(shape), " ", value), y);
    }
  }
  // Elements [5, 5 + 1031) of a poisoned buffer: the others must stay NaN.
  Pair whole = poisoned({1100});
  Pair part{whole.cpu.slice(5, {1031}), whole.gpu.slice(5, {1031})};
  run_both([&](Side s) { raw::fill(part.on(s), 2.5f); });
  const std::vector<float> g = whole.gpu.to_vector();
  size_t wrong = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    wrong += (i >= 5 && i < 5 + 1031 ? g[i] != 2.5f : !std::isnan(g[i])) ? 1 : 0;
  }
  CHECK_MESSAGE(wrong == 0, "fill of a slice: ", wrong, " elements wrong or written outside it");
}

// ---- matmul -----------------------------------------------------------------------------------

TEST_CASE("parity: matmul, all transpose combinations, alpha/beta, odd and larger shapes") {
  if (!gpu_or_skip()) return;
  struct Dims {
    size_t m, n, k;
  };
  std::vector<Dims> dims;
  for (const size_t m : {1, 7, 33, 130})
    for (const size_t n : {1, 7, 33, 130})
      for (const size_t k : {1, 7, 33, 130}) dims.push_back({m, n, k});
  dims.push_back({257, 129, 300});
  // beta 0 must not read C (it is poisoned); beta 1 accumulates, as gradients do.
  const float scalings[][2] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {-0.75f, 1.0f}, {1.5f, 0.25f}};
  engine::Generator rng(11);
  for (const Dims& d : dims) {
    const auto m = static_cast<int64_t>(d.m), n = static_cast<int64_t>(d.n),
               k = static_cast<int64_t>(d.k);
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        const std::vector<float> a = uniform(rng, d.m * d.k, -1.0f, 1.0f);
        const std::vector<float> bv = uniform(rng, d.k * d.n, -1.0f, 1.0f);
        const std::vector<float> c0 = uniform(rng, d.m * d.n, -1.0f, 1.0f);
        // sum_p |op(a)[i, p]| |op(b)[p, j]|: what the dot products' rounding is relative to.
        std::vector<double> abs_ab(d.m * d.n, 0.0);
        for (size_t i = 0; i < d.m; ++i) {
          for (size_t p = 0; p < d.k; ++p) {
            const double av = std::fabs(ta ? a[p * d.m + i] : a[i * d.k + p]);
            for (size_t j = 0; j < d.n; ++j) {
              abs_ab[i * d.n + j] += av * std::fabs(tb ? bv[j * d.k + p] : bv[p * d.n + j]);
            }
          }
        }
        // b at an odd offset: a misaligned operand, as a parameter slice can be.
        Pair pa = both(a, ta ? Shape{k, m} : Shape{m, k});
        Pair pb = both_at_offset(bv, tb ? Shape{n, k} : Shape{k, n}, 1);
        for (const auto& scaling : scalings) {
          const float alpha = scaling[0], beta = scaling[1];
          Pair c = beta == 0.0f ? poisoned({m, n}) : both(c0, {m, n});
          run_both([&](Side s) {
            raw::matmul(pa.on(s), ta, pb.on(s), tb, c.on(s), alpha, beta);
          });
          std::vector<double> scale(d.m * d.n);
          for (size_t i = 0; i < scale.size(); ++i) {
            scale[i] = std::fabs(alpha) * abs_ab[i] + std::fabs(beta * c0[i]);
          }
          // A K-term float dot product, then alpha and beta C: (K + 2) U of the magnitudes
          // summed on each device, whatever the order (tiles, split-K): 2 (K + 2) U apart.
          check_close(str("matmul M=", m, " N=", n, " K=", k, ta ? " A^T" : "", tb ? " B^T" : "",
                          " alpha=", alpha, " beta=", beta),
                      c, {2.0 * static_cast<double>(d.k + 2) * U, 0.0}, scale);
        }
      }
    }
  }
}

// ---- Dense epilogue: bias + activation and its backward; sum_rows -------------------------------

TEST_CASE("parity: bias_activation_forward, None/Relu/Tanh/Sigmoid") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(21);
  // ROW_SHAPES, and two whose rows are whole groups of 4 (the GPU's 16-byte path): a
  // convolution's output and a Dense layer's.
  std::vector<Shape> shapes = ROW_SHAPES;
  shapes.insert(shapes.end(), {{5000, 32}, {7, 128}});
  for (const Shape& shape : shapes) {
    Pair x = random_pair(rng, shape, -4.0f, 4.0f);
    Pair bias = both_at_offset(uniform(rng, dim(shape, 1), -1.0f, 1.0f), {shape[1]}, 3);
    for (const Activation act :
         {Activation::None, Activation::Relu, Activation::Tanh, Activation::Sigmoid}) {
      Pair y = poisoned(shape);
      run_both([&](Side s) {
        raw::bias_activation_forward(act, x.on(s), bias.on(s), y.on(s));
      });
      // x + bias is one IEEE addition and relu a selection: exact. tanh/sigmoid: libm vs CUDA.
      const bool exact = act == Activation::None || act == Activation::Relu;
      check_close(str("bias_activation_forward ", name(act), " ", name(shape)), y,
                  exact ? EXACT : TRANSCENDENTAL);
    }
  }
}

TEST_CASE("parity: bias_activation_backward, Relu/Tanh/Sigmoid, with and without dbias") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(22);
  for (const Shape& shape : COLUMN_SUM_SHAPES) {
    const double rows = static_cast<double>(shape[0]);
    for (const Activation act : ELEMENTWISE_ACTS) {
      Pair y = both(activation_output(rng, act, count(shape)), shape);
      Pair dy = random_pair(rng, shape, -1.0f, 1.0f);
      const std::string what = str("bias_activation_backward ", name(act), " ", name(shape));
      for (const bool with_dbias : {true, false}) {
        Pair dx = poisoned(shape);
        Pair dbias = with_dbias ? poisoned({shape[1]}) : Pair{};  // Pair{}: undefined tensors
        run_both([&](Side s) {
          raw::bias_activation_backward(act, y.on(s), dy.on(s), dx.on(s), dbias.on(s));
        });
        check_close(what + (with_dbias ? " dx" : " dx, no dbias"), dx,
                    act == Activation::Relu ? EXACT : ACT_BACKWARD);  // relu': a selection
        if (!with_dbias) continue;
        // A column sum of N terms, 2 (N + 2) U of sum|dx|, over terms that themselves differ
        // by ACT_BACKWARD: N 4U absolute.
        check_close(what + " dbias", dbias, {2.0 * (rows + 2.0) * U, 4.0 * rows * U},
                    column_abs_sums(dx.cpu.to_vector(), dim(shape, 1)));
      }
    }
  }
}

TEST_CASE("parity: sum_rows") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(23);
  for (const Shape& shape : COLUMN_SUM_SHAPES) {
    const std::vector<float> dy = uniform(rng, count(shape), -1.0f, 1.0f);
    Pair pdy = both(dy, shape), db = poisoned({shape[1]});
    run_both([&](Side s) { raw::sum_rows(pdy.on(s), db.on(s)); });
    // A float sum of N terms in any order: 2 (N + 1) U of sum|dy| between the devices.
    check_close("sum_rows " + name(shape), db, {2.0 * static_cast<double>(shape[0] + 1) * U, 0.0},
                column_abs_sums(dy, dim(shape, 1)));
  }
}

// ---- elementwise: binary, axpby, activations ----------------------------------------------------

TEST_CASE("parity: binary Add/Sub/Mul, including a misaligned operand") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(31);
  const std::pair<engine::BinaryOp, const char*> ops[] = {{engine::BinaryOp::Add, "add"},
                                                          {engine::BinaryOp::Sub, "sub"},
                                                          {engine::BinaryOp::Mul, "mul"}};
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    for (const int64_t offset : {0, 1}) {
      Pair a = both_at_offset(uniform(rng, count(shape), -2.0f, 2.0f), shape, offset);
      Pair bv = random_pair(rng, shape, -2.0f, 2.0f);
      for (const auto& op : ops) {
        Pair y = poisoned(shape);
        run_both([&](Side s) { raw::binary(op.first, a.on(s), bv.on(s), y.on(s)); });
        // One correctly rounded IEEE operation per element: bitwise identical.
        check_close(str("binary ", op.second, " ", name(shape), " offset ", offset), y, EXACT);
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
        run_both([&](Side s) { raw::axpby(alpha, px.on(s), beta, y.on(s)); });
        std::vector<double> scale(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
          scale[i] = std::fabs(alpha * x[i]) + std::fabs(beta * y0[i]);
        }
        // beta 0: alpha x, one rounding: exact. Else two products and a sum, or FMAs: each
        // side within 2U of sum|terms|, so 4U apart (the terms may cancel).
        check_close(str("axpby ", name(shape), " alpha ", alpha, " beta ", beta), y,
                    beta == 0.0f ? EXACT : Tol{4 * U, 0.0}, scale);
      }
    }
  }
}

TEST_CASE("parity: activation_forward and activation_backward, Relu/Tanh/Sigmoid") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(33);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    std::vector<float> x = uniform(rng, count(shape), -5.0f, 5.0f);
    // Saturated inputs: e^x overflows beyond 88, which must still give 0, 1 or +-1, not NaN.
    for (size_t i = 0; i < x.size(); i += 97) x[i] = (i / 97) % 2 == 0 ? 100.0f : -30.0f;
    Pair px = both(x, shape);
    for (const Activation act : ELEMENTWISE_ACTS) {
      const Tol tol = act == Activation::Relu ? EXACT : TRANSCENDENTAL;
      Pair y = poisoned(shape);
      run_both([&](Side s) { raw::activation_forward(act, px.on(s), y.on(s)); });
      check_close(str("activation_forward ", name(act), " ", name(shape)), y, tol);

      Pair out = both(activation_output(rng, act, count(shape)), shape);
      Pair dy = random_pair(rng, shape, -1.0f, 1.0f), dx = poisoned(shape);
      run_both(
          [&](Side s) { raw::activation_backward(act, out.on(s), dy.on(s), dx.on(s)); });
      check_close(str("activation_backward ", name(act), " ", name(shape)), dx,
                  act == Activation::Relu ? EXACT : ACT_BACKWARD);
    }
  }
}

TEST_CASE("parity: gelu_forward and gelu_backward") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(34);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    std::vector<float> x = uniform(rng, count(shape), -5.0f, 5.0f);
    // Far tails: erff saturates to +-1 and exp(-x^2/2) underflows to 0, not NaN.
    for (size_t i = 0; i < x.size(); i += 97) x[i] = (i / 97) % 2 == 0 ? 100.0f : -30.0f;
    Pair px = both(x, shape);
    // erff and expf within 2 ulp on both devices (the CPU rounds from double), a few roundings
    // around them: TRANSCENDENTAL's 16U relative and absolute.
    Pair y = poisoned(shape);
    run_both([&](Side s) { raw::gelu_forward(px.on(s), y.on(s)); });
    check_close(str("gelu_forward ", name(shape)), y, TRANSCENDENTAL);
    Pair dy = random_pair(rng, shape, -1.0f, 1.0f), dx = poisoned(shape);
    run_both([&](Side s) { raw::gelu_backward(px.on(s), dy.on(s), dx.on(s)); });
    check_close(str("gelu_backward ", name(shape)), dx, TRANSCENDENTAL);
  }
}

// ---- softmax and the losses ---------------------------------------------------------------------

TEST_CASE("parity: softmax_forward and softmax_backward, log false and true") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(41);
  for (const Shape& shape : ROW_SHAPES) {
    const size_t cols = dim(shape, 1);
    std::vector<float> x = uniform(rng, count(shape), -4.0f, 4.0f);
    // Every third row shifted by 50: exp() would overflow without subtracting the row max.
    for (size_t i = 0; i < x.size(); ++i) x[i] += (i / cols) % 3 == 2 ? 50.0f : 0.0f;
    Pair px = both(x, shape);
    const std::vector<float> p = host_softmax(x, cols, false);
    for (const bool log : {false, true}) {
      const std::string what = str(log ? "log_softmax " : "softmax ", name(shape));
      Pair y = poisoned(shape);
      run_both([&](Side s) { raw::softmax_forward(px.on(s), y.on(s), log); });
      check_close(what + " forward", y, softmax_tol(cols, 54.0));

      // Backward from a valid y: log false dx = p (dy - sum(dy p)), log true dx = dy - p sum(dy).
      // The row sum of C terms errs by C U of its sum|terms|, which the subtraction may expose,
      // and expf adds 2 ulp: 2 (C + 24) U of the magnitudes below.
      const std::vector<float> dy = uniform(rng, count(shape), -1.0f, 1.0f);
      Pair py = both(log ? host_softmax(x, cols, true) : p, shape), pdy = both(dy, shape);
      Pair dx = poisoned(shape);
      run_both([&](Side s) { raw::softmax_backward(py.on(s), pdy.on(s), dx.on(s), log); });
      std::vector<double> scale(x.size());
      for (size_t r = 0; r < x.size() / cols; ++r) {
        double row = 0.0;  // sum |dy p| (log false) or sum |dy| (log true)
        for (size_t i = r * cols; i < (r + 1) * cols; ++i)
          row += std::fabs(dy[i]) * (log ? 1 : p[i]);
        for (size_t i = r * cols; i < (r + 1) * cols; ++i) {
          scale[i] = log ? std::fabs(dy[i]) + p[i] * row : p[i] * (std::fabs(dy[i]) + row);
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
    const size_t rows = dim(shape, 0), cols = dim(shape, 1);
    const std::vector<float> logits = uniform(rng, count(shape), -6.0f, 6.0f);
    Pair pl = both(logits, shape), probs = poisoned(shape), loss = poisoned({shape[0]});
    Pair labels = both_ints(random_ints(rng, rows, static_cast<int32_t>(cols)), {shape[0]});
    run_both([&](Side s) {
      raw::softmax_cross_entropy_forward(pl.on(s), labels.on(s), probs.on(s), loss.on(s));
    });
    // probs as softmax; loss = lse - logit[label] carries log-sum-exp's absolute error.
    const Tol tol = softmax_tol(cols, 6.0);
    check_close("softmax_cross_entropy_forward probs " + name(shape), probs, tol);
    check_close("softmax_cross_entropy_forward loss " + name(shape), loss, {0.0, tol.abs});

    Pair p = both(host_softmax(logits, cols, false), shape), dlogits = poisoned(shape);
    Pair dloss = random_pair(rng, {shape[0]}, -1.0f, 1.0f);
    run_both([&](Side s) {
      raw::softmax_cross_entropy_backward(p.on(s), labels.on(s), dloss.on(s), dlogits.on(s));
    });
    // dloss (p - [c == label]): a subtraction (exact near p = 1) and a product, or one FMA,
    // with |dloss| <= 1 and |p - 1| <= 1.
    check_close("softmax_cross_entropy_backward " + name(shape), dlogits, ACT_BACKWARD);
  }
}

TEST_CASE("parity: binary_cross_entropy_forward and _backward, including clipped p") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(43);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    std::vector<float> p = uniform(rng, count(shape), 0.0f, 1.0f);
    std::vector<float> t = uniform(rng, count(shape), 0.0f, 1.0f);
    for (size_t i = 0; i < p.size(); ++i) {  // the clip's edges, and hard 0/1 targets
      if (i % 17 == 3) p[i] = 0.0f;
      if (i % 19 == 4) p[i] = 1.0f;
      if (i % 23 == 5) p[i] = 1e-8f;
      if (i % 7 == 6) t[i] = static_cast<float>(i % 2);
    }
    Pair pp = both(p, shape), pt = both(t, shape), loss = poisoned(shape);
    run_both([&](Side s) {
      raw::binary_cross_entropy_forward(pp.on(s), pt.on(s), loss.on(s));
    });
    // Two logf (1-3 ulp; a fast __logf errs by 2^-21.4 absolute near 1) and four roundings of
    // same-sign terms: 16U relative, 2^-20 absolute.
    check_close("binary_cross_entropy_forward " + name(shape), loss, {16 * U, 1.0 / 1048576.0});

    const std::vector<float> g = uniform(rng, count(shape), -1.0f, 1.0f);
    Pair dloss = both(g, shape), dp = poisoned(shape);
    run_both([&](Side s) {
      raw::binary_cross_entropy_backward(pp.on(s), pt.on(s), dloss.on(s), dp.on(s));
    });
    // -g (t / (p + eps) - (1 - t) / (1 - p + eps)): two quotients whose difference may cancel,
    // ~6 roundings a side of |g| (t / (p + eps) + (1 - t) / (1 - p + eps)).
    std::vector<double> scale(p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      scale[i] = std::fabs(g[i]) * (t[i] / (p[i] + 1e-7) + (1.0 - t[i]) / (1.0 - p[i] + 1e-7));
    }
    check_close("binary_cross_entropy_backward " + name(shape), dp, {16 * U, 0.0}, scale);
  }
}

TEST_CASE("parity: mean_squared_error and mean_absolute_error, _forward and _backward") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(44);
  // (N, F) rows, and (N,): one output per sample, a warp per row with one busy lane.
  std::vector<Shape> shapes = ROW_SHAPES;
  shapes.push_back({1031});
  for (const Shape& shape : shapes) {
    const size_t rows = dim(shape, 0), cols = count(shape) / rows;
    std::vector<float> p = uniform(rng, count(shape), -3.0f, 3.0f);
    std::vector<float> t = uniform(rng, count(shape), -3.0f, 3.0f);
    // Large predictions; d = 0 (MAE's gradient is 0 there), a whole row of them where there is
    // more than one row (its loss is 0).
    for (size_t i = 0; i < p.size(); ++i) {
      if (i % 29 == 7) p[i] *= 1000.0f;
      if (i % 13 == 5 || (rows > 1 && i / cols == 1)) t[i] = p[i];
    }
    Pair pp = both(p, shape), pt = both(t, shape);
    Pair dloss = random_pair(rng, {shape[0]}, -1.0f, 1.0f);
    for (const bool squared : {true, false}) {
      const std::string what = str(squared ? "mean_squared_error" : "mean_absolute_error", "_");
      Pair loss = poisoned({shape[0]}), dp = poisoned(shape);
      run_both([&](Side s) {
        if (squared) {
          raw::mean_squared_error_forward(pp.on(s), pt.on(s), loss.on(s));
        } else {
          raw::mean_absolute_error_forward(pp.on(s), pt.on(s), loss.on(s));
        }
      });
      // A float sum of F non-negative terms (d^2 or |d|, each within 3U): at most (F + 3) U of
      // the sum itself on the GPU, in any order, and the division by F one more; the CPU's
      // double sum rounds once. Doubled: 2 (F + 4) U of the loss.
      const double sum_rel = 2.0 * static_cast<double>(cols + 4) * U;
      check_close(what + "forward " + name(shape), loss, {sum_rel, 0.0});
      run_both([&](Side s) {
        if (squared) {
          raw::mean_squared_error_backward(pp.on(s), pt.on(s), dloss.on(s), dp.on(s));
        } else {
          raw::mean_absolute_error_backward(pp.on(s), pt.on(s), dloss.on(s), dp.on(s));
        }
      });
      // MSE: dloss 2 d / F with d, the product and the quotient each rounded on the GPU (3U),
      // once on the CPU (U). MAE: dloss sign(d) / F is one correctly rounded division on each
      // side, the same bits; U leaves room for one rounding's difference.
      check_close(what + "backward " + name(shape), dp, squared ? Tol{6 * U, 0.0} : Tol{U, 0.0});
    }
  }
}

// ---- dropout ------------------------------------------------------------------------------------

TEST_CASE("parity: dropout_forward/backward drop the same elements on both devices") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(51);
  // {16, 260}: whole Philox blocks, the 16-byte path when first is 0 (step 0).
  for (const Shape& shape : {Shape{1}, {3}, {7}, {33, 65}, {16, 260}, {1031}, {4099}, {65539}}) {
    Pair x = random_pair(rng, shape, 0.1f, 2.0f);  // no zeros: an output 0 means dropped
    for (const float rate : {0.1f, 0.5f, 0.9f}) {
      for (const uint64_t seed : {uint64_t{0}, uint64_t{0x9E3779B97F4A7C15ull}}) {
        for (const int32_t step : {0, 41, 123457}) {
          Pair step_counter = both_ints({step}, {}), y = poisoned(shape), dx = poisoned(shape);
          // A first element off the Philox blocks' 4-alignment too (a data-parallel rank's).
          const uint64_t first = static_cast<uint64_t>(step) % 7;
          run_both([&](Side s) {
            raw::dropout_forward(x.on(s), y.on(s), rate, seed, step_counter.on(s), first);
            raw::dropout_backward(x.on(s), dx.on(s), rate, seed, step_counter.on(s), first);  // dy = x
          });
          const std::string what = str("dropout ", name(shape), " rate ", rate, " seed ", seed,
                                       " step ", step, " first ", first);
          const std::vector<float> yc = y.cpu.to_vector(), yg = y.gpu.to_vector();
          const std::vector<float> dxg = dx.gpu.to_vector();
          size_t mask_mismatch = 0;
          for (size_t i = 0; i < yc.size(); ++i) {
            mask_mismatch += (yc[i] == 0.0f) != (yg[i] == 0.0f) ? 1 : 0;
            mask_mismatch += (yg[i] == 0.0f) != (dxg[i] == 0.0f) ? 1 : 0;  // backward: same mask
          }
          INFO(what);
          CHECK_MESSAGE(mask_mismatch == 0, mask_mismatch, " mask elements differ");
          // Kept: x / (1 - rate) or x (1 / (1 - rate)), both valid, at most 3 roundings apart.
          check_close(what + " forward", yc, yg, {4 * U, 0.0});
          check_close(what + " backward", dx, {4 * U, 0.0});
        }
      }
    }
  }
}

TEST_CASE("dropout on the GPU: keep fraction, scaling, a fresh mask per step and per seed") {
  if (!gpu_or_skip()) return;
  const int64_t n = 1 << 20;
  const float rate = 0.3f;
  const double keep = 1.0 - static_cast<double>(rate), scale = 1.0 / keep;
  const Tensor ones = Tensor::full({n}, 1.0f, Device::cuda());
  auto mask = [&](uint64_t seed, int32_t step) {
    Tensor y = Tensor::full({n}, NaN, Device::cuda());
    raw::dropout_forward(ones, y, rate, seed, Tensor::from_ints({step}, {}, Device::cuda()), 0);
    return y.to_vector();
  };
  const std::vector<float> a = mask(7, 5), b = mask(7, 6), c = mask(8, 5);
  size_t kept = 0, bad_value = 0, differ_step = 0, differ_seed = 0;
  double total = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    kept += a[i] != 0.0f ? 1 : 0;
    total += a[i];
    bad_value += a[i] != 0.0f && !(std::fabs(a[i] - scale) <= 2 * U * scale) ? 1 : 0;  // NaN too
    differ_step += (a[i] == 0.0f) != (b[i] == 0.0f) ? 1 : 0;
    differ_seed += (a[i] == 0.0f) != (c[i] == 0.0f) ? 1 : 0;
  }
  // Binomial counts, 5 standard deviations: the kept fraction's sd is sqrt(keep rate / n)
  // ~ 4.5e-4; independent masks differ where exactly one keeps, fraction 2 keep rate.
  const double nd = static_cast<double>(n), sd_keep = std::sqrt(keep * (1.0 - keep) / nd);
  const double p_differ = 2.0 * keep * (1.0 - keep);
  const double sd_differ = std::sqrt(p_differ * (1.0 - p_differ) / nd);
  CHECK(std::fabs(static_cast<double>(kept) / nd - keep) < 5.0 * sd_keep);
  CHECK(bad_value == 0);
  CHECK(std::fabs(total / nd - 1.0) < 5.0 * sd_keep * scale);  // inverted dropout keeps the mean
  CHECK(std::fabs(static_cast<double>(differ_step) / nd - p_differ) < 5.0 * sd_differ);
  CHECK(std::fabs(static_cast<double>(differ_seed) / nd - p_differ) < 5.0 * sd_differ);
  CHECK(mask(7, 5) == a);  // the same seed and step give the same mask again
}

// ---- reductions, broadcast, gather, accuracy ----------------------------------------------------

TEST_CASE("parity: sum, exact on dyadic inputs and bounded on general ones") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(61);
  // Values k / q with |k| <= q: every partial sum of n <= 2^24 / q of them is a multiple of 1/q
  // below n in size, exact in float, so any summation order gives the exact sum and only the
  // final scale * sum is rounded, once on each device.
  for (const int64_t n : {1, 7, 1031, 65536, 1 << 20}) {
    const int32_t q = n <= 65536 ? 256 : 16;
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) {
      v = static_cast<float>(static_cast<int32_t>(rng.below(2 * q + 1)) - q) /
          static_cast<float>(q);
    }
    Pair px = both(x, {n});
    double exact_sum = 0.0;  // exact: every partial sum is a float
    for (const float v : x) exact_sum += v;
    for (const float scale : {1.0f, 1.0f / static_cast<float>(n), -3.0f}) {
      Pair y = poisoned({});
      run_both([&](Side s) { raw::sum(px.on(s), y.on(s), scale); });
      check_close(str("sum dyadic n=", n, " scale ", scale), y, {2 * U, 0.0});
      // Added to a running sum: scale * sum rounded on each device (U of it), then the add
      // (U of the result) on each device; the GPU may fuse both into one rounding.
      const double scaled = scale * exact_sum;
      Pair running = both({-5.25f}, {});
      run_both([&](Side s) { raw::sum(px.on(s), running.on(s), scale, /*add_to_y=*/true); });
      check_close(str("sum added to y, dyadic n=", n, " scale ", scale), running, {2 * U, 0.0},
                  {std::fabs(scaled) + std::fabs(scaled - 5.25)});
    }
  }
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    const std::vector<float> x = uniform(rng, count(shape), -1.0f, 1.0f);
    double abs_sum = 0.0;
    for (const float v : x) abs_sum += std::fabs(v);
    Pair px = both(x, shape), y = poisoned({});
    run_both([&](Side s) { raw::sum(px.on(s), y.on(s), 0.5f); });
    // An n-term float sum (the CPU's, in double, is closer): (n + 2) U of 0.5 sum|x|.
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
      run_both([&](Side side) { raw::broadcast_scalar(s.on(side), scale, y.on(side)); });
      check_close(str("broadcast_scalar ", name(shape), " scale ", scale), y, EXACT);  // 1 product
    }
  }
}

TEST_CASE("parity: gather_rows, float32 and int32") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(62);
  for (const Shape& shape : {Shape{1, 1}, {7, 3}, {33, 65}, {1000, 3}, {10, 3, 5}, {4099}}) {
    for (const int64_t batch : {1, 5, 64, 1031}) {  // indices repeat when batch > rows
      Shape out_shape = shape;
      out_shape[0] = batch;
      const std::string what = str(name(shape), " batch ", batch);
      Pair index = both_ints(
          random_ints(rng, static_cast<size_t>(batch), static_cast<int32_t>(shape[0])), {batch});
      Pair x = random_pair(rng, shape, -1.0f, 1.0f), y = poisoned(out_shape);
      run_both([&](Side s) { raw::gather_rows(x.on(s), index.on(s), y.on(s)); });
      check_close("gather_rows f32 " + what, y, EXACT);  // a copy
      std::vector<int32_t> xi = random_ints(rng, count(shape), 2000000);
      for (int32_t& v : xi) v -= 1000000;
      Pair pxi = both_ints(xi, shape), yi = poisoned(out_shape, DType::I32);
      run_both([&](Side s) { raw::gather_rows(pxi.on(s), index.on(s), yi.on(s)); });
      check_ints("gather_rows i32 " + what, yi);
    }
  }
}

TEST_CASE("parity: sigmoid_cross_entropy_forward and _backward, to logits of +-1000") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(44);
  for (const Shape& shape : ELEMENTWISE_SHAPES) {
    std::vector<float> z = uniform(rng, count(shape), -8.0f, 8.0f);
    std::vector<float> t = uniform(rng, count(shape), 0.0f, 1.0f);
    for (size_t i = 0; i < z.size(); ++i) {  // saturated logits, and hard 0/1 targets
      if (i % 17 == 3) z[i] = 1000.0f;
      if (i % 19 == 4) z[i] = -1000.0f;
      if (i % 7 == 6) t[i] = static_cast<float>(i % 2);
    }
    Pair pz = both(z, shape), pt = both(t, shape), loss = poisoned(shape);
    run_both([&](Side s) {
      raw::sigmoid_cross_entropy_forward(pz.on(s), pt.on(s), loss.on(s));
    });
    // max(z, 0) - z t + log1p(exp(-|z|)): expf and log1pf (a few ulp each) on a term <= log 2,
    // and two roundings of terms up to |z|: 16U of the terms' size.
    std::vector<double> terms(z.size());
    for (size_t i = 0; i < z.size(); ++i) terms[i] = 2.0 * std::fabs(z[i]) + 1.0;
    check_close("sigmoid_cross_entropy_forward " + name(shape), loss, {16 * U, 0.0}, terms);

    const std::vector<float> g = uniform(rng, count(shape), -1.0f, 1.0f);
    Pair dloss = both(g, shape), dz = poisoned(shape);
    run_both([&](Side s) {
      raw::sigmoid_cross_entropy_backward(pz.on(s), pt.on(s), dloss.on(s), dz.on(s));
    });
    // g (sigmoid(z) - t): expf, a quotient and a difference of numbers <= 1.
    check_close("sigmoid_cross_entropy_backward " + name(shape), dz, {16 * U, 16 * U});
  }
}

TEST_CASE("parity: count_correct with float targets (a sigmoid head)") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(64);
  for (const int64_t rows : {int64_t{1}, int64_t{33}, int64_t{1000}, int64_t{4099}}) {
    std::vector<float> logits = uniform(rng, static_cast<size_t>(rows), -3.0f, 3.0f);
    std::vector<float> targets(static_cast<size_t>(rows));
    for (size_t r = 0; r < targets.size(); ++r) {
      targets[r] = rng.uniform() < 0.5f ? 0.0f : 1.0f;
      if (r % 11 == 0) logits[r] = 0.0f;  // probability 0.5: predicts 0 on both
    }
    Pair pl = both(logits, {rows, 1}), pt = both(targets, {rows}), correct = both({5.0f}, {});
    run_both([&](Side s) { raw::count_correct(pl.on(s), pt.on(s), correct.on(s)); });
    check_close("count_correct binary " + std::to_string(rows), correct, EXACT);
  }
}

TEST_CASE("parity: count_correct accumulates the same count") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(63);
  for (const Shape& shape : {Shape{1, 1}, {3, 7}, {33, 65}, {1000, 3}, {4099, 10}}) {
    const size_t rows = dim(shape, 0), cols = dim(shape, 1);
    const std::vector<float> logits = uniform(rng, count(shape), -3.0f, 3.0f);
    std::vector<int32_t> labels = random_ints(rng, rows, static_cast<int32_t>(cols));
    for (size_t r = 0; r < rows; r += 2) {  // every other row right by construction
      const float* row = &logits[r * cols];
      labels[r] = static_cast<int32_t>(std::max_element(row, row + cols) - row);
    }
    Pair pl = both(logits, shape), plab = both_ints(labels, {shape[0]}), correct = both({5.0f}, {});
    run_both([&](Side s) {
      raw::count_correct(pl.on(s), plab.on(s), correct.on(s));
      raw::count_correct(pl.on(s), plab.on(s), correct.on(s));  // += twice
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
  for (const int64_t n : {1, 1031, 101770}) {
    const size_t un = static_cast<size_t>(n);
    const std::vector<float> p0 = uniform(rng, un, -1.0f, 1.0f), g = uniform(rng, un, -1.0f, 1.0f);
    const std::vector<float> v0 = uniform(rng, un, -0.1f, 0.1f);
    Pair grad = both(g, {n});
    for (const float momentum : {0.0f, 0.9f}) {
      // With momentum, the parameters at an odd offset: the one-parameter-a-thread form.
      Pair p = momentum != 0.0f ? both_at_offset(p0, {n}, 1) : both(p0, {n});
      Pair v = momentum == 0.0f ? Pair{} : both(v0, {n});  // undefined at momentum 0, as in nn/
      run_both(
          [&](Side s) { raw::sgd_update(p.on(s), grad.on(s), v.on(s), lr, momentum); });
      std::vector<double> v_scale(un), p_scale(un);
      for (size_t i = 0; i < un; ++i) {
        v_scale[i] = std::fabs(momentum * v0[i]) + std::fabs(lr * g[i]);
        p_scale[i] = std::fabs(p0[i]) + v_scale[i];
      }
      // v = m v - lr g, then p += v: two products and a sum, or FMAs, within 2U of the terms'
      // magnitudes a side; p inherits v's error: 4U and 8U apart.
      const std::string what = str("sgd_update n=", n, " momentum ", momentum);
      check_close(what + " param", p, {8 * U, 0.0}, p_scale);
      if (momentum != 0.0f) check_close(what + " velocity", v, {4 * U, 0.0}, v_scale);
    }
  }
}

TEST_CASE("parity: adam_update at steps 0 and 41, and five steps with increment") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(72);
  const engine::AdamConfig config{1e-3f, 0.9f, 0.999f, 1e-7f};
  const double b1 = static_cast<double>(config.beta1), b2 = static_cast<double>(config.beta2);
  for (const int64_t n : {1, 1031, 101770}) {
    const size_t un = static_cast<size_t>(n);
    const std::vector<float> p0 = uniform(rng, un, -1.0f, 1.0f), g = uniform(rng, un, -1.0f, 1.0f);
    const std::vector<float> m0 = uniform(rng, un, -0.1f, 0.1f), v0 = uniform(rng, un, 0.0f, 0.01f);
    Pair grad = both(g, {n});
    // Step 41 with the parameters at an odd offset, as a slice of a buffer can be: the kernel's
    // one-parameter-a-thread form (16-byte groups need every buffer aligned).
    for (const int32_t step : {0, 41}) {
      Pair p = step == 41 ? both_at_offset(p0, {n}, 1) : both(p0, {n});
      Pair m = both(m0, {n}), v = both(v0, {n}), counter = both_ints({step}, {});
      run_both([&](Side s) {
        raw::adam_update(p.on(s), grad.on(s), m.on(s), v.on(s), config, counter.on(s));
      });
      const double lr_t = engine::adam_step_size(config, step + 1);
      std::vector<double> m_scale(un), p_scale(un);
      for (size_t i = 0; i < un; ++i) {
        m_scale[i] = b1 * std::fabs(m0[i]) + (1.0 - b1) * std::fabs(g[i]);
        const double v_new = b2 * v0[i] + (1.0 - b2) * g[i] * g[i];
        // p -= lr_t m / (sqrt(v) + eps): m's error (4U of m_scale), the sqrt, + eps, the
        // quotient, the product and lr_t's own rounding stay under 24U of the update's
        // magnitude a side; the subtraction adds 2U of |p|.
        p_scale[i] = std::fabs(p0[i]) + 24.0 * lr_t * m_scale[i] / (std::sqrt(v_new) + 1e-7);
      }
      const std::string what = str("adam_update n=", n, " step ", step);
      check_close(what + " m", m, {4 * U, 0.0}, m_scale);  // b1 m + (1 - b1) g: 2U a side
      check_close(what + " v", v, {4 * U, 0.0});           // terms >= 0: relative to v itself
      check_close(what + " param", p, {2 * U, 0.0}, p_scale);
    }
  }
  // Five training steps from zero state, the step counter advanced on the device in between.
  const int64_t n = 4099;
  Pair p = random_pair(rng, {n}, -1.0f, 1.0f), m = both(std::vector<float>(4099, 0.0f), {n});
  Pair v = both(std::vector<float>(4099, 0.0f), {n}), counter = both_ints({0}, {});
  for (int k = 0; k < 5; ++k) {
    Pair grad = random_pair(rng, {n}, -1.0f, 1.0f);
    run_both([&](Side s) {
      raw::adam_update(p.on(s), grad.on(s), m.on(s), v.on(s), config, counter.on(s));
      raw::increment(counter.on(s));
    });
  }
  CHECK(counter.gpu.to_int_vector() == std::vector<int32_t>{5});
  CHECK(counter.cpu.to_int_vector() == std::vector<int32_t>{5});
  // From zero state an update stays below lr (1 - b1) / sqrt(1 - b2) ~ 3.2 lr < 0.01: five
  // steps of 24U of that, plus 2U of |p| <= 1 each.
  check_close("adam five steps: param", p, {10 * U, 5 * 24 * U * 0.01});
}

TEST_CASE("parity: increment is exact int32 arithmetic") {
  if (!gpu_or_skip()) return;
  // 2^24 + 1 is not a float: a counter that went through float would come out wrong.
  for (const int32_t start : {0, 41, (1 << 24) + 1, 2147483600}) {
    Pair counter = both_ints({start}, {});
    run_both([&](Side s) {
      for (int k = 0; k < 3; ++k) raw::increment(counter.on(s));
    });
    check_ints(str("increment from ", start), counter);
    CHECK(counter.gpu.to_int_vector() == std::vector<int32_t>{start + 3});
  }
}

// ---- chains of differentiable ops through backward ----------------------------------------------

namespace {

struct ChainResult {
  float loss;
  std::vector<std::vector<float>> grads;
};

Tensor random_tensor(engine::Generator& rng, const Shape& shape, float lo, float hi, Device device,
                     bool requires_grad = false) {
  Tensor t = Tensor::from_vector(uniform(rng, count(shape), lo, hi), shape, device);
  t.set_requires_grad(requires_grad);
  return t;
}

// Dense(tanh) -> dropout -> Dense (weights stored (C, H), used transposed) -> softmax
// cross-entropy -> mean -> backward: the loss and the four parameter gradients.
ChainResult dense_classifier(Device device) {
  const int64_t batch = 64, in = 33, hidden = 20, classes = 10;
  engine::Generator rng(2024);
  const Tensor x = random_tensor(rng, {batch, in}, -1.0f, 1.0f, device);
  Tensor w1 = random_tensor(rng, {in, hidden}, -0.3f, 0.3f, device, true);
  Tensor b1 = random_tensor(rng, {hidden}, -0.1f, 0.1f, device, true);
  Tensor w2 = random_tensor(rng, {classes, hidden}, -0.5f, 0.5f, device, true);
  Tensor b2 = random_tensor(rng, {classes}, -0.1f, 0.1f, device, true);
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

// mean(binary_cross_entropy(sigmoid(z), t)) + 0.01 sum(log_softmax(z) * w) for z = x W^T + b:
// the gradients of W and b meet from two branches.
ChainResult sigmoid_head(Device device) {
  const int64_t batch = 130, in = 7, out = 5;
  engine::Generator rng(2025);
  const Tensor x = random_tensor(rng, {batch, in}, -1.0f, 1.0f, device);
  const Tensor t = random_tensor(rng, {batch, out}, 0.0f, 1.0f, device);
  const Tensor w = random_tensor(rng, {batch, out}, -1.0f, 1.0f, device);
  Tensor weights = random_tensor(rng, {out, in}, -0.5f, 0.5f, device, true);
  Tensor bias = random_tensor(rng, {out}, -0.1f, 0.1f, device, true);
  const Tensor z = engine::add_bias(engine::matmul(x, weights, false, true), bias);
  const Tensor bce = engine::mean(engine::binary_cross_entropy(engine::sigmoid(z), t));
  const Tensor rest = engine::scale(engine::sum(engine::mul(engine::log_softmax(z), w)), 0.01f);
  const Tensor loss = engine::add(bce, rest);
  loss.backward();
  return {loss.item(), {weights.grad().to_vector(), bias.grad().to_vector()}};
}

void check_chain(const std::string& what, ChainResult (*chain)(Device)) {
  const ChainResult cpu = chain(Device::cpu()), gpu = chain(Device::cuda());
  // A few float32 dot products of <= 130 terms chained, each within ~2 130 U ~ 1.5e-5 of the
  // magnitudes summed; random signs cancel the gradients to results several times smaller
  // than those magnitudes: 1e-4 normwise. The loss, a mean of same-sign terms: 1e-5.
  check_normwise(what + " loss", {cpu.loss}, {gpu.loss}, 1e-5);
  REQUIRE(cpu.grads.size() == gpu.grads.size());
  for (size_t i = 0; i < cpu.grads.size(); ++i) {
    check_normwise(str(what, " gradient ", i), cpu.grads[i], gpu.grads[i], 1e-4);
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
