// Test functions for jacobian(), each written twice: with engine ops (float32, recorded, what
// jacobian() differentiates) and on the host in double (the reference), with the same float
// weights. The reference Jacobian comes from central differences of the double function:
//   J_ref[:, d] = (f(x + h e_d) - f(x - h e_d)) / 2h,  h = 1e-4 * max(1, |x_d|),
// whose truncation error (h^2 |f'''| / 6, ~1e-9 here) and rounding error (~1e-16 / h) are
// both far below float32's, so every difference measured is the engine's float32 arithmetic.
// Shared by tests/test_jacobian.cpp (CPU) and tests/test_gpu_jacobian.cpp.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/ops.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "nn/jacobian.h"

namespace jacobian_test {

using engine::Activation;
using engine::Device;
using engine::Shape;
using engine::Tensor;

// ---- host matrices in double --------------------------------------------------------------

struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;  // row-major
  double at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
};

inline Mat transposed(const Mat& a) {
  Mat t{a.cols, a.rows, std::vector<double>(a.v.size())};
  for (int64_t r = 0; r < a.rows; ++r) {
    for (int64_t c = 0; c < a.cols; ++c) t.v[static_cast<size_t>(c * a.rows + r)] = a.at(r, c);
  }
  return t;
}

// op(a) @ op(b), op = transpose when the flag is set: engine::matmul's semantics.
inline Mat mm(const Mat& a0, const Mat& b0, bool ta = false, bool tb = false) {
  const Mat a = ta ? transposed(a0) : a0;
  const Mat b = tb ? transposed(b0) : b0;
  Mat c{a.rows, b.cols, std::vector<double>(static_cast<size_t>(a.rows * b.cols), 0.0)};
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t k = 0; k < a.cols; ++k) {
      for (int64_t j = 0; j < b.cols; ++j) c.v[static_cast<size_t>(i * c.cols + j)] += a.at(i, k) * b.at(k, j);
    }
  }
  return c;
}

inline double act(Activation a, double z) {
  switch (a) {
    case Activation::Relu: return z > 0.0 ? z : 0.0;
    case Activation::Tanh: return std::tanh(z);
    case Activation::Sigmoid: return 1.0 / (1.0 + std::exp(-z));
    default: return z;
  }
}

// act(x + bias) with bias (cols,) broadcast over the rows.
inline Mat bias_act(const Mat& x, const std::vector<double>& bias, Activation a) {
  Mat y = x;
  for (int64_t r = 0; r < x.rows; ++r) {
    for (int64_t c = 0; c < x.cols; ++c) {
      y.v[static_cast<size_t>(r * x.cols + c)] = act(a, x.at(r, c) + bias[static_cast<size_t>(c)]);
    }
  }
  return y;
}

// ---- seeded data ---------------------------------------------------------------------------

// Uniform in [lo, hi), rounded to float: the engine and the reference see the same numbers.
inline std::vector<double> uniform(engine::Generator& rng, int64_t n, double lo, double hi) {
  std::vector<double> out(static_cast<size_t>(n));
  for (double& v : out) v = static_cast<float>(lo + (hi - lo) * static_cast<double>(rng.uniform()));
  return out;
}

inline std::vector<float> to_floats(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}

// A constant of the function (a weight): it requires grad, as a model's weights do, so the
// tests also see that jacobian() computes no weight gradient.
inline Tensor weight(const std::vector<double>& v, const Shape& shape, Device device) {
  Tensor t = Tensor::from_vector(to_floats(v), shape, device);
  t.set_requires_grad(true);
  return t;
}

// ---- the test functions ----------------------------------------------------------------------

struct Case {
  std::string name;
  Shape x_shape;
  std::vector<double> x;
  bool rowwise = false;       // row n of f(x) depends on row n of x only
  bool has_forward = true;    // every op has a forward-mode rule
  std::function<Tensor(const Tensor&)> f;  // engine ops, on the device of the weights
  std::function<std::vector<double>(const std::vector<double>&)> f_ref;  // host, double
  std::vector<Tensor> weights;  // to check that their .grad stays untouched
};

