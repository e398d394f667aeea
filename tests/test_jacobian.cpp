// jacobian() on the CPU: every strategy against central differences in double on small nets
// (row-wise MLPs, functions that mix rows, transposed operands, elementwise products, a
// bias that depends on x, scalar outputs, softmax), the strategies against each other on the
// seed-001 MLP at val=100, the memory limit, the loop's estimate and refusal, and the two
// raw:: ops the strategies are built from (elementwise_jvp, strided_copy).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"
#include "nn/jacobian.h"
#include "nn/layers.h"
#include "nn/sequential.h"
#include "tests/jacobian_reference.h"

using namespace engine;
using jacobian_test::Case;
using nn::JacobianMode;
using nn::JacobianOptions;
using nn::JacobianStats;

using jacobian_test::check_case_against_reference;
using jacobian_test::label;
using jacobian_test::ModeCase;
using jacobian_test::TOLERANCE;

TEST_CASE("jacobian: every mode matches central differences in double, several nets") {
  const Device cpu = Device::cpu();
  const std::vector<Case> cases = {
      jacobian_test::mlp_case("mlp 3-4(tanh)-6(sigmoid)-2", 5, 3, 4, Activation::Tanh, 6,
                              Activation::Sigmoid, 2, 1, cpu),
      jacobian_test::mlp_case("mlp 2-5(relu)-3(tanh)-7", 4, 2, 5, Activation::Relu, 3,
                              Activation::Tanh, 7, 2, cpu),
      jacobian_test::mlp_case("mlp 1-20(tanh)-20(tanh)-9, the seed's shape", 6, 1, 20,
                              Activation::Tanh, 20, Activation::Tanh, 9, 3, cpu),
      jacobian_test::mixing_case(cpu),
      jacobian_test::transpose_case(cpu),
      jacobian_test::elementwise_case(),
      jacobian_test::bias_from_x_case(cpu),
      jacobian_test::scalar_case(cpu),
      jacobian_test::softmax_case(false, cpu),
      jacobian_test::softmax_case(true, cpu),
  };
  for (const Case& c : cases) check_case_against_reference(c, cpu);
}

TEST_CASE("jacobian: auto picks per-sample forward for a declared row-wise net, dense otherwise") {
  const Case c = jacobian_test::mlp_case("mlp", 5, 1, 4, Activation::Tanh, 4, Activation::Tanh, 7,
                                         4, Device::cpu());
  const Tensor x = Tensor::from_vector(jacobian_test::to_floats(c.x), c.x_shape);
  JacobianStats stats;
  JacobianOptions rowwise;
  rowwise.rowwise = true;
  nn::jacobian(c.f, x, rowwise, &stats);
  CHECK(stats.strategy == "forward, per-sample");
  CHECK(stats.directions == 1);  // one tangent of ones gives every row's derivative
  nn::jacobian(c.f, x, {}, &stats);
  CHECK(stats.strategy == "forward, dense");  // 5 inputs, 35 outputs
  // More inputs than outputs: reverse.
  const Case wide = jacobian_test::mlp_case("wide", 3, 6, 4, Activation::Tanh, 4, Activation::Tanh,
                                            2, 5, Device::cpu());
  const Tensor xw = Tensor::from_vector(jacobian_test::to_floats(wide.x), wide.x_shape);
  nn::jacobian(wide.f, xw, {}, &stats);
  CHECK(stats.strategy == "reverse, dense");
  nn::jacobian(wide.f, xw, rowwise, &stats);
  CHECK(stats.strategy == "reverse, per-sample");
  CHECK(stats.directions == 2);
}

TEST_CASE("jacobian: an op without a forward rule: forward mode says which, auto uses reverse") {
  const Case c = jacobian_test::softmax_case(true, Device::cpu());
  const Tensor x = Tensor::from_vector(jacobian_test::to_floats(c.x), c.x_shape);
  JacobianOptions forward;
  forward.mode = JacobianMode::Forward;
  CHECK_THROWS_WITH_AS(nn::jacobian(c.f, x, forward),
                       doctest::Contains("'log_softmax' has none"), engine::Error);
  JacobianStats stats;
  nn::jacobian(c.f, x, {}, &stats);  // 6 inputs < 15 outputs would pick forward
  CHECK(stats.strategy == "reverse, dense");
}

