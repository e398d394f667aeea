// The seed-002 ops on the GPU: the dot path of matmul for (1 x K) @ (K x 1)
// (kernels/dot.cu) and random_normal (kernels/random.cu).
//
// dot: against a double reference with Higham's bound for a float sum of n products,
// n * 2^-24 * sum |a_i b_i| (the kernel's tree of partial sums errs far less; the bound
// holds for any order), at n = 1 (one block, one thread), 31 (a partial warp), 10^6 + 7
// (many blocks and the second pass) and 5 * 10^6 + 11 (the grid capped at 4 blocks per SM);
// every way of storing the operands; alpha and beta, with a NaN in c when beta = 0; views at
// odd offsets, equally misaligned (float4 path with a scalar head) or not (scalar path);
// the same bits on a second call.
// random_normal: GPU vs CPU within a few ulp (CUDA's logf errs by 1 ulp, sincosf by 2,
// glibc's by < 1), the moments of 10^6 samples, and views at odd offsets.
// Without a GPU, gpu_skip_main.cpp exits 77 (ctest: "Skipped"); each test case also starts
// with gpu_or_skip(), so none passes silently.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/device_services.h"
#include "core/ops/matmul.h"
#include "core/ops/random.h"
#include "core/rng.h"
#include "core/tensor.h"

using engine::Device;
using engine::Shape;
using engine::Tensor;

