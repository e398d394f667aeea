// Finite-difference gradient checks of engine ops against a double-precision reference.
//
// For an op under test `f` (float32, run by the engine) and a plain C++ reference `f_ref`
// of the same math in double, written in the test:
//  1. forward parity: f(x) against f_ref(x), normwise: max|ours - ref| / max|ref|;
//  2. analytic gradient: L = sum(w * f(x)) in the engine with a random weighting w, then
//     L.backward() and x.grad() for every differentiable float input x;
//  3. numerical gradient: central differences of L_ref(x) = sum(w * f_ref(x)) in double,
//     compared with (2) normwise: max|analytic - numeric| / max|numeric|.
// The inputs are float values (the engine's and the reference's inputs are identical
// numbers), so every difference comes from the engine's float32 arithmetic, which the
// tolerances at each call site account for. Int inputs (labels) are passed to both sides
// and never differentiated; float inputs can be marked non-differentiable (targets).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/autograd.h"
#include "core/ops.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace gradcheck {

// float32 machine epsilon (2^-23): the unit tolerances are written in.
constexpr double FLT_EPS = static_cast<double>(std::numeric_limits<float>::epsilon());

// Accuracy of the numerical gradient with a wide margin: h = 1e-5 gives truncation
// h^2 f''' ~ 1e-10 and double rounding 1e-16 |L| / h ~ 1e-11 |L|.
constexpr double FD_TOL = 1e-6;

// Normwise rounding bound of a float32 sum of n products/terms: gamma_n ~ n * eps (Higham),
// doubled for cancellation between terms of either sign.
inline double sum_tol(int64_t n) { return 2.0 * static_cast<double>(n) * FLT_EPS; }

// One input of the op under test.
struct Input {
  engine::Shape shape;
  std::vector<double> values;  // float input: each value is exactly a float
  std::vector<int32_t> ints;   // int input (labels, indices)
  bool is_int = false;
  bool differentiable = true;  // float inputs only: check d L / d this input
};

inline Input floats(engine::Shape shape, std::vector<double> values, bool differentiable = true) {
  Input in;
  in.shape = std::move(shape);
  in.values = std::move(values);
  in.differentiable = differentiable;
  return in;
}

inline Input ints(engine::Shape shape, std::vector<int32_t> values) {
  Input in;
  in.shape = std::move(shape);
  in.ints = std::move(values);
  in.is_int = true;
  in.differentiable = false;
  return in;
}

// ---- seeded random data (Philox, so the same on every platform) --------------------------

inline size_t count(const engine::Shape& shape) { return static_cast<size_t>(engine::numel(shape)); }

// Uniform in [lo, hi), rounded to float so the engine sees exactly these numbers.
inline std::vector<double> uniform(engine::Generator& rng, size_t n, double lo, double hi) {
  std::vector<double> out(n);
  for (double& v : out) {
    v = static_cast<double>(static_cast<float>(lo + (hi - lo) * static_cast<double>(rng.uniform())));
  }
  return out;
}

// Random sign, magnitude uniform in [min_abs, max_abs]: never zero, never near a kink at 0.
inline std::vector<double> away_from_zero(engine::Generator& rng, size_t n, double min_abs,
                                          double max_abs) {
  std::vector<double> out = uniform(rng, n, min_abs, max_abs);
  for (double& v : out) v = rng.uniform() < 0.5f ? -v : v;
  return out;
}

// Uniform integers in [0, n).
inline std::vector<int32_t> random_ints(engine::Generator& rng, size_t size, int32_t n) {
  std::vector<int32_t> out(size);
  for (int32_t& v : out) v = static_cast<int32_t>(rng.below(static_cast<uint64_t>(n)));
  return out;
}

// ---- the check ----------------------------------------------------------------------------

using EngineFn = std::function<engine::Tensor(const std::vector<engine::Tensor>& inputs)>;
// Reads inputs[i].values / inputs[i].ints; returns the output flattened row-major.
using RefFn = std::function<std::vector<double>(const std::vector<Input>& inputs)>;

struct Tolerance {
  double forward;   // bound on max|ours - ref| / max|ref|
  double gradient;  // bound on max|analytic - numeric| / max|numeric|, for each input
};

struct Options {
  // A check whose true gradient is zero everywhere compares nothing; require a non-zero
  // numerical gradient unless the case is degenerate on purpose (softmax of one column).
  bool nonzero_gradient = true;
  uint64_t weight_seed = 12345;  // seed of the random weighting w
  double step = 1e-5;            // central-difference step, relative: h = step * max(1, |x|)
};

struct Result {
  std::string problem;                  // non-empty when the check could not run
  double forward_error = 0.0;           // max|ours - ref| / max|ref|
  double forward_abs_error = 0.0;       // max|ours - ref|
  std::vector<size_t> checked_inputs;   // indices of the differentiable inputs
  std::vector<double> gradient_error;   // per checked input, normwise relative
  std::vector<double> gradient_scale;   // per checked input, max|numeric gradient|
};

namespace detail {

// max|a - b| and max|b|; a non-finite difference counts as infinite error.
inline std::pair<double, double> max_diff_and_scale(const std::vector<double>& a,
                                                    const std::vector<double>& b) {
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(a[i] - b[i]);
    diff = std::isfinite(d) ? std::max(diff, d) : std::numeric_limits<double>::infinity();
    scale = std::max(scale, std::fabs(b[i]));
  }
  return {diff, scale};
}

