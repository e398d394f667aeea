// The seed-002 ops on the CPU: random_normal (Box-Muller on Philox, core/rng.h) and the
// dot-product path of matmul for (1 x K) @ (K x 1) (cpu/matmul.cpp).
//
// random_normal: moments of 10^6 samples within 5 standard errors of a normal's (a test that
// a correct generator fails about once in 10^6 runs per check), no correlation between
// neighbours (the pairs of Box-Muller), the documented rule recomputed in double, and
// reproducibility: same seed, same bits, for every thread count and tensor length.
// dot: against a double reference with Higham's bound for a float sum of K products,
// K * 2^-24 * sum |a_i b_i|, for every way of storing the operands, with alpha and beta.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/ops/matmul.h"
#include "core/ops/random.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "cpu/cpu_device.h"

using engine::Tensor;

namespace {

constexpr double U = 1.0 / 16777216.0;  // float32 unit roundoff, 2^-24
const float NaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> normal_on_cpu(int64_t n, float mean, float stddev, uint64_t seed) {
  Tensor y = Tensor::full({n}, NaN);
  engine::raw::random_normal(y, mean, stddev, seed);
  return y.to_vector();
}

// The sample's moments, in double.
struct Moments {
  double mean, variance, skewness, kurtosis, within_one_sigma, lag1_correlation;
};

Moments moments(const std::vector<float>& x, double mu, double sigma) {
  const auto n = static_cast<double>(x.size());
  double s1 = 0.0;
  for (const float v : x) s1 += v;
  const double mean = s1 / n;
  double s2 = 0.0, s3 = 0.0, s4 = 0.0, within = 0.0, lag = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - mean;
    s2 += d * d;
    s3 += d * d * d;
    s4 += d * d * d * d;
    if (std::fabs(x[i] - mu) < sigma) within += 1.0;
    if (i + 1 < x.size()) lag += d * (x[i + 1] - mean);
  }
  const double var = s2 / n;
  return {mean, s2 / (n - 1), s3 / n / std::pow(var, 1.5), s4 / n / (var * var), within / n,
          lag / s2};
}

// Element i of the documented rule (core/rng.h), recomputed with double log, sqrt, sin, cos
// from the rule's float uniforms and float angle: what a correctly rounded libm would give.
double rule_in_double(uint64_t seed, int64_t i, double mean, double stddev) {
  const engine::Philox4x32 r = engine::philox4x32(static_cast<uint64_t>(i / 4), 0, seed);
  const int pair = static_cast<int>(i % 4) / 2;
  const float u1 = static_cast<float>(r.v[2 * pair]) * 0x1p-32f + 0x1p-33f;
  const float u2 = static_cast<float>(r.v[2 * pair + 1]) * 0x1p-32f;
  const float theta = 6.2831853071795865f * u2;  // the rule's angle, rounded to float
  const double radius = std::sqrt(-2.0 * std::log(static_cast<double>(u1)));
  const double z = radius * (i % 2 == 0 ? std::cos(static_cast<double>(theta))
                                        : std::sin(static_cast<double>(theta)));
  return mean + stddev * z;
}

// (1 x K) @ (K x 1) as the matmul sees it: a stored (1, K), or (K, 1) with transpose_a; b
// stored (K, 1), or (1, K) with transpose_b. The memory is the same K floats either way.
float cpu_dot(const std::vector<float>& a, bool ta, const std::vector<float>& b, bool tb,
              float alpha, float beta, float c0) {
  const auto k = static_cast<int64_t>(a.size());
  const Tensor ta_ = Tensor::from_vector(a, ta ? engine::Shape{k, 1} : engine::Shape{1, k});
  const Tensor tb_ = Tensor::from_vector(b, tb ? engine::Shape{1, k} : engine::Shape{k, 1});
  Tensor c = Tensor::full({1, 1}, c0);
  engine::raw::matmul(ta_, ta, tb_, tb, c, alpha, beta);
  return c.item();
}

