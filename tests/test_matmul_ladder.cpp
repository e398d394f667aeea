// Every version of the SGEMM ladder (kernels/matmul/), through the version table the engine
// and kernel_bench use, against a double-precision reference on the host: odd sizes, all
// four transposes, alpha/beta, split-K, and operands that start off a 16-byte boundary. The
// same for small_splitk (kernels/matmul/small_splitk.cu), with its counters checked back at
// zero after every call, for add_partials' two sums in one launch, and for the engine's
// matmul at the seed models' shapes, called twice and replayed in a graph. GPU only:
// gpu_skip_main.cpp reports "Skipped" without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/device_services.h"
#include "core/ops/elementwise.h"
#include "core/ops/matmul.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "kernels/device_caps.h"
#include "kernels/launch.h"
#include "kernels/matmul/gemm.h"
#include "kernels/matmul/small_splitk.h"

using namespace engine;
namespace mm = engine::cuda::gemm;

namespace {

constexpr double U = 1.0 / 16777216.0;  // float32 unit roundoff
constexpr double TF32_U = 1.0 / 2048.0;  // TF32 keeps 10 mantissa bits: unit roundoff 2^-11

struct Case {
  int M, N, K;
};
// The last: several blocks of the largest tiles (v10's 128 x 256) in M and N, and rows that
// are multiples of 4 floats in every transpose, which the cp.async/wgmma paths need.
const Case CASES[] = {{1, 1, 1}, {7, 13, 5}, {33, 65, 129}, {1000, 1, 1000}, {130, 257, 64}, {64, 64, 300},
                      {300, 264, 100}};

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

// One problem's operands on the host: C (M, N) = alpha op(A) op(B) + beta C0.
struct Problem {
  Case c;
  bool ta, tb;
  float alpha, beta;
  std::vector<float> a, b, c0;
  int64_t a_rows() const { return ta ? c.K : c.M; }
  int64_t a_cols() const { return ta ? c.M : c.K; }
  int64_t b_rows() const { return tb ? c.N : c.K; }
  int64_t b_cols() const { return tb ? c.K : c.N; }
};

Problem random_problem(const Case& c, bool ta, bool tb, float alpha, float beta, Generator& rng) {
  Problem p{c, ta, tb, alpha, beta, {}, {}, {}};
  p.a = random_values(static_cast<size_t>(p.a_rows() * p.a_cols()), rng);
  p.b = random_values(static_cast<size_t>(p.b_rows() * p.b_cols()), rng);
  p.c0 = random_values(static_cast<size_t>(c.M) * c.N, rng);
  return p;
}

// Whether `got` is the problem's C within the rounding a float (or TF32) GEMM may add.
void expect_matches_reference(const Problem& p, const std::vector<float>& got, bool tf32,
                              const std::string& what) {
  const Case& c = p.c;
  size_t bad = 0;
  double worst = 0.0;
  for (int m = 0; m < c.M; ++m) {
    for (int n = 0; n < c.N; ++n) {
      double ref = 0.0, magnitude = 0.0;
      for (int k = 0; k < c.K; ++k) {
        const double x = p.ta ? p.a[static_cast<size_t>(k) * c.M + m] : p.a[static_cast<size_t>(m) * c.K + k];
        const double y = p.tb ? p.b[static_cast<size_t>(n) * c.K + k] : p.b[static_cast<size_t>(k) * c.N + n];
        ref += x * y;
        magnitude += std::fabs(x * y);
      }
      const double old = p.c0[static_cast<size_t>(m) * c.N + n];
      const double expected = p.alpha * ref + p.beta * old;
      // A K-term float dot product errs by at most ~K U of sum |x y| in any order; TF32
      // rounds each operand to 2^-11 first (cvt.rna), or truncates it, within 2^-10 (wgmma
      // drops the low 13 bits of an FP32 operand it reads from shared memory). Plus the
      // roundings of alpha and beta terms.
      const double per_term = tf32 ? 4.0 * TF32_U : 0.0;
      const double bound = ((per_term + 2.0 * (c.K + 4) * U) * std::fabs(p.alpha) * magnitude +
                            4.0 * U * std::fabs(p.beta * old)) + 1e-30;
      const double err = std::fabs(got[static_cast<size_t>(m) * c.N + n] - expected);
      if (!(err <= bound)) ++bad;  // NaN (an unwritten element) fails too
      worst = std::max(worst, err / bound);
    }
  }
  INFO(what, " ", c.M, "x", c.N, "x", c.K, (p.ta ? " A^T" : ""), (p.tb ? " B^T" : ""), " alpha ",
       p.alpha, " beta ", p.beta, ": worst err/bound ", worst);
  CHECK(bad == 0);
}

void check_version(const mm::Version& v, const Case& c, bool ta, bool tb, int k_slice,
                   int64_t offset, float alpha, float beta, Generator& rng) {
  const Problem p = random_problem(c, ta, tb, alpha, beta, rng);
  const Tensor da = device_tensor(p.a, p.a_rows(), p.a_cols(), offset);
  const Tensor db = device_tensor(p.b, p.b_rows(), p.b_cols(), offset);
  Tensor dc = Tensor::from_vector(p.c0, {c.M, c.N}, Device::cuda());
  mm::Gemm g;
  g.M = c.M; g.N = c.N; g.K = c.K;
  g.A = da.data<float>(); g.lda = static_cast<int>(p.a_cols()); g.transpose_a = ta;
  g.B = db.data<float>(); g.ldb = static_cast<int>(p.b_cols()); g.transpose_b = tb;
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
  expect_matches_reference(p, dc.to_vector(), v.tf32,
                           std::string(v.name) + " k_slice " + std::to_string(k_slice) +
                               " offset " + std::to_string(offset));
}

// small_splitk with a given k_slice (the engine's depends on the SM count): C holds NaN when
// beta is 0 (it must not be read), the workspace NaN (every partial it reads must have been
// written), and the tile counters must be back at zero afterwards.
void check_small_splitk(const Case& c, bool ta, bool tb, int k_slice, int64_t offset, float alpha,
                        float beta, bool tf32, Generator& rng, const Tensor& counters) {
  const Problem p = random_problem(c, ta, tb, alpha, beta, rng);
  const Tensor da = device_tensor(p.a, p.a_rows(), p.a_cols(), offset);
  const Tensor db = device_tensor(p.b, p.b_rows(), p.b_cols(), offset);
  Tensor dc = beta == 0.0f ? Tensor::full({c.M, c.N}, NAN, Device::cuda())
                           : Tensor::from_vector(p.c0, {c.M, c.N}, Device::cuda());
  mm::Gemm g;
  g.M = c.M; g.N = c.N; g.K = c.K;
  g.A = da.data<float>(); g.lda = static_cast<int>(p.a_cols()); g.transpose_a = ta;
  g.B = db.data<float>(); g.ldb = static_cast<int>(p.b_cols()); g.transpose_b = tb;
  g.C = dc.data<float>(); g.ldc = c.N;
  g.alpha = alpha; g.beta = beta;
  g.k_slice = k_slice;
  Tensor workspace;
  if (mm::small_splitk_workspace(g) > 0) {
    workspace = Tensor::full({mm::small_splitk_workspace(g)}, NAN, Device::cuda());
    g.partial = workspace.data<float>();
  }
  mm::small_splitk(g, tf32, reinterpret_cast<unsigned*>(counters.data<int32_t>()), cuda::stream());
  const std::string what = std::string("small_splitk ") + (tf32 ? "tf32" : "fp32") + " k_slice " +
                           std::to_string(k_slice) + " offset " + std::to_string(offset);
  expect_matches_reference(p, dc.to_vector(), tf32, what);
  const std::vector<int32_t> left = counters.to_int_vector();
  INFO(what, " ", c.M, "x", c.N, "x", c.K);
  CHECK(std::count(left.begin(), left.end(), 0) == static_cast<std::ptrdiff_t>(left.size()));
}

// A version this build or GPU cannot run (Version::available) is skipped, and says so.
// ENGINE_MATMUL_VERSIONS=v1_naive,v8_async_bigtile tests only the versions it names: for one
// kernel under work, or to spread a slow compute-sanitizer run over several processes
// (scripts/gpu/sanitize.sh).
bool named_in_environment(const char* name) {
  const char* list = std::getenv("ENGINE_MATMUL_VERSIONS");
  if (list == nullptr || *list == '\0') return true;
  std::stringstream names(list);
  for (std::string item; std::getline(names, item, ',');) {
    if (item == name) return true;
  }
  return false;
}

bool skipped_here(const mm::Version& v) {
  if (!named_in_environment(v.name)) return true;
  if (v.available == nullptr || v.available()) return false;
  MESSAGE(v.name, " is not available on this build or GPU: skipped");
  return true;
}

}  // namespace