namespace {

constexpr double U = 1.0 / 16777216.0;  // float32 unit roundoff, 2^-24
const float NaN = std::numeric_limits<float>::quiet_NaN();

bool gpu_or_skip() {
  std::string why;
  if (engine::device_available(Device::cuda(), &why)) return true;
  MESSAGE("SKIPPED: no GPU (", why, ") — the GPU dot and random_normal are not tested");
  std::fprintf(stderr, "*** GPU TEST SKIPPED: no GPU: %s ***\n", why.c_str());
  return false;
}

std::vector<float> uniform(engine::Generator& rng, size_t n, float lo, float hi) {
  std::vector<float> v(n);
  for (float& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

// `values` on the GPU as a view of `shape` at element `offset` of a larger buffer (padded
// with a value that would spoil the sum if the kernel read it).
Tensor on_gpu_at(const std::vector<float>& values, const Shape& shape, int64_t offset) {
  std::vector<float> padded(static_cast<size_t>(offset), 1e30f);
  padded.insert(padded.end(), values.begin(), values.end());
  padded.push_back(1e30f);
  const Tensor whole =
      Tensor::from_vector(padded, {static_cast<int64_t>(padded.size())}, Device::cuda());
  return whole.slice(offset, shape);
}

struct DotCase {
  bool transpose_a = false, transpose_b = false;
  int64_t offset_a = 0, offset_b = 0;
  float alpha = 1.0f, beta = 0.0f, c0 = NaN;
};

// c = alpha * op(a) @ op(b) + beta * c on the GPU, a and b (1 x K) and (K x 1) however stored.
float gpu_dot(const std::vector<float>& a, const std::vector<float>& b, const DotCase& d) {
  const auto k = static_cast<int64_t>(a.size());
  const Tensor ta = on_gpu_at(a, d.transpose_a ? Shape{k, 1} : Shape{1, k}, d.offset_a);
  const Tensor tb = on_gpu_at(b, d.transpose_b ? Shape{1, k} : Shape{k, 1}, d.offset_b);
  Tensor c = Tensor::full({1, 1}, d.c0, Device::cuda());
  engine::raw::matmul(ta, d.transpose_a, tb, d.transpose_b, c, d.alpha, d.beta);
  return c.item();
}

std::vector<float> normal(Device device, int64_t n, int64_t offset, float mean, float stddev,
                          uint64_t seed) {
  Tensor whole = Tensor::full({n + offset + 1}, NaN, device);
  Tensor y = whole.slice(offset, {n});
  engine::raw::random_normal(y, mean, stddev, seed);  // on `device`'s implementation
  const std::vector<float> all = whole.to_vector();
  // Nothing outside the view is written.
  for (int64_t i = 0; i < offset; ++i) REQUIRE(std::isnan(all[static_cast<size_t>(i)]));
  REQUIRE(std::isnan(all.back()));
  return std::vector<float>(all.begin() + offset, all.end() - 1);
}

}  // namespace

TEST_CASE("GPU matmul (1 x K) @ (K x 1): the dot path against a double reference") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(11);
  for (const int64_t k : {1, 31, 1'000'007, 5'000'011}) {
    const std::vector<float> a = uniform(rng, static_cast<size_t>(k), -1.0f, 1.0f);
    const std::vector<float> b = uniform(rng, static_cast<size_t>(k), -2.0f, 2.0f);
    double exact = 0.0, magnitude = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
      exact += static_cast<double>(a[i]) * b[i];
      magnitude += std::fabs(static_cast<double>(a[i]) * b[i]);
    }
    const double n = static_cast<double>(k);
    // Storage (all four transposes), alignment (equal odd offsets: float4 body after a scalar
    // head; unequal: scalar loads), and alpha/beta.
    const DotCase cases[] = {
        {false, false, 0, 0, 1.0f, 0.0f, NaN},  {true, false, 0, 0, 1.0f, 0.0f, NaN},
        {false, true, 0, 0, 1.0f, 0.0f, NaN},   {true, true, 0, 0, 1.0f, 0.0f, NaN},
        {false, false, 1, 1, 1.0f, 0.0f, NaN},  {false, false, 3, 3, 1.0f, 0.0f, NaN},
        {false, false, 1, 2, 1.0f, 0.0f, NaN},  {true, true, 0, 3, 1.0f, 0.0f, NaN},
        {false, false, 0, 0, -0.5f, 0.25f, 3.0f}, {true, false, 2, 1, 2.0f, -1.0f, 0.5f},
    };
    for (const DotCase& d : cases) {
      INFO("K = ", k, ", transpose_a ", d.transpose_a, ", transpose_b ", d.transpose_b,
           ", offsets ", d.offset_a, "/", d.offset_b, ", alpha ", d.alpha, ", beta ", d.beta);
      const float got = gpu_dot(a, b, d);
      // With beta = 0, c0 is NaN: c is not read, so the result is finite.
      const double c0 = d.beta == 0.0f ? 0.0 : static_cast<double>(d.c0);
      const double want = d.alpha * exact + d.beta * c0;
      // The sum's bound, then alpha * dot + beta * c: two more roundings.
      const double bound = (n + 2) * U * (std::fabs(d.alpha) * magnitude + std::fabs(d.beta * c0));
      CHECK(std::isfinite(got));
      CHECK(std::fabs(got - want) <= bound + 1e-30);
    }
  }
}

// The bound above grows like K^2 and would let a dropped element through at large K. Small
// integers make every partial sum exact in float (|sums| <= K < 2^24), whatever the order:
// the result must then be exactly the integer dot, so a missed or doubled element shows.
TEST_CASE("GPU matmul (1 x K) @ (K x 1): exact on integer data, every path") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(13);
  // One block; one block plus a partial warp; several blocks; the capped grid.
  for (const int64_t k : {4096, 4097, 1'000'007, 5'000'011}) {
    std::vector<float> a(static_cast<size_t>(k)), b(static_cast<size_t>(k));
    for (float& x : a) x = static_cast<float>(static_cast<int64_t>(rng.below(3)) - 1);
    for (float& x : b) x = static_cast<float>(static_cast<int64_t>(rng.below(3)) - 1);
    int64_t exact = 0;
    for (size_t i = 0; i < a.size(); ++i) exact += static_cast<int64_t>(a[i] * b[i]);
    // Aligned, equally misaligned (scalar head and tail around float4s), unequal (scalar).
    for (const auto& offsets : {std::pair<int64_t, int64_t>{0, 0}, {1, 1}, {2, 2}, {3, 3}, {0, 1}, {3, 2}}) {
      DotCase d;
      d.offset_a = offsets.first;
      d.offset_b = offsets.second;
      INFO("K = ", k, ", offsets ", d.offset_a, "/", d.offset_b);
      CHECK(gpu_dot(a, b, d) == static_cast<float>(exact));
      d.alpha = -0.5f;
      d.beta = 0.25f;
      d.c0 = 3.0f;
      CHECK(gpu_dot(a, b, d) == static_cast<float>(-0.5 * static_cast<double>(exact) + 0.75));
    }
  }
}