TEST_CASE("jacobian: identity, a constant, and a function of part of its work") {
  const Tensor x = Tensor::from_vector({0.5f, -1.0f, 2.0f, 3.0f}, {2, 2});
  for (JacobianMode mode : {JacobianMode::Loop, JacobianMode::Reverse, JacobianMode::Forward}) {
    JacobianOptions o;
    o.mode = mode;
    const std::vector<float> id = nn::jacobian([](const Tensor& t) { return t; }, x, o).to_vector();
    for (size_t i = 0; i < 16; ++i) CHECK(id[i] == (i % 5 == 0 ? 1.0f : 0.0f));
    const Tensor c = Tensor::full({3}, 7.0f);
    JacobianStats stats;
    const Tensor J = nn::jacobian([&](const Tensor&) { return c; }, x, o, &stats);
    CHECK(J.shape() == Shape{3, 2, 2});
    for (float v : J.to_vector()) CHECK(v == 0.0f);
    CHECK(stats.strategy == "none: f(x) does not depend on x");
  }
}

TEST_CASE("jacobian: bad requests are one-line errors") {
  const Tensor x = Tensor::from_vector({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2});
  JacobianOptions blocks;
  blocks.blocks = true;
  CHECK_THROWS_WITH_AS(nn::jacobian([](const Tensor& t) { return t; }, x, blocks),
                       doctest::Contains("blocks need a rowwise function"), engine::Error);
  JacobianOptions rowwise;
  rowwise.rowwise = true;
  CHECK_THROWS_WITH_AS(nn::jacobian([](const Tensor& t) { return engine::sum(t); }, x, rowwise),
                       doctest::Contains("same number of rows"), engine::Error);
}

TEST_CASE("jacobian: records f even inside a NoGradGuard") {
  const Case c = jacobian_test::elementwise_case();
  const Tensor x = Tensor::from_vector(jacobian_test::to_floats(c.x), c.x_shape);
  NoGradGuard no_grad;
  const std::vector<float> J = nn::jacobian(c.f, x).to_vector();
  CHECK(jacobian_test::normwise_error(J, jacobian_test::finite_difference_jacobian(c)) <= TOLERANCE);
  CHECK_FALSE(grad_enabled());
}

TEST_CASE("jacobian: the memory limit sets the chunk size and holds") {
  const Case c = jacobian_test::mixing_case(Device::cpu());
  const Tensor x = Tensor::from_vector(jacobian_test::to_floats(c.x), c.x_shape);
  for (JacobianMode mode : {JacobianMode::Reverse, JacobianMode::Forward}) {
    INFO("mode: ", nn::to_string(mode));
    JacobianOptions o;
    o.mode = mode;
    JacobianStats whole, tiny, limited;
    const std::vector<float> reference = nn::jacobian(c.f, x, o, &whole).to_vector();
    CHECK(whole.chunks == 2);  // one direction to measure, then the rest in one chunk

    o.memory_limit = 1;  // below one direction's needs: one direction per chunk
    const std::vector<float> one_by_one = nn::jacobian(c.f, x, o, &tiny).to_vector();
    CHECK(tiny.chunks == tiny.directions);
    CHECK(tiny.directions_per_chunk == 1);
    CHECK(one_by_one == reference);  // the same arithmetic per direction, in any chunking

    const size_t per_direction = tiny.working_set_bytes;
    REQUIRE(per_direction > 0);
    o.memory_limit = 3 * per_direction;
    const std::vector<float> in_threes = nn::jacobian(c.f, x, o, &limited).to_vector();
    CHECK(limited.directions_per_chunk == 3);
    CHECK(limited.working_set_bytes <= o.memory_limit);
    CHECK(limited.chunks == 1 + (limited.directions - 1 + 2) / 3);
    CHECK(in_threes == reference);
  }
}