TEST_CASE("every matmul version matches a double reference: odd sizes, transposes, alpha/beta") {
  Generator rng(2026);
  int count = 0;
  const mm::Version* versions = mm::versions(&count);
  REQUIRE(count >= 1);
  for (int i = 0; i < count; ++i) {
    if (skipped_here(versions[i])) continue;
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
    if (skipped_here(versions[i])) continue;
    // 132 x 125: split_k_reduce's broad form (16,500 sums, 16-byte lanes across row ends).
    for (const Case& c : {Case{33, 65, 129}, Case{32, 128, 784}, Case{1000, 1, 1000}, Case{132, 125, 96}}) {
      for (int t = 0; t < 4; ++t) {
        check_version(versions[i], c, (t & 1) != 0, (t & 2) != 0, 32, 0, 1.0f, 0.0f, rng);
        check_version(versions[i], c, (t & 1) != 0, (t & 2) != 0, 0, 1, 1.0f, 0.0f, rng);
      }
      check_version(versions[i], c, true, false, 48, 3, 2.0f, 1.0f, rng);
    }
  }
}

// add_partials' pair: two independent sums of partials in one launch, the kernel chosen for
// the first (one thread per element for >= 65,536 sums, 16-byte lanes for >= 16,384, else one
// float a lane), the second riding along where that kernel can take it with at most 32 loads
// a lane. The first must come out as it does alone; the second within float rounding of a
// double sum (its slices may be grouped differently than alone), and as alone where both
// take the same kernel or two launches.
TEST_CASE("add_partials: two sums in one launch, the first as alone, the second as a double sum") {
  Generator rng(41);
  struct Sum {
    int slices, rows, cols, offset;  // offset: floats before the partials (1: off 16 bytes)
  };
  struct Pair {
    const char* why;
    Sum first, second;
    bool second_as_alone;
  };
  const Pair pairs[] = {
      {"wide dw (79,200 sums, 12 slices) and a bias of 64 over 20 copy blocks", {12, 300, 264, 0}, {20, 1, 64, 0}, false},
      {"wide dw and a bias over 50 blocks, 50 loads a thread: two launches", {12, 300, 264, 0}, {50, 1, 64, 0}, true},
      {"broad dw (18,432 sums, 100 slices) and a bias of 64 over 200 blocks", {100, 144, 128, 0}, {200, 1, 64, 0}, false},
      {"broad dw and a bias off 16 bytes: two launches", {100, 144, 128, 0}, {200, 1, 64, 1}, true},
      {"broad dw and a bias over 576 blocks, 72 loads a lane: two launches", {100, 144, 128, 0}, {576, 1, 64, 0}, true},
      {"narrow dw (9,216 sums, 128 slices) and a bias of 32 over 800 blocks", {128, 288, 32, 0}, {800, 1, 32, 0}, true},
      {"narrow first layer's dw (864 of 264) and its bias", {264, 27, 32, 0}, {264, 1, 32, 0}, true},
      {"no first sum", {1, 0, 32, 0}, {264, 1, 32, 0}, true},
      {"no second sum", {128, 288, 32, 0}, {1, 0, 32, 0}, true},
  };
  for (const Pair& pair : pairs) {
    INFO(pair.why);
    struct Operand {
      std::vector<float> values;
      Tensor partials, alone, together;
    };
    auto make = [&](const Sum& s) {
      Operand o;
      o.values = random_values(static_cast<size_t>(s.slices) * s.rows * s.cols, rng);
      if (!o.values.empty()) o.partials = device_tensor(o.values, s.slices, int64_t{s.rows} * s.cols, s.offset);
      o.alone = Tensor::full({std::max(s.rows * s.cols, 1)}, NAN, Device::cuda());
      o.together = Tensor::full({std::max(s.rows * s.cols, 1)}, NAN, Device::cuda());
      return o;
    };
    auto sums = [](const Sum& s, const Operand& o, const Tensor& out) {
      return mm::PartialSums{o.partials.defined() ? o.partials.data<float>() : nullptr, s.slices, s.rows, s.cols,
                             out.data<float>(), s.cols};
    };
    Operand first = make(pair.first), second = make(pair.second);
    mm::add_partials(sums(pair.first, first, first.alone), {}, cuda::stream());
    mm::add_partials(sums(pair.second, second, second.alone), {}, cuda::stream());
    mm::add_partials(sums(pair.first, first, first.together), sums(pair.second, second, second.together),
                     cuda::stream());
    if (pair.first.rows > 0) CHECK(first.together.to_vector() == first.alone.to_vector());
    if (pair.second.rows > 0 && pair.second_as_alone) CHECK(second.together.to_vector() == second.alone.to_vector());
    const std::vector<float> got = second.together.to_vector();
    const int64_t n = int64_t{pair.second.rows} * pair.second.cols;
    for (int64_t i = 0; i < n; ++i) {
      double sum = 0.0, magnitude = 0.0;
      for (int z = 0; z < pair.second.slices; ++z) {
        const double v = second.values[static_cast<size_t>(z * n + i)];
        sum += v;
        magnitude += std::abs(v);
      }
      CHECK(std::abs(got[static_cast<size_t>(i)] - sum) <= pair.second.slices * U * magnitude);
    }
  }
}

