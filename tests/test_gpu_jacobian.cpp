// Jacobians on the GPU: the two raw:: ops they are built from (elementwise_jvp,
// strided_copy) on GPU tensors against the same ops on CPU tensors, every strategy against
// central differences in double on the test nets of tests/jacobian_reference.h, the seed-001
// MLP at val=100 with every mode against the others (the loop's 40,000 backward passes and
// the dense reverse mode's 64 GFLOP are quick here, slow on a small CPU), the memory limit,
// and the seed's val=1000 Jacobian (1.6 GB) against the CPU's blocks. Without a GPU,
// gpu_skip_main.cpp exits 77 before any test runs (ctest: "Skipped"), and every case starts
// with gpu_or_skip().
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/device_services.h"
#include "core/ops.h"
#include "core/rng.h"
#include "nn/jacobian.h"
#include "nn/layers.h"
#include "nn/sequential.h"
#include "tests/jacobian_reference.h"

using namespace engine;
using nn::JacobianMode;
using nn::JacobianOptions;
using nn::JacobianStats;

namespace {

constexpr double U = 1.0 / 16777216.0;  // float32 unit roundoff, 2^-24

bool gpu_or_skip() {
  std::string why;
  if (device_available(Device::cuda(), &why)) return true;
  MESSAGE("SKIPPED: no GPU (", why, ") - GPU Jacobians not tested");
  std::fprintf(stderr, "*** GPU TEST SKIPPED: no GPU: %s ***\n", why.c_str());
  return false;
}

std::vector<float> uniform(Generator& rng, int64_t n, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = lo + (hi - lo) * rng.uniform();
  return v;
}

// The seed's network on `device` with the same weights everywhere (same build seed).
nn::Sequential seed_mlp(Device device) {
  nn::Sequential model{nn::dense(20, Activation::Tanh), nn::dense(20, Activation::Tanh),
                       nn::dense(400)};
  model.build({1}, device, 42);
  return model;
}

std::function<Tensor(const Tensor&)> forward_of(nn::Sequential& model) {
  return [&model](const Tensor& in) {
    nn::ForwardContext ctx;
    return model.forward(in, ctx);
  };
}

// max|a - b| / max|b| over two float vectors.
double normwise(const std::vector<float>& a, const std::vector<float>& b) {
  return jacobian_test::normwise_error(a, std::vector<double>(b.begin(), b.end()));
}

}  // namespace