TEST_CASE("jacobian: the loop estimates its total, can be refused, and draws progress") {
  const Case c = jacobian_test::mlp_case("mlp", 8, 1, 5, Activation::Tanh, 5, Activation::Tanh, 30,
                                         6, Device::cpu());
  const Tensor x = Tensor::from_vector(jacobian_test::to_floats(c.x), c.x_shape);
  jacobian_test::check_loop_refused(c.f, x, 240);  // one backward pass per output element

  JacobianOptions o;
  o.mode = JacobianMode::Loop;
  JacobianStats stats;
  std::ostringstream progress;
  o.progress = &progress;
  o.confirm_loop = [](const nn::LoopEstimate&) { return true; };
  const Tensor J = nn::jacobian(c.f, x, o, &stats);
  CHECK(stats.completed);
  CHECK(stats.directions == 240);
  CHECK(progress.str().find("240/240 [==============================]") != std::string::npos);
  CHECK(jacobian_test::normwise_error(J.to_vector(), jacobian_test::finite_difference_jacobian(c)) <=
        TOLERANCE);
}

// The seed network on the CPU: at val=100 every mode but the loop against per-sample forward
// mode; the loop's 40,000 backward passes take seconds on a small CPU, so it runs at val=25
// here (10,000 passes) and at val=100 in tests/test_gpu_jacobian.cpp.
TEST_CASE("jacobian: the seed MLP at val=100, every mode against the others (the loop at 25)") {
  // Linear(1, 20) -> tanh -> Linear(20, 20) -> tanh -> Linear(20, 400), input (val, 1).
  nn::Sequential model{nn::dense(20, Activation::Tanh), nn::dense(20, Activation::Tanh),
                       nn::dense(400)};
  model.build({1}, Device::cpu(), 42);
  auto f = [&](const Tensor& in) {
    nn::ForwardContext ctx;
    return model.forward(in, ctx);
  };
  for (const int64_t val : {int64_t{100}, int64_t{25}}) {
    INFO("val ", val);
    engine::Generator rng(5);
    const Tensor t = Tensor::from_vector(
        jacobian_test::to_floats(jacobian_test::uniform(rng, val, 0.0, 1.0)), {val, 1});
    JacobianOptions rowwise;
    rowwise.rowwise = true;
    JacobianStats stats;
    const Tensor reference = nn::jacobian(f, t, rowwise, &stats);
    CHECK(stats.strategy == "forward, per-sample");
    CHECK(reference.shape() == Shape{val, 400, val, 1});
    const std::vector<float> ref = reference.to_vector();
    const std::vector<double> ref_d(ref.begin(), ref.end());
    const std::vector<ModeCase> modes =
        val == 100 ? std::vector<ModeCase>{{JacobianMode::Reverse, false, false},
                                           {JacobianMode::Forward, false, false},
                                           {JacobianMode::Reverse, true, false}}
                   : std::vector<ModeCase>{{JacobianMode::Loop, false, false}};
    for (const ModeCase& m : modes) {
      INFO("mode: ", label(m));
      JacobianOptions o;
      o.mode = m.mode;
      o.rowwise = m.rowwise;
      o.memory_limit = size_t{64} << 20;  // dense reverse: 40,000 directions, ~400 per chunk
      const std::vector<float> J = nn::jacobian(f, t, o).to_vector();
      // Different summation orders of the same float32 products: a few U of the largest entry.
      CHECK(jacobian_test::normwise_error(J, ref_d) <= 1e-5);
    }
    // The blocks are the dense J's diagonal, bit for bit (the same tangents, placed twice),
    // and off the diagonal J holds exact zeros.
    rowwise.blocks = true;
    const Tensor blocks = nn::jacobian(f, t, rowwise);
    CHECK(blocks.shape() == Shape{val, 400, 1});
    const std::vector<float> b = blocks.to_vector();
    CHECK(std::vector<double>(b.begin(), b.end()) == jacobian_test::diagonal_blocks(ref_d, val, 400, 1));
    int64_t nonzero_off_diagonal = 0;
    for (int64_t i = 0; i < val * 400 * val; ++i) {
      const int64_t m = i % val, n = i / val / 400;
      if (m != n && ref[static_cast<size_t>(i)] != 0.0f) ++nonzero_off_diagonal;
    }
    CHECK(nonzero_off_diagonal == 0);
  }
}