// x (N, I) -> Dense(H1, a1) -> Dense(H2, a2) -> Dense(O): an MLP, row-wise. With relu, the
// seed must put no pre-activation within h of the kink, or the finite differences straddle
// it: the seeds used pass, and a seed that did not would fail, not pass, the check.
inline Case mlp_case(const std::string& name, int64_t N, int64_t I, int64_t H1, Activation a1,
                     int64_t H2, Activation a2, int64_t O, uint64_t seed, Device device) {
  engine::Generator rng(seed);
  Case c;
  c.name = name;
  c.x_shape = {N, I};
  c.x = uniform(rng, N * I, -1.0, 1.0);
  c.rowwise = true;
  const auto w1 = uniform(rng, I * H1, -1.0, 1.0), b1 = uniform(rng, H1, -0.5, 0.5);
  const auto w2 = uniform(rng, H1 * H2, -0.8, 0.8), b2 = uniform(rng, H2, -0.5, 0.5);
  const auto w3 = uniform(rng, H2 * O, -0.8, 0.8), b3 = uniform(rng, O, -0.5, 0.5);
  Tensor W1 = weight(w1, {I, H1}, device), B1 = weight(b1, {H1}, device);
  Tensor W2 = weight(w2, {H1, H2}, device), B2 = weight(b2, {H2}, device);
  Tensor W3 = weight(w3, {H2, O}, device), B3 = weight(b3, {O}, device);
  c.weights = {W1, B1, W2, B2, W3, B3};
  c.f = [=](const Tensor& x) {
    const Tensor h1 = engine::bias_activation(engine::matmul(x, W1), B1, a1);
    const Tensor h2 = engine::bias_activation(engine::matmul(h1, W2), B2, a2);
    return engine::add_bias(engine::matmul(h2, W3), B3);
  };
  c.f_ref = [=](const std::vector<double>& x) {
    const Mat h1 = bias_act(mm(Mat{N, I, x}, Mat{I, H1, w1}), b1, a1);
    const Mat h2 = bias_act(mm(h1, Mat{H1, H2, w2}), b2, a2);
    return bias_act(mm(h2, Mat{H2, O, w3}), b3, Activation::None).v;
  };
  return c;
}

// y = tanh(P @ x @ W + b) @ V with a constant P (N, N): every output row depends on every
// input row. The matmul P @ x moves x as its *right* operand (the per-direction rules).
inline Case mixing_case(Device device) {
  engine::Generator rng(7);
  const int64_t N = 4, I = 3, H = 5, O = 2;
  Case c;
  c.name = "mixes rows: tanh(P x W + b) V";
  c.x_shape = {N, I};
  c.x = uniform(rng, N * I, -1.0, 1.0);
  const auto p = uniform(rng, N * N, -0.7, 0.7), w = uniform(rng, I * H, -0.7, 0.7);
  const auto b = uniform(rng, H, -0.3, 0.3), v = uniform(rng, H * O, -1.0, 1.0);
  Tensor P = weight(p, {N, N}, device), W = weight(w, {I, H}, device);
  Tensor B = weight(b, {H}, device), V = weight(v, {H, O}, device);
  c.weights = {P, W, B, V};
  c.f = [=](const Tensor& x) {
    return engine::matmul(engine::bias_activation(engine::matmul(engine::matmul(P, x), W), B,
                                                  Activation::Tanh), V);
  };
  c.f_ref = [=](const std::vector<double>& x) {
    return mm(bias_act(mm(mm(Mat{N, N, p}, Mat{N, I, x}), Mat{I, H, w}), b, Activation::Tanh),
              Mat{H, O, v}).v;
  };
  return c;
}

