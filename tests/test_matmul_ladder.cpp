// Every version of the SGEMM ladder (kernels/matmul/), through the version table the engine
// and kernel_bench use, against a double-precision reference on the host: odd sizes, all
// four transposes, alpha/beta, split-K, and operands that start off a 16-byte boundary.
// GPU only: gpu_skip_main.cpp reports "Skipped" without a GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "kernels/launch.h"
#include "kernels/matmul/gemm.h"

using namespace engine;
namespace mm = engine::cuda::matmul;

namespace {

constexpr double U = 1.0 / 16777216.0;  // float32 unit roundoff
constexpr double TF32_U = 1.0 / 2048.0;  // TF32 keeps 10 mantissa bits: unit roundoff 2^-11

struct Case {
  int M, N, K;
};
const Case CASES[] = {{1, 1, 1}, {7, 13, 5}, {33, 65, 129}, {1000, 1, 1000}, {130, 257, 64}, {64, 64, 300}};

std::vector<float> random_values(size_t n, Generator& rng) {
  std::vector<float> v(n);
  for (float& x : v) x = 2.0f * rng.uniform() - 1.0f;
  return v;
}

// A device tensor holding `values`, starting `offset` floats into its storage (offset 1: the
// data is not 16-byte aligned, as parameter views into a flat buffer may not be).
Tensor device_tensor(const std::vector<float>& values, int64_t rows, int64_t cols, int64_t offset) {
  std::vector<float> padded(static_cast<size_t>(offset), 0.0f);
  padded.insert(padded.end(), values.begin(), values.end());
  const Tensor storage = Tensor::from_vector(padded, {static_cast<int64_t>(padded.size())}, Device::cuda());
  return storage.slice(offset, {rows, cols});
}

void check_version(const mm::Version& v, const Case& c, bool ta, bool tb, int k_slice,
                   int64_t offset, float alpha, float beta, Generator& rng) {
  const int64_t a_rows = ta ? c.K : c.M, a_cols = ta ? c.M : c.K;
  const int64_t b_rows = tb ? c.N : c.K, b_cols = tb ? c.K : c.N;
  const std::vector<float> a = random_values(static_cast<size_t>(a_rows * a_cols), rng);
  const std::vector<float> b = random_values(static_cast<size_t>(b_rows * b_cols), rng);
  const std::vector<float> c0 = random_values(static_cast<size_t>(c.M) * c.N, rng);
  const Tensor da = device_tensor(a, a_rows, a_cols, offset);
  const Tensor db = device_tensor(b, b_rows, b_cols, offset);
  Tensor dc = Tensor::from_vector(c0, {c.M, c.N}, Device::cuda());
  mm::Gemm g;
  g.M = c.M; g.N = c.N; g.K = c.K;
  g.A = da.data<float>(); g.lda = static_cast<int>(a_cols); g.transpose_a = ta;
  g.B = db.data<float>(); g.ldb = static_cast<int>(b_cols); g.transpose_b = tb;
  g.C = dc.data<float>(); g.ldc = c.N;
  g.alpha = alpha; g.beta = beta;
  Tensor workspace;
  int slices = 1;
  if (k_slice > 0 && k_slice < c.K) {
    slices = (c.K + k_slice - 1) / k_slice;
    g.k_slice = k_slice;
    workspace = Tensor::full({slices, c.M, c.N}, NAN, Device::cuda());
    g.partial = workspace.data<float>();
  }
  v.launch(g, cuda::stream());
  if (slices > 1) mm::split_k_reduce(g, slices, cuda::stream());
  const std::vector<float> got = dc.to_vector();

  size_t bad = 0;
  double worst = 0.0;
  for (int m = 0; m < c.M; ++m) {
    for (int n = 0; n < c.N; ++n) {
      double ref = 0.0, magnitude = 0.0;
      for (int k = 0; k < c.K; ++k) {
        const double x = ta ? a[static_cast<size_t>(k) * c.M + m] : a[static_cast<size_t>(m) * c.K + k];
        const double y = tb ? b[static_cast<size_t>(n) * c.K + k] : b[static_cast<size_t>(k) * c.N + n];
        ref += x * y;
        magnitude += std::fabs(x * y);
      }
      const double old = c0[static_cast<size_t>(m) * c.N + n];
      const double expected = alpha * ref + beta * old;
      // A K-term float dot product errs by at most ~K U of sum |x y| in any order; TF32
      // rounds each operand to 2^-11 first. Plus the roundings of alpha and beta terms.
      const double per_term = v.tf32 ? 2.0 * TF32_U : 0.0;
      const double bound = ((per_term + 2.0 * (c.K + 4) * U) * std::fabs(alpha) * magnitude +
                            4.0 * U * std::fabs(beta * old)) + 1e-30;
      const double err = std::fabs(got[static_cast<size_t>(m) * c.N + n] - expected);
      if (!(err <= bound)) ++bad;  // NaN (an unwritten element) fails too
      worst = std::max(worst, err / bound);
    }
  }
  INFO(v.name, " ", c.M, "x", c.N, "x", c.K, (ta ? " A^T" : ""), (tb ? " B^T" : ""), " k_slice ",
       k_slice, " offset ", offset, " alpha ", alpha, " beta ", beta, ": worst err/bound ", worst);
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("every matmul version matches a double reference: odd sizes, transposes, alpha/beta") {
  Generator rng(2026);
  int count = 0;
  const mm::Version* versions = mm::versions(&count);
  REQUIRE(count >= 1);
  for (int i = 0; i < count; ++i) {
    for (const Case& c : CASES) {
      for (int t = 0; t < 4; ++t) {
        check_version(versions[i], c, (t & 1) != 0, (t & 2) != 0, 0, 0, 1.0f, 0.0f, rng);
      }
      check_version(versions[i], c, false, false, 0, 0, -0.5f, 0.75f, rng);
    }
  }
}

TEST_CASE("every matmul version: split-K slices and operands off a 16-byte boundary") {
  Generator rng(7);
  int count = 0;
  const mm::Version* versions = mm::versions(&count);
  for (int i = 0; i < count; ++i) {
    for (const Case& c : {Case{33, 65, 129}, Case{32, 128, 784}, Case{1000, 1, 1000}}) {
      for (int t = 0; t < 4; ++t) {
        check_version(versions[i], c, (t & 1) != 0, (t & 2) != 0, 32, 0, 1.0f, 0.0f, rng);
        check_version(versions[i], c, (t & 1) != 0, (t & 2) != 0, 0, 1, 1.0f, 0.0f, rng);
      }
      check_version(versions[i], c, true, false, 48, 3, 2.0f, 1.0f, rng);
    }
  }
}