TEST_CASE("gpu parity: elementwise_jvp, every activation and a product, K directions, in place") {
  if (!gpu_or_skip()) return;
  Generator rng(41);
  // (n, K): one element; odd sizes; many directions of a few elements (the grid's y axis);
  // few directions of many elements.
  for (const auto& size : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {7, 3}, {1000, 1}, {33, 700}, {20000, 5}, {257, 70000}}) {
    const int64_t n = size.first, K = size.second;  // not a binding: INFO's lambda captures them
    for (Activation act : {Activation::Relu, Activation::Tanh, Activation::Sigmoid, Activation::None}) {
      INFO("n ", n, ", K ", K, ", act ", static_cast<int>(act));
      // y: a valid output of the activation (tanh in (-1, 1), sigmoid in (0, 1), relu >= 0
      // with exact zeros), any value for a product.
      std::vector<float> y = uniform(rng, n, -2.0f, 2.0f);
      for (float& v : y) {
        if (act == Activation::Relu) v = std::max(v, 0.0f);
        if (act == Activation::Tanh) v = std::tanh(v);
        if (act == Activation::Sigmoid) v = 1.0f / (1.0f + std::exp(-v));
      }
      const std::vector<float> t = uniform(rng, n * K, -3.0f, 3.0f);
      Tensor out_cpu = Tensor::empty({K, n});
      raw::elementwise_jvp(act, Tensor::from_vector(y, {n}), Tensor::from_vector(t, {K, n}),
                           out_cpu);
      const Tensor y_gpu = Tensor::from_vector(y, {n}, Device::cuda());
      const Tensor t_gpu = Tensor::from_vector(t, {K, n}, Device::cuda());
      Tensor out_gpu = Tensor::full({K, n}, std::numeric_limits<float>::quiet_NaN(), Device::cuda());
      raw::elementwise_jvp(act, y_gpu, t_gpu, out_gpu);
      Tensor in_place = t_gpu.clone();
      raw::elementwise_jvp(act, y_gpu, in_place, in_place);
      const std::vector<float> c = out_cpu.to_vector(), g = out_gpu.to_vector();
      CHECK(in_place.to_vector() == g);
      // The derivative 1 - y^2 or y (1 - y) may be fused into an FMA on one side: up to U
      // absolute in d (cancellation near |y| = 1) and 2U relative each for d and the product,
      // so |diff| <= 4U (|out| + |t|); relu and the product are single roundings: exact.
      const bool exact = act == Activation::Relu || act == Activation::None;
      int64_t bad = 0;
      for (size_t i = 0; i < c.size(); ++i) {
        const double bound = exact ? 0.0 : 4 * U * (std::fabs(c[i]) + std::fabs(t[i]));
        if (!(std::fabs(static_cast<double>(g[i]) - c[i]) <= bound)) ++bad;
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("gpu parity: strided_copy, bit for bit: transposes, diagonals, broadcasts, large") {
  if (!gpu_or_skip()) return;
  Generator rng(43);
  struct Walks {
    std::array<int64_t, 3> extent;
    Walk3d from, to;
    int64_t x_size, y_size;
  };
  const int64_t big = (int64_t{1} << 24) + 1000;  // past one grid's worth of threads
  const std::vector<Walks> walks = {
      {{2, 3, 1}, {0, {3, 1, 0}}, {0, {1, 2, 0}}, 6, 6},                   // transpose
      {{37, 5, 3}, {2, {15, 3, 1}}, {1, {1, 111, 37}}, 600, 600},          // a permutation
      {{1, 1000, 7}, {0, {0, 7, 1}}, {0, {0, 1 + 1000 * 7, 1000}}, 7000, 7 * 1000 * 1000 + 7},
      {{3, 50, 1}, {0, {0, 0, 0}}, {4, {50 * 20 + 1, 20, 0}}, 1, 3 * 50 * 20},  // a one-hot basis
      {{4096, 4097, 1}, {0, {4097, 1, 0}}, {0, {1, 4096, 0}}, 4096 * 4097, 4096 * 4097},
      // Chunk of forward tangents into columns 3.. of a wider J: a transpose with offsets.
      {{5, 1001, 1}, {2, {1001, 1, 0}}, {3, {1, 37, 0}}, 5 * 1001 + 2, 37 * 1001 + 3},
      {{1, big, 1}, {0, {0, 1, 0}}, {3, {0, 1, 0}}, big, big + 3},
  };
  for (const Walks& w : walks) {
    INFO("extent ", w.extent[0], " x ", w.extent[1], " x ", w.extent[2]);
    for (DType dtype : {DType::F32, DType::I32}) {
      const std::vector<float> xs = uniform(rng, w.x_size, -5.0f, 5.0f);
      std::vector<int32_t> xi(xs.size());
      for (size_t i = 0; i < xs.size(); ++i) xi[i] = static_cast<int32_t>(xs[i] * 1000.0f);
      auto make = [&](Device d) {
        return dtype == DType::F32 ? Tensor::from_vector(xs, {w.x_size}, d)
                                   : Tensor::from_ints(xi, {w.x_size}, d);
      };
      // Untouched elements keep their poison on both sides.
      Tensor y_cpu = Tensor::zeros({w.y_size}, dtype), y_gpu = Tensor::zeros({w.y_size}, dtype, Device::cuda());
      raw::fill(y_cpu, -7.0f);
      raw::fill(y_gpu, -7.0f);
      raw::strided_copy(make(Device::cpu()), y_cpu, w.extent, w.from, w.to);
      raw::strided_copy(make(Device::cuda()), y_gpu, w.extent, w.from, w.to);
      if (dtype == DType::F32) {
        CHECK(y_gpu.to_vector() == y_cpu.to_vector());
      } else {
        CHECK(y_gpu.to_int_vector() == y_cpu.to_int_vector());
      }
    }
  }
}

TEST_CASE("gpu jacobian: every mode matches central differences in double, several nets") {
  if (!gpu_or_skip()) return;
  const Device gpu = Device::cuda();
  const std::vector<jacobian_test::Case> cases = {
      jacobian_test::mlp_case("mlp 3-4(tanh)-6(sigmoid)-2", 5, 3, 4, Activation::Tanh, 6,
                              Activation::Sigmoid, 2, 1, gpu),
      jacobian_test::mlp_case("mlp 2-5(relu)-3(tanh)-7", 4, 2, 5, Activation::Relu, 3,
                              Activation::Tanh, 7, 2, gpu),
      jacobian_test::mlp_case("mlp 1-20(tanh)-20(tanh)-9", 6, 1, 20, Activation::Tanh, 20,
                              Activation::Tanh, 9, 3, gpu),
      jacobian_test::mixing_case(gpu),
      jacobian_test::transpose_case(gpu),
      jacobian_test::elementwise_case(),
      jacobian_test::bias_from_x_case(gpu),
      jacobian_test::scalar_case(gpu),
      jacobian_test::softmax_case(false, gpu),
      jacobian_test::softmax_case(true, gpu),
  };
  for (const jacobian_test::Case& c : cases) jacobian_test::check_case_against_reference(c, gpu);
}

namespace {
// The seed MLP's J at val=100 on the GPU in `mode` against the CPU's, rowwise or dense.
void check_seed_mlp_at_val_100(JacobianMode mode, bool rowwise) {
  nn::Sequential cpu_model = seed_mlp(Device::cpu());
  nn::Sequential gpu_model = seed_mlp(Device::cuda());
  Generator rng(5);
  const std::vector<float> t = uniform(rng, 100, 0.0f, 1.0f);
  const Tensor t_cpu = Tensor::from_vector(t, {100, 1});
  const Tensor t_gpu = Tensor::from_vector(t, {100, 1}, Device::cuda());
  JacobianOptions by_rows;
  by_rows.rowwise = true;
  const std::vector<float> reference = nn::jacobian(forward_of(cpu_model), t_cpu, by_rows).to_vector();
  JacobianOptions o;
  o.mode = mode;
  o.rowwise = rowwise;
  // The loop's estimate after its first passes: under compute-sanitizer, the log then says how
  // long the whole loop would take even when the run is cut before the end.
  o.confirm_loop = [](const nn::LoopEstimate& e) {
    std::fprintf(stderr, "loop: %lld passes, %.3g ms each over the first %lld: %.0f s in all\n",
                 static_cast<long long>(e.passes), e.seconds_per_pass * 1e3,
                 static_cast<long long>(e.timed_passes), e.total_seconds);
    return true;
  };
  JacobianStats stats;
  const Tensor J = nn::jacobian(forward_of(gpu_model), t_gpu, o, &stats);
  INFO("strategy: ", stats.strategy);
  REQUIRE(J.shape() == Shape{100, 400, 100, 1});
  // The same float32 products, summed in other orders and with other tanh roundings: a few
  // U of the largest entry (measured ~1e-7).
  CHECK(normwise(J.to_vector(), reference) <= 1e-5);
}
}  // namespace

TEST_CASE("gpu jacobian: the seed MLP at val=100, every batched mode against the CPU") {
  if (!gpu_or_skip()) return;
  // Subcases, so that racecheck can take the dense modes (64 GFLOP in reverse) apart.
  SUBCASE("auto per-sample") { check_seed_mlp_at_val_100(JacobianMode::Auto, true); }
  SUBCASE("reverse per-sample") { check_seed_mlp_at_val_100(JacobianMode::Reverse, true); }
  SUBCASE("forward dense") { check_seed_mlp_at_val_100(JacobianMode::Forward, false); }
  SUBCASE("reverse dense") { check_seed_mlp_at_val_100(JacobianMode::Reverse, false); }
}

// The seed's way: one backward pass per output, 40,000 of them. Its kernels are the batched
// modes' (and the loop's on small nets, in the central-differences case); its size makes it the
// slowest case under compute-sanitizer, which scripts/gpu/sanitize.sh runs on its own.
TEST_CASE("gpu jacobian: the seed MLP at val=100, the loop of backward passes against the CPU") {
  if (!gpu_or_skip()) return;
  check_seed_mlp_at_val_100(JacobianMode::Loop, false);
}

// The loop's first passes at the seed's shapes, then a refusal of the rest: what a user who
// answers "no" to the estimate gets, and the loop's kernels for racecheck, which would need
// hours for all 40,000 passes (its own estimate under racecheck: 231 ms a pass, H100).
TEST_CASE("gpu jacobian: the seed MLP at val=100, the loop estimates its total and can be refused") {
  if (!gpu_or_skip()) return;
  nn::Sequential model = seed_mlp(Device::cuda());
  Generator rng(8);
  const Tensor t = Tensor::from_vector(uniform(rng, 100, 0.0f, 1.0f), {100, 1}, Device::cuda());
  const nn::LoopEstimate seen = jacobian_test::check_loop_refused(forward_of(model), t, 40000);
  CHECK(seen.timed_passes <= 200);
}

TEST_CASE("gpu jacobian: the memory limit sets the chunk size and holds on the device") {
  if (!gpu_or_skip()) return;
  nn::Sequential model = seed_mlp(Device::cuda());
  // 3 samples: a limit of 1 byte makes every direction a chunk of its own, 1,200 sweeps (dense)
  // and 400 (per-sample); compute-sanitizer could not finish the 12,000 of 30 samples in 225 s.
  Generator rng(6);
  const Tensor t = Tensor::from_vector(uniform(rng, 3, 0.0f, 1.0f), {3, 1}, Device::cuda());
  for (bool rowwise : {false, true}) {
    INFO("rowwise ", rowwise);
    JacobianOptions o;
    o.mode = JacobianMode::Reverse;
    o.rowwise = rowwise;
    const std::vector<float> reference = nn::jacobian(forward_of(model), t, o).to_vector();
    JacobianStats tiny, limited;
    o.memory_limit = 1;
    CHECK(nn::jacobian(forward_of(model), t, o, &tiny).to_vector() == reference);
    CHECK(tiny.chunks == tiny.directions);
    o.memory_limit = 5 * tiny.working_set_bytes;
    CHECK(nn::jacobian(forward_of(model), t, o, &limited).to_vector() == reference);
    CHECK(limited.directions_per_chunk == 5);
    CHECK(limited.working_set_bytes <= o.memory_limit);
  }
}

TEST_CASE("gpu jacobian: val=1000, 1.6 GB: the dense J is the CPU's blocks on a zero background") {
  if (!gpu_or_skip()) return;
  nn::Sequential cpu_model = seed_mlp(Device::cpu());
  nn::Sequential gpu_model = seed_mlp(Device::cuda());
  Generator rng(7);
  const int64_t N = 1000, O = 400;
  const std::vector<float> t = uniform(rng, N, 0.0f, 1.0f);
  JacobianOptions blocks;
  blocks.rowwise = true;
  blocks.blocks = true;
  const std::vector<float> cpu_blocks =
      nn::jacobian(forward_of(cpu_model), Tensor::from_vector(t, {N, 1}), blocks).to_vector();
  JacobianOptions dense;
  dense.rowwise = true;
  JacobianStats stats;
  const Tensor J = nn::jacobian(forward_of(gpu_model), Tensor::from_vector(t, {N, 1}, Device::cuda()),
                                dense, &stats);
  REQUIRE(J.shape() == Shape{N, O, N, 1});
  CHECK(stats.strategy == "forward, per-sample");
  // Row (n, o) of J holds the block entry at column n and zeros elsewhere.
  std::vector<float> diagonal(static_cast<size_t>(N * O));
  int64_t nonzero_off_diagonal = 0;
  for (int64_t n = 0; n < N; ++n) {
    const std::vector<float> rows = J.view({N * O * N}).slice(n * O * N, {O * N}).to_vector();
    for (int64_t o = 0; o < O; ++o) {
      for (int64_t m = 0; m < N; ++m) {
        const float v = rows[static_cast<size_t>(o * N + m)];
        if (m == n) {
          diagonal[static_cast<size_t>(n * O + o)] = v;
        } else if (v != 0.0f) {
          ++nonzero_off_diagonal;
        }
      }
    }
  }
  CHECK(nonzero_off_diagonal == 0);
  CHECK(normwise(diagonal, cpu_blocks) <= 1e-5);
}