// Transposed operands on both sides: y = C @ sigmoid(x^T W)^T, x (3, 4): x is a transposed
// left operand, and the activation a transposed right one.
inline Case transpose_case(Device device) {
  engine::Generator rng(11);
  Case c;
  c.name = "transposes: C sigmoid(x^T W)^T";
  c.x_shape = {3, 4};
  c.x = uniform(rng, 12, -1.0, 1.0);
  const auto w = uniform(rng, 3 * 5, -1.0, 1.0), cm = uniform(rng, 2 * 5, -1.0, 1.0);
  Tensor W = weight(w, {3, 5}, device), C = weight(cm, {2, 5}, device);
  c.weights = {W, C};
  c.f = [=](const Tensor& x) {
    return engine::matmul(C, engine::sigmoid(engine::matmul(x, W, true, false)), false, true);
  };
  c.f_ref = [=](const std::vector<double>& x) {
    Mat s = mm(Mat{3, 4, x}, Mat{3, 5, w}, true, false);
    for (double& e : s.v) e = act(Activation::Sigmoid, e);
    return mm(Mat{2, 5, cm}, s, false, true).v;
  };
  return c;
}

// Elementwise ops with x on both sides of a product: y = x * x + 3 sigmoid(x) - tanh(x) * x.
inline Case elementwise_case() {
  engine::Generator rng(13);
  Case c;
  c.name = "elementwise: x*x + 3 sigmoid(x) - tanh(x)*x";
  c.x_shape = {3, 4};
  c.x = uniform(rng, 12, -2.0, 2.0);
  c.rowwise = true;
  c.f = [](const Tensor& x) {
    return engine::sub(engine::add(engine::mul(x, x), engine::scale(engine::sigmoid(x), 3.0f)),
                       engine::mul(engine::tanh(x), x));
  };
  c.f_ref = [](const std::vector<double>& x) {
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      y[i] = x[i] * x[i] + 3.0 * act(Activation::Sigmoid, x[i]) - std::tanh(x[i]) * x[i];
    }
    return y;
  };
  return c;
}

// A bias that depends on x: tanh(x + colsum(x)), colsum(x) = reshape(ones(1, N) @ x, (F,)).
inline Case bias_from_x_case(Device device) {
  engine::Generator rng(17);
  const int64_t N = 3, F = 4;
  Case c;
  c.name = "bias from x: tanh(x + colsum(x))";
  c.x_shape = {N, F};
  c.x = uniform(rng, N * F, -0.6, 0.6);
  Tensor ones = Tensor::full({1, N}, 1.0f, device);
  c.f = [=](const Tensor& x) {
    return engine::bias_activation(x, engine::reshape(engine::matmul(ones, x), {F}), Activation::Tanh);
  };
  c.f_ref = [=](const std::vector<double>& x) {
    std::vector<double> colsum(static_cast<size_t>(F), 0.0);
    for (int64_t r = 0; r < N; ++r) {
      for (int64_t f = 0; f < F; ++f) colsum[static_cast<size_t>(f)] += x[static_cast<size_t>(r * F + f)];
    }
    return bias_act(Mat{N, F, x}, colsum, Activation::Tanh).v;
  };
  return c;
}

// A scalar output: mean(tanh(x @ W)) * 4 (J has x's shape), through sum, mean and scale.
inline Case scalar_case(Device device) {
  engine::Generator rng(19);
  Case c;
  c.name = "scalar: 4 mean(tanh(x W)) + sum(x)";
  c.x_shape = {2, 3};
  c.x = uniform(rng, 6, -1.0, 1.0);
  const auto w = uniform(rng, 3 * 4, -1.0, 1.0);
  Tensor W = weight(w, {3, 4}, device);
  c.weights = {W};
  c.f = [=](const Tensor& x) {
    return engine::add(engine::scale(engine::mean(engine::tanh(engine::matmul(x, W))), 4.0f),
                       engine::sum(x));
  };
  c.f_ref = [=](const std::vector<double>& x) {
    const Mat h = mm(Mat{2, 3, x}, Mat{3, 4, w});
    double mean = 0.0, sum = 0.0;
    for (double e : h.v) mean += std::tanh(e) / static_cast<double>(h.v.size());
    for (double e : x) sum += e;
    return std::vector<double>{4.0 * mean + sum};
  };
  return c;
}