std::vector<float> uniform(engine::Generator& rng, size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (float& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

// Restores the OpenMP team size when a test that changes it ends, even by a failed CHECK.
struct ThreadsGuard {
  int saved = engine::cpu::num_threads();
  ~ThreadsGuard() { engine::cpu::set_num_threads(saved); }
};

}  // namespace

TEST_CASE("random_normal (CPU): moments of 10^6 samples within 5 standard errors") {
  const int64_t n = 1'000'000;
  const double mu = 1.5, sigma = 2.0;
  const std::vector<float> x = normal_on_cpu(n, 1.5f, 2.0f, 1234);
  for (const float v : x) REQUIRE(std::isfinite(v));
  const Moments m = moments(x, mu, sigma);
  const double N = static_cast<double>(n);
  const double p1 = 0.6826894921370859;  // P(|z| < 1)
  INFO("mean ", m.mean, " variance ", m.variance, " skewness ", m.skewness, " kurtosis ",
       m.kurtosis, " P(|z|<1) ", m.within_one_sigma, " lag-1 correlation ", m.lag1_correlation);
  // Standard errors of a normal sample: mean sigma/sqrt(n), variance sigma^2 sqrt(2/(n-1)),
  // skewness sqrt(6/n), kurtosis sqrt(24/n), a proportion sqrt(p(1-p)/n), a correlation 1/sqrt(n).
  CHECK(std::fabs(m.mean - mu) < 5.0 * sigma / std::sqrt(N));
  CHECK(std::fabs(m.variance - sigma * sigma) < 5.0 * sigma * sigma * std::sqrt(2.0 / (N - 1)));
  CHECK(std::fabs(m.skewness) < 5.0 * std::sqrt(6.0 / N));
  CHECK(std::fabs(m.kurtosis - 3.0) < 5.0 * std::sqrt(24.0 / N));
  CHECK(std::fabs(m.within_one_sigma - p1) < 5.0 * std::sqrt(p1 * (1 - p1) / N));
  // Neighbours share a Box-Muller pair (r cos, r sin): uncorrelated, though not independent.
  CHECK(std::fabs(m.lag1_correlation) < 5.0 / std::sqrt(N));
}

TEST_CASE("random_normal (CPU): follows the documented Box-Muller rule of core/rng.h") {
  const float mean = -0.75f, stddev = 3.0f;
  const uint64_t seed = 99;
  const std::vector<float> y = normal_on_cpu(4099, mean, stddev, seed);
  for (size_t i = 0; i < y.size(); ++i) {
    const double ref = rule_in_double(seed, static_cast<int64_t>(i), mean, stddev);
    // glibc's logf, sinf, cosf err by < 1 ulp, sqrtf and the products and the final add by
    // 0.5 ulp each: 4 ulp (8U) of the magnitudes involved is generous.
    const double scale = std::fabs(mean) + std::fabs(ref - mean);
    INFO("element ", i, ": got ", y[i], ", rule in double ", ref);
    REQUIRE(std::fabs(y[i] - ref) <= 8.0 * U * scale + 1e-30);
  }
}

TEST_CASE("random_normal (CPU): same seed, same numbers, whatever the threads and length") {
  ThreadsGuard guard;
  const int64_t n = 100'003;  // a partial last Philox block
  const std::vector<float> many = normal_on_cpu(n, 0.0f, 1.0f, 7);
  CHECK(normal_on_cpu(n, 0.0f, 1.0f, 7) == many);
  engine::cpu::set_num_threads(1);
  CHECK(normal_on_cpu(n, 0.0f, 1.0f, 7) == many);
  engine::cpu::set_num_threads(3);
  CHECK(normal_on_cpu(n, 0.0f, 1.0f, 7) == many);
  // Counter-based: element i does not depend on the tensor's length.
  for (const int64_t len : {1, 2, 3, 5, 4097}) {
    const std::vector<float> prefix = normal_on_cpu(len, 0.0f, 1.0f, 7);
    CHECK(prefix == std::vector<float>(many.begin(), many.begin() + len));
  }
  // Another seed, other numbers.
  const std::vector<float> other = normal_on_cpu(n, 0.0f, 1.0f, 8);
  int64_t same = 0;
  for (int64_t i = 0; i < n; ++i) same += other[static_cast<size_t>(i)] == many[static_cast<size_t>(i)];
  CHECK(same < 10);
}

TEST_CASE("random_normal (CPU): a view at an odd offset gets elements 0.. and nothing else") {
  Tensor whole = Tensor::full({20}, NaN);
  Tensor view = whole.slice(3, {13});
  engine::raw::random_normal(view, 0.0f, 1.0f, 5);
  const std::vector<float> all = whole.to_vector();
  const std::vector<float> expected = normal_on_cpu(13, 0.0f, 1.0f, 5);
  for (int i = 0; i < 20; ++i) {
    INFO("element ", i);
    if (i < 3 || i >= 16) {
      CHECK(std::isnan(all[static_cast<size_t>(i)]));
    } else {
      CHECK(all[static_cast<size_t>(i)] == expected[static_cast<size_t>(i - 3)]);
    }
  }
}

TEST_CASE("matmul (1 x K) @ (K x 1) on the CPU: the dot path against a double reference") {
  engine::Generator rng(21);
  // One element, odd sizes, one chunk of sdot and one more, many chunks across the team.
  for (const int64_t k : {1, 31, 16384, 16385, 1'000'007}) {
    const std::vector<float> a = uniform(rng, static_cast<size_t>(k), -1.0f, 1.0f);
    const std::vector<float> b = uniform(rng, static_cast<size_t>(k), -2.0f, 2.0f);
    double exact = 0.0, magnitude = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
      exact += static_cast<double>(a[i]) * b[i];
      magnitude += std::fabs(static_cast<double>(a[i]) * b[i]);
    }
    for (const bool ta : {false, true}) {
      for (const bool tb : {false, true}) {
        INFO("K = ", k, ", transpose_a ", ta, ", transpose_b ", tb);
        // beta = 0 must not read c: a NaN there stays out of the result.
        const float plain = cpu_dot(a, ta, b, tb, 1.0f, 0.0f, NaN);
        CHECK(std::fabs(plain - exact) <= static_cast<double>(k) * U * magnitude + 1e-30);
        // c = alpha * dot + beta * c: two more roundings of magnitudes |alpha dot|, |beta c|.
        const float scaled = cpu_dot(a, ta, b, tb, -0.5f, 0.25f, 3.0f);
        const double want = -0.5 * exact + 0.25 * 3.0;
        const double bound = (static_cast<double>(k) + 2) * U * (0.5 * magnitude + 0.75);
        CHECK(std::fabs(scaled - want) <= bound);
      }
    }
  }
}