// ---- the two raw:: ops --------------------------------------------------------------------

TEST_CASE("elementwise_jvp: each activation's derivative and a product, K directions, in place") {
  engine::Generator rng(31);
  const std::vector<double> y = jacobian_test::uniform(rng, 7, -0.9, 0.9);  // valid tanh outputs
  const std::vector<double> t = jacobian_test::uniform(rng, 21, -2.0, 2.0);  // K = 3
  const Tensor yt = Tensor::from_vector(jacobian_test::to_floats(y), {7});
  const Tensor tt = Tensor::from_vector(jacobian_test::to_floats(t), {3, 7});
  for (Activation act : {Activation::Relu, Activation::Tanh, Activation::Sigmoid, Activation::None}) {
    Tensor out = Tensor::empty({3, 7});
    raw::elementwise_jvp(act, yt, tt, out);
    const std::vector<float> got = out.to_vector();
    for (size_t k = 0; k < 3; ++k) {
      for (size_t i = 0; i < 7; ++i) {
        const float yi = static_cast<float>(y[i]);
        const float d = act == Activation::Relu   ? (yi > 0.0f ? 1.0f : 0.0f)
                        : act == Activation::Tanh ? 1.0f - yi * yi
                        : act == Activation::Sigmoid ? yi * (1.0f - yi)
                                                     : yi;
        CHECK(got[k * 7 + i] == d * static_cast<float>(t[k * 7 + i]));
      }
    }
    Tensor in_place = tt.clone();
    raw::elementwise_jvp(act, yt, in_place, in_place);
    CHECK(in_place.to_vector() == got);
  }
}

TEST_CASE("strided_copy: transpose, diagonal scatter, broadcast of one element, bounds") {
  const Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = Tensor::full({3, 2}, -1.0f);
  raw::strided_copy(x, t, {2, 3, 1}, Walk3d{0, {3, 1, 0}}, Walk3d{0, {1, 2, 0}});  // transpose
  CHECK(t.to_vector() == std::vector<float>{1, 4, 2, 5, 3, 6});

  Tensor diag = Tensor::zeros({3, 3});
  const Tensor v = Tensor::from_vector({7, 8, 9}, {3});
  raw::strided_copy(v, diag, {3, 1, 1}, Walk3d{0, {1, 0, 0}}, Walk3d{0, {4, 0, 0}});
  CHECK(diag.to_vector() == std::vector<float>{7, 0, 0, 0, 8, 0, 0, 0, 9});

  // A one-hot basis (K = 2 directions, R = 2 rows, C = 3 columns, start 1): the one element
  // with stride 0, onto [k, r, 1 + k].
  Tensor basis = Tensor::zeros({2, 2, 3});
  raw::strided_copy(Tensor::full({1}, 1.0f), basis, {2, 2, 1}, Walk3d{0, {0, 0, 0}},
                    Walk3d{1, {2 * 3 + 1, 3, 0}});
  CHECK(basis.to_vector() == std::vector<float>{0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1});

  CHECK_THROWS_WITH_AS(
      raw::strided_copy(x, t, {2, 3, 1}, Walk3d{0, {3, 1, 0}}, Walk3d{1, {1, 2, 0}}),
      doctest::Contains("destination walk reaches element 6"), engine::Error);
  CHECK_THROWS_WITH_AS(
      raw::strided_copy(x, t, {1, 7, 1}, Walk3d{0, {0, 1, 0}}, Walk3d{0, {0, 0, 0}}),
      doctest::Contains("source walk reaches element 6"), engine::Error);
  Tensor same = x.view({6});
  CHECK_THROWS_WITH_AS(raw::strided_copy(x, same, {1, 1, 1}, Walk3d{}, Walk3d{}),
                       doctest::Contains("share storage"), engine::Error);
  // An empty walk does nothing, whatever its strides.
  raw::strided_copy(x, t, {0, 5, 5}, Walk3d{100, {9, 9, 9}}, Walk3d{100, {9, 9, 9}});
  CHECK(t.to_vector() == std::vector<float>{1, 4, 2, 5, 3, 6});
}