// Row-wise softmax (forward rule) or log-softmax (no forward rule: reverse only) of x @ W,
// flattened by a reshape.
inline Case softmax_case(bool log, Device device) {
  engine::Generator rng(log ? 23 : 29);
  const int64_t N = 3, I = 2, C = 5;
  Case c;
  c.name = log ? "log_softmax(x W), flattened" : "softmax(x W), flattened";
  c.x_shape = {N, I};
  c.x = uniform(rng, N * I, -1.0, 1.0);
  c.rowwise = false;  // the reshape to (N * C,) loses the rows
  c.has_forward = !log;
  const auto w = uniform(rng, I * C, -2.0, 2.0);
  Tensor W = weight(w, {I, C}, device);
  c.weights = {W};
  c.f = [=](const Tensor& x) {
    const Tensor z = engine::matmul(x, W);
    return engine::reshape(log ? engine::log_softmax(z) : engine::softmax(z), {N * C});
  };
  c.f_ref = [=](const std::vector<double>& x) {
    const Mat z = mm(Mat{N, I, x}, Mat{I, C, w});
    std::vector<double> y(z.v.size());
    for (int64_t r = 0; r < N; ++r) {
      double max = z.at(r, 0), total = 0.0;
      for (int64_t k = 0; k < C; ++k) max = std::max(max, z.at(r, k));
      for (int64_t k = 0; k < C; ++k) total += std::exp(z.at(r, k) - max);
      for (int64_t k = 0; k < C; ++k) {
        const double log_p = z.at(r, k) - max - std::log(total);
        y[static_cast<size_t>(r * C + k)] = log ? log_p : std::exp(log_p);
      }
    }
    return y;
  };
  return c;
}

// ---- the reference Jacobian and the comparison -----------------------------------------------

// (M, D) row-major, by central differences of the double function.
inline std::vector<double> finite_difference_jacobian(const Case& c) {
  std::vector<double> x = c.x;
  const size_t D = x.size();
  const size_t M = c.f_ref(x).size();
  std::vector<double> J(M * D);
  for (size_t d = 0; d < D; ++d) {
    const double saved = x[d];
    const double h = 1e-4 * std::max(1.0, std::fabs(saved));
    x[d] = saved + h;
    const std::vector<double> plus = c.f_ref(x);
    x[d] = saved - h;
    const std::vector<double> minus = c.f_ref(x);
    x[d] = saved;
    for (size_t m = 0; m < M; ++m) J[m * D + d] = (plus[m] - minus[m]) / (2.0 * h);
  }
  return J;
}

// The diagonal blocks (N, O, I) of a dense row-wise (N*O, N*I) Jacobian.
inline std::vector<double> diagonal_blocks(const std::vector<double>& dense, int64_t N, int64_t O,
                                           int64_t I) {
  std::vector<double> blocks(static_cast<size_t>(N * O * I));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t o = 0; o < O; ++o) {
      for (int64_t i = 0; i < I; ++i) {
        blocks[static_cast<size_t>((n * O + o) * I + i)] =
            dense[static_cast<size_t>(((n * O + o) * N + n) * I + i)];
      }
    }
  }
  return blocks;
}

// max|a - b| / max|b| (normwise); a non-finite difference is infinite.
inline double normwise_error(const std::vector<float>& a, const std::vector<double>& b) {
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    diff = std::isfinite(d) ? std::max(diff, d) : INFINITY;
    scale = std::max(scale, std::fabs(b[i]));
  }
  return scale > 0.0 ? diff / scale : diff;
}

// ---- every strategy of a case against the reference -------------------------------------------

// Normwise error bound against the double reference. The engine computes the forward values
// (tanh, exp; the GPU's __expf errs by up to 2 + 1.2|x| ulp) and then the tangents in float32:
// each op adds a few U = 2^-24 relative, the sums inside matmuls (<= 20 terms here) up to
// ~20 U, and the chains are <= 6 ops deep. Measured on the CPU: at most 1.9e-7. A wrong rule
// or a misplaced chunk errs by O(1); 1e-5 (~170 U) leaves the GPU's roundings room.
constexpr double TOLERANCE = 1e-5;

struct ModeCase {
  engine::nn::JacobianMode mode;
  bool rowwise;
  bool blocks;
};

inline std::string label(const ModeCase& m) {
  return std::string(engine::nn::to_string(m.mode)) + (m.rowwise ? ", rowwise" : "") +
         (m.blocks ? ", blocks" : "");
}