// The bound above grows like K^2 and would let a dropped element through at large K. Small
// integers make every partial sum exact in float (|sums| <= K < 2^24), whatever the order:
// the result must then be exactly the integer dot, so a missed or doubled element shows.
std::vector<float> small_integers(engine::Generator& rng, size_t n) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(static_cast<int64_t>(rng.below(3)) - 1);  // -1, 0, 1
  return v;
}

TEST_CASE("matmul (1 x K) @ (K x 1) on the CPU: exact on integer data") {
  engine::Generator rng(22);
  for (const int64_t k : {1, 16383, 16384, 16385, 1'000'007}) {
    const std::vector<float> a = small_integers(rng, static_cast<size_t>(k));
    const std::vector<float> b = small_integers(rng, static_cast<size_t>(k));
    int64_t exact = 0;
    for (size_t i = 0; i < a.size(); ++i) exact += static_cast<int64_t>(a[i] * b[i]);
    for (const bool ta : {false, true}) {
      INFO("K = ", k, ", transpose_a ", ta);
      CHECK(cpu_dot(a, ta, b, !ta, 1.0f, 0.0f, NaN) == static_cast<float>(exact));
      CHECK(cpu_dot(a, ta, b, ta, -0.5f, 0.25f, 3.0f) == static_cast<float>(-0.5 * static_cast<double>(exact) + 0.75));
    }
  }
}

TEST_CASE("matmul (1 x K) @ (K x 1) on the CPU: the same bits for every thread count") {
  ThreadsGuard guard;
  engine::Generator rng(3);
  const std::vector<float> a = uniform(rng, 300'001, -1.0f, 1.0f);
  const std::vector<float> b = uniform(rng, 300'001, -1.0f, 1.0f);
  const float all = cpu_dot(a, false, b, false, 1.0f, 0.0f, 0.0f);
  engine::cpu::set_num_threads(1);
  CHECK(cpu_dot(a, false, b, false, 1.0f, 0.0f, 0.0f) == all);
  engine::cpu::set_num_threads(3);
  CHECK(cpu_dot(a, false, b, false, 1.0f, 0.0f, 0.0f) == all);
}