// small_splitk in every branch: one K slice or many (k_slice 32: one K tile each; 48: a
// partial tile inside the K range; 128: four tiles, the two-tiles-ahead loads wrapping around),
// slices of unequal depth, tails in M, N and K, rows off a 16-byte boundary (scalar loads),
// all transposes, alpha and beta.
TEST_CASE("small_splitk matches a double reference in FP32 and TF32, and leaves its counters at zero") {
  Generator rng(5);
  const Tensor counters = Tensor::zeros({mm::SMALL_SPLITK_COUNTERS}, DType::I32, Device::cuda());
  std::vector<Case> cases(std::begin(CASES), std::end(CASES));
  for (const Case& c : {Case{32, 128, 784}, Case{32, 10, 128}, Case{784, 128, 32}, Case{32, 128, 10}})
    cases.push_back(c);
  const bool has_tf32 = cuda::device_caps().kernels.tf32_mma;
  for (const Case& c : cases) {
    for (int t = 0; t < 4; ++t) {
      for (const int k_slice : {0, 32, 48, 128}) {
        for (const bool tf32 : {false, true}) {
          if (tf32 && !has_tf32) continue;
          check_small_splitk(c, (t & 1) != 0, (t & 2) != 0, k_slice, 0, 1.0f, 0.0f, tf32, rng, counters);
          check_small_splitk(c, (t & 1) != 0, (t & 2) != 0, k_slice, 1, -0.5f, 0.75f, tf32, rng, counters);
        }
      }
    }
  }
  // CIFAR's dense layer, the deep product the engine gives the TF32 form, in 16 slices.
  for (const bool tf32 : {false, true})
    if (!tf32 || has_tf32)
      check_small_splitk(Case{100, 128, 8192}, false, false, 512, 0, 1.0f, 0.0f, tf32, rng, counters);
}