// Every strategy a case supports: dense loop / reverse / forward / auto, and for row-wise
// functions the per-sample ones, dense and as blocks.
inline std::vector<ModeCase> modes_for(const Case& c) {
  using engine::nn::JacobianMode;
  std::vector<ModeCase> modes = {{JacobianMode::Loop, false, false},
                                 {JacobianMode::Reverse, false, false},
                                 {JacobianMode::Auto, false, false}};
  if (c.has_forward) modes.push_back({JacobianMode::Forward, false, false});
  if (c.rowwise) {
    for (JacobianMode m : {JacobianMode::Reverse, JacobianMode::Forward, JacobianMode::Auto,
                           JacobianMode::Loop}) {
      if (m == JacobianMode::Forward && !c.has_forward) continue;
      modes.push_back({m, true, false});
      modes.push_back({m, true, true});
    }
  }
  return modes;
}

inline Shape joined(const Shape& a, const Shape& b) {
  Shape out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// Every strategy of `c`, run on `device`, against the finite-difference Jacobian; and no
// weight of c gets a gradient. JACOBIAN_VERBOSE=1 prints each error.
inline void check_case_against_reference(const Case& c, Device device) {
  INFO("case: ", c.name);
  const std::vector<double> reference = finite_difference_jacobian(c);
  const Tensor x = Tensor::from_vector(to_floats(c.x), c.x_shape, device);
  Shape y_shape;
  {
    engine::NoGradGuard no_grad;
    y_shape = c.f(x).shape();
  }
  for (const ModeCase& m : modes_for(c)) {
    INFO("mode: ", label(m));
    engine::nn::JacobianOptions options;
    options.mode = m.mode;
    options.rowwise = m.rowwise;
    options.blocks = m.blocks;
    engine::nn::JacobianStats stats;
    const Tensor J = engine::nn::jacobian(c.f, x, options, &stats);
    REQUIRE(J.defined());
    INFO("strategy: ", stats.strategy);
    std::vector<double> expected = reference;
    Shape expected_shape = joined(y_shape, c.x_shape);
    if (m.blocks) {
      const int64_t N = c.x_shape[0];
      const int64_t I = engine::numel(c.x_shape) / N, O = engine::numel(y_shape) / N;
      expected = diagonal_blocks(reference, N, O, I);
      expected_shape = joined(y_shape, Shape(c.x_shape.begin() + 1, c.x_shape.end()));
    }
    CHECK(J.shape() == expected_shape);
    const double error = normwise_error(J.to_vector(), expected);
    if (std::getenv("JACOBIAN_VERBOSE")) {
      std::printf("%-46s %-20s %-20s %s %.2e\n", c.name.c_str(), label(m).c_str(),
                  stats.strategy.c_str(), engine::to_string(device).c_str(), error);
    }
    CHECK(error <= TOLERANCE);
  }
  for (const Tensor& w : c.weights) CHECK_FALSE(w.grad().defined());
}

// The loop on f at x, refused when it offers its estimate: nothing is computed past that, and
// the estimate covers one pass per output element, `passes` of them, from at least 3 timed.
// Returns the estimate for the caller's own checks.
inline engine::nn::LoopEstimate check_loop_refused(const std::function<Tensor(const Tensor&)>& f,
                                                   const Tensor& x, int64_t passes) {
  engine::nn::JacobianOptions options;
  options.mode = engine::nn::JacobianMode::Loop;
  engine::nn::LoopEstimate seen;
  options.confirm_loop = [&](const engine::nn::LoopEstimate& e) {
    seen = e;
    return false;
  };
  engine::nn::JacobianStats stats;
  CHECK_FALSE(engine::nn::jacobian(f, x, options, &stats).defined());
  CHECK_FALSE(stats.completed);
  CHECK(seen.passes == passes);
  CHECK(seen.timed_passes >= 3);
  CHECK(seen.seconds_per_pass > 0.0);
  CHECK(seen.total_seconds == doctest::Approx(seen.seconds_per_pass * static_cast<double>(passes)));
  return seen;
}

}  // namespace jacobian_test