TEST_CASE("GPU matmul (1 x K) @ (K x 1): deterministic, the same bits every call") {
  if (!gpu_or_skip()) return;
  engine::Generator rng(12);
  const std::vector<float> a = uniform(rng, 3'000'017, -1.0f, 1.0f);
  const std::vector<float> b = uniform(rng, 3'000'017, -1.0f, 1.0f);
  const float first = gpu_dot(a, b, {});
  for (int i = 0; i < 3; ++i) CHECK(gpu_dot(a, b, {}) == first);
}

TEST_CASE("GPU random_normal: the CPU's numbers within a few ulp") {
  if (!gpu_or_skip()) return;
  const float mean = 0.5f, stddev = 3.0f;
  // Sizes with a partial last Philox block; offsets 0 (float4 stores) and odd (scalar stores).
  for (const int64_t n : {1, 3, 5, 4099, 1'000'003}) {
    for (const int64_t offset : {0, 1, 3}) {
      INFO("n = ", n, ", offset ", offset);
      const std::vector<float> on_cpu = normal(Device::cpu(), n, offset, mean, stddev, 77);
      const std::vector<float> on_gpu = normal(Device::cuda(), n, offset, mean, stddev, 77);
      int64_t bad = 0, worst = -1;
      double worst_ratio = 0.0;
      for (size_t i = 0; i < on_cpu.size(); ++i) {
        // Both compute the same float uniforms and angle; logf (1 ulp on CUDA, < 1 in glibc),
        // sincosf (2 ulp, < 1), sqrtf and three products (0.5 each) differ by at most ~6 ulp
        // of |stddev z| between the two, plus the final add: 8 ulp, 16U relative.
        const double scale = std::fabs(mean) + std::fabs(on_cpu[i] - mean);
        const double diff = std::fabs(static_cast<double>(on_gpu[i]) - on_cpu[i]);
        const double bound = 16.0 * U * scale + 1e-30;
        if (!(diff <= bound)) ++bad;
        if (diff / bound > worst_ratio) {
          worst_ratio = diff / bound;
          worst = static_cast<int64_t>(i);
        }
      }
      INFO("worst element ", worst, " at ", worst_ratio, " of its bound");
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("GPU random_normal: moments of 10^6 samples within 5 standard errors") {
  if (!gpu_or_skip()) return;
  const double mu = -1.0, sigma = 0.5;
  const std::vector<float> x = normal(Device::cuda(), 1'000'000, 0, -1.0f, 0.5f, 4321);
  const auto n = static_cast<double>(x.size());
  double s1 = 0.0;
  for (const float v : x) s1 += v;
  const double mean = s1 / n;
  double s2 = 0.0, s4 = 0.0;
  for (const float v : x) {
    const double d = v - mean;
    s2 += d * d;
    s4 += d * d * d * d;
  }
  const double variance = s2 / (n - 1), kurtosis = s4 / n / ((s2 / n) * (s2 / n));
  INFO("mean ", mean, " variance ", variance, " kurtosis ", kurtosis);
  CHECK(std::fabs(mean - mu) < 5.0 * sigma / std::sqrt(n));
  CHECK(std::fabs(variance - sigma * sigma) < 5.0 * sigma * sigma * std::sqrt(2.0 / (n - 1)));
  CHECK(std::fabs(kurtosis - 3.0) < 5.0 * std::sqrt(24.0 / n));
  // Same seed, same bits on the GPU.
  CHECK(normal(Device::cuda(), 1'000'000, 0, -1.0f, 0.5f, 4321) == x);
}