// The engine's own matmul picks a kernel by shape (kernels/matmul.cu): small_splitk for small
// outputs and shallow K, large ones in FP32 (two tile sizes), large ones on TF32 tensor cores
// with set_tf32; each with its split-K. The seed models' shapes (kernels/matmul/small_splitk.cu),
// odd sizes, and shapes for each large kernel (1030 x 4000 x 36: a wave of 128 x 256 tiles,
// ragged edges, K % 4 == 0, so --tf32 takes v11 after K-major copies of the operands stored
// the other way; at odd t the operand v11 reads in place is off 16 bytes: v9); the CNNs' Dense
// products of a few rows, deep (100 x 128 x 8192) and wide (100 x 8192 x 128), which take v9
// under TF32 (gpu_matmul_few_rows_tf32); every transpose with beta != 0 (operands off a
// 16-byte boundary for odd t), and beta = 0 into a C of NaNs.
TEST_CASE("engine matmul: the kernel chosen for each shape, FP32 and TF32") {
  Generator rng(11);
  DeviceServices& gpu = device_services(Device::cuda());
  const Case shapes[] = {{32, 128, 784}, {32, 10, 128},     {784, 128, 32},  {32, 128, 10},
                         {32, 1000, 1000}, {1000, 1000, 32}, {100, 128, 8192}, {7, 13, 5},
                         {33, 65, 129},  {1000, 1, 1000},   {600, 520, 300}, {513, 700, 600},
                         {1700, 2200, 70}, {1030, 4000, 36}, {100, 8192, 128}};
  for (const bool tf32 : {false, true}) {
    gpu.set_tf32(tf32);
    for (const Case& c : shapes) {
      for (int run = 0; run < 5; ++run) {
        const int t = run % 4;
        const float beta = run < 4 ? 0.75f : 0.0f;  // run 4: transposes as run 0, beta 0
        const Problem p = random_problem(c, (t & 1) != 0, (t & 2) != 0, 1.5f, beta, rng);
        const int64_t offset = t % 2;
        const Tensor a = device_tensor(p.a, p.a_rows(), p.a_cols(), offset);
        const Tensor b = device_tensor(p.b, p.b_rows(), p.b_cols(), offset);
        Tensor out = beta == 0.0f ? Tensor::full({c.M, c.N}, NAN, Device::cuda())
                                  : Tensor::from_vector(p.c0, {c.M, c.N}, Device::cuda());
        raw::matmul(a, p.ta, b, p.tb, out, p.alpha, p.beta);
        expect_matches_reference(p, out.to_vector(), tf32, tf32 ? "engine tf32" : "engine fp32");
      }
    }
  }
  gpu.set_tf32(false);
}