inline double relative(double diff, double scale) { return scale > 0.0 ? diff / scale : diff; }

inline std::vector<double> to_doubles(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

inline std::vector<float> to_floats(const std::vector<double>& v) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i]);
  return out;
}

inline double weighted_sum(const std::vector<double>& w, const std::vector<double>& y) {
  double total = 0.0;
  for (size_t i = 0; i < y.size(); ++i) total += w[i] * y[i];
  return total;
}

}  // namespace detail

// Runs the three steps and returns the measured errors (no assertions: see check()).
inline Result measure(const EngineFn& f, const RefFn& f_ref, std::vector<Input> inputs,
                      const Options& options = Options()) {
  Result result;
  // The engine's inputs; the differentiable ones require grad.
  std::vector<engine::Tensor> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input& in = inputs[i];
    if (in.is_int) {
      tensors.push_back(engine::Tensor::from_ints(in.ints, in.shape));
    } else {
      tensors.push_back(engine::Tensor::from_vector(detail::to_floats(in.values), in.shape));
      if (in.differentiable) {
        tensors.back().set_requires_grad(true);
        result.checked_inputs.push_back(i);
      }
    }
  }

  // 1. forward parity.
  const engine::Tensor y = f(tensors);
  const std::vector<double> ours = detail::to_doubles(y.to_vector());
  const std::vector<double> ref = f_ref(inputs);
  if (ours.size() != ref.size()) {
    result.problem = "engine output has " + std::to_string(ours.size()) +
                     " elements, reference " + std::to_string(ref.size());
    return result;
  }
  const auto [fdiff, fscale] = detail::max_diff_and_scale(ours, ref);
  result.forward_abs_error = fdiff;
  result.forward_error = detail::relative(fdiff, fscale);
  if (result.checked_inputs.empty()) return result;

  // 2. analytic gradient of L = sum(w * f(x)).
  engine::Generator rng(options.weight_seed);
  const std::vector<double> w = uniform(rng, ours.size(), -1.0, 1.0);
  const engine::Tensor w_tensor = engine::Tensor::from_vector(detail::to_floats(w), y.shape());
  if (!y.requires_grad()) {
    result.problem = "the output records no gradient";
    return result;
  }
  engine::sum(engine::mul(y, w_tensor)).backward();

  // 3. numerical gradient of L_ref = sum(w * f_ref(x)) by central differences, in double.
  for (const size_t i : result.checked_inputs) {
    const engine::Tensor grad = tensors[i].grad();
    if (!grad.defined() || grad.shape() != inputs[i].shape) {
      result.problem = "input " + std::to_string(i) + " got no gradient of its shape";
      return result;
    }
    const std::vector<double> analytic = detail::to_doubles(grad.to_vector());
    std::vector<double>& x = inputs[i].values;
    std::vector<double> numeric(x.size());
    for (size_t j = 0; j < x.size(); ++j) {
      const double saved = x[j];
      const double h = options.step * std::max(1.0, std::fabs(saved));
      x[j] = saved + h;
      const double plus = detail::weighted_sum(w, f_ref(inputs));
      x[j] = saved - h;
      const double minus = detail::weighted_sum(w, f_ref(inputs));
      x[j] = saved;
      numeric[j] = (plus - minus) / (2.0 * h);
    }
    const auto [gdiff, gscale] = detail::max_diff_and_scale(analytic, numeric);
    result.gradient_error.push_back(detail::relative(gdiff, gscale));
    result.gradient_scale.push_back(gscale);
  }
  return result;
}

// measure() plus doctest assertions against `tol`. `what` names the case in failures.
inline void check(const std::string& what, const EngineFn& f, const RefFn& f_ref,
                  const std::vector<Input>& inputs, const Tolerance& tol,
                  const Options& options = Options()) {
  INFO("case: ", what);
  const Result r = measure(f, f_ref, inputs, options);
  REQUIRE_MESSAGE(r.problem.empty(), r.problem);
  if (std::getenv("GRADCHECK_VERBOSE") != nullptr) {
    std::printf("%-48s forward %.2e (tol %.1e)", what.c_str(), r.forward_error, tol.forward);
    for (size_t k = 0; k < r.checked_inputs.size(); ++k) {
      std::printf("  grad[%zu] %.2e", r.checked_inputs[k], r.gradient_error[k]);
    }
    std::printf(" (tol %.1e)\n", tol.gradient);
  }
  INFO("forward: max abs error ", r.forward_abs_error, ", normwise ", r.forward_error);
  CHECK(r.forward_error <= tol.forward);
  for (size_t k = 0; k < r.checked_inputs.size(); ++k) {
    INFO("gradient w.r.t. input ", r.checked_inputs[k], ": normwise error ", r.gradient_error[k],
         ", max|numeric| ", r.gradient_scale[k]);
    CHECK(r.gradient_error[k] <= tol.gradient);
    if (options.nonzero_gradient) CHECK(r.gradient_scale[k] > 0.0);
  }
}

}  // namespace gradcheck