// The CNNs' Dense layers' backward products under TF32 (gpu_matmul_dense_backward_as_conv):
// on Hopper the convolutions' kernels, as a 1 x 1 convolution's backward-data pass (dX = dY
// W^T) and filter gradient (dW = X^T dY); elsewhere, and with alpha or beta of their own or
// operands off 16 bytes, the ladder's kernels. C starts as NaNs: every element is written.
TEST_CASE("engine matmul: a Dense layer's backward products as 1x1 convolutions, TF32") {
  Generator rng(17);
  DeviceServices& gpu = device_services(Device::cuda());
  gpu.set_tf32(true);
  struct Product {
    Case shape;
    bool ta, tb;
  };
  for (const Product& d : {Product{{100, 8192, 128}, false, true}, Product{{8192, 128, 100}, true, false},
                           Product{{128, 9216, 128}, false, true}, Product{{9216, 128, 128}, true, false},
                           Product{{64, 8192, 160}, false, true}, Product{{8192, 160, 64}, true, false}}) {
    for (const int64_t offset : {0, 1}) {
      INFO(d.shape.M, "x", d.shape.N, "x", d.shape.K, " ta ", d.ta, " tb ", d.tb, " offset ", offset);
      const Problem p = random_problem(d.shape, d.ta, d.tb, 1.0f, 0.0f, rng);
      const Tensor a = device_tensor(p.a, p.a_rows(), p.a_cols(), offset);
      const Tensor b = device_tensor(p.b, p.b_rows(), p.b_cols(), offset);
      Tensor out = Tensor::full({d.shape.M, d.shape.N}, NAN, Device::cuda());
      raw::matmul(a, p.ta, b, p.tb, out, 1.0f, 0.0f);
      expect_matches_reference(p, out.to_vector(), true, "dense backward tf32");
    }
  }
  gpu.set_tf32(false);
}

// Split-K's tile counters are reset by the kernel itself (kernels/matmul/small_splitk.cu). Were
// one left non-zero, no block of the next call would find itself last, and C would keep what
// it held: here NaNs. So: a call, a second call into a C of NaNs, and a graph of both (fill,
// matmul) replayed twice, each giving the first call's bits.
TEST_CASE("engine matmul: the same split-K call twice, and replayed twice in a graph") {
  Generator rng(13);
  DeviceServices& gpu = device_services(Device::cuda());
  gpu.set_tf32(false);
  for (const Case& c : {Case{32, 10, 128}, Case{33, 65, 129}, Case{32, 1000, 1000}, Case{100, 128, 8192}}) {
    INFO(c.M, "x", c.N, "x", c.K);
    const Problem p = random_problem(c, false, false, 1.0f, 0.0f, rng);
    const Tensor a = Tensor::from_vector(p.a, {p.a_rows(), p.a_cols()}, Device::cuda());
    const Tensor b = Tensor::from_vector(p.b, {p.b_rows(), p.b_cols()}, Device::cuda());
    Tensor out = Tensor::full({c.M, c.N}, NAN, Device::cuda());
    raw::matmul(a, false, b, false, out, 1.0f, 0.0f);
    const std::vector<float> first = out.to_vector();
    expect_matches_reference(p, first, false, "first call");

    raw::fill(out, NAN);
    raw::matmul(a, false, b, false, out, 1.0f, 0.0f);
    CHECK(out.to_vector() == first);  // NaN != NaN: an unwritten element fails

    const std::unique_ptr<StepGraph> graph = gpu.capture([&] {
      raw::fill(out, NAN);
      raw::matmul(a, false, b, false, out, 1.0f, 0.0f);
    });
    REQUIRE(graph != nullptr);
    for (int replay = 0; replay < 2; ++replay) {
      graph->replay();
      CHECK(out.to_vector() == first);
    }
  }
}
