// Autograd semantics: accumulation, NoGradGuard, shared subgraphs, leaf grads, errors.
#include <doctest/doctest.h>

#include <cmath>

#include "core/autograd.h"
#include "core/error.h"
#include "core/ops.h"

using namespace engine;

namespace {
Tensor leaf(const std::vector<float>& values, const Shape& shape) {
  Tensor t = Tensor::from_vector(values, shape);
  t.set_requires_grad(true);
  return t;
}
}  // namespace

TEST_CASE("a tensor used twice accumulates both gradients") {
  Tensor x = leaf({1.5f, -2.0f, 3.0f}, {3});
  // L = sum(x * x + x): dL/dx = 2x + 1, reached through three uses of x.
  sum(add(mul(x, x), x)).backward();
  const std::vector<float> g = x.grad().to_vector();
  CHECK(g[0] == doctest::Approx(4.0));
  CHECK(g[1] == doctest::Approx(-3.0));
  CHECK(g[2] == doctest::Approx(7.0));
}

TEST_CASE("backward twice adds into the existing leaf gradient") {
  Tensor x = leaf({2.0f}, {1});
  sum(scale(x, 3.0f)).backward();
  sum(scale(x, 3.0f)).backward();
  CHECK(x.grad().item() == doctest::Approx(6.0));
}

TEST_CASE("backward through a shared subgraph runs each node once") {
  Tensor x = leaf({0.5f, -1.0f}, {1, 2});
  Tensor w = leaf({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2});
  // h is consumed by two branches; L = sum(tanh(h)) + sum(h * h) with h = x @ w.
  Tensor h = matmul(x, w);
  sum(add(tanh(h), mul(h, h))).backward();
  const std::vector<float> hv = h.to_vector();
  // dL/dh = (1 - tanh(h)^2) + 2h; dL/dx = dL/dh @ w^T.
  std::vector<double> dh(2);
  for (size_t i = 0; i < 2; ++i) dh[i] = 1.0 - std::tanh(hv[i]) * std::tanh(hv[i]) + 2.0 * hv[i];
  const std::vector<float> gx = x.grad().to_vector();
  CHECK(gx[0] == doctest::Approx(dh[0] * 1.0 + dh[1] * 2.0).epsilon(1e-5));
  CHECK(gx[1] == doctest::Approx(dh[0] * 3.0 + dh[1] * 4.0).epsilon(1e-5));
  const std::vector<float> gw = w.grad().to_vector();  // x^T @ dL/dh
  CHECK(gw[0] == doctest::Approx(0.5 * dh[0]).epsilon(1e-5));
  CHECK(gw[3] == doctest::Approx(-1.0 * dh[1]).epsilon(1e-5));
}

TEST_CASE("add hands one gradient tensor to both inputs without aliasing their grads") {
  Tensor a = leaf({1.0f, 2.0f}, {2});
  Tensor b = leaf({3.0f, 4.0f}, {2});
  sum(add(a, b)).backward();
  sum(scale(a, 5.0f)).backward();  // must change a's grad only
  CHECK(a.grad().to_vector()[0] == doctest::Approx(6.0));
  CHECK(b.grad().to_vector()[0] == doctest::Approx(1.0));
}

TEST_CASE("NoGradGuard records nothing and restores the previous mode") {
  Tensor x = leaf({1.0f, 2.0f}, {2});
  {
    NoGradGuard guard;
    CHECK_FALSE(grad_enabled());
    Tensor y = mul(x, x);
    CHECK_FALSE(y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
    CHECK_THROWS_AS(sum(y).backward(), Error);
  }
  CHECK(grad_enabled());
  CHECK(mul(x, x).grad_fn() != nullptr);
}

TEST_CASE("inputs that need no gradient get none") {
  Tensor x = Tensor::from_vector({1.0f, 2.0f}, {1, 2});  // data, not a parameter
  Tensor w = leaf({1.0f, 0.0f, 0.0f, 1.0f}, {2, 2});
  sum(matmul(x, w)).backward();
  CHECK_FALSE(x.grad().defined());
  CHECK(w.grad().defined());
}

TEST_CASE("backward needs a scalar or an explicit seed") {
  Tensor x = leaf({1.0f, 2.0f}, {2});
  Tensor y = scale(x, 2.0f);
  CHECK_THROWS_AS(y.backward(), Error);
  backward(y, Tensor::from_vector({1.0f, 10.0f}, {2}));
  CHECK(x.grad().to_vector()[1] == doctest::Approx(20.0));
}

TEST_CASE("a parameter's grad can be a view into a flat buffer, filled in place") {
  Tensor flat_grads = Tensor::zeros({5});
  Tensor param = leaf({1.0f, 2.0f, 3.0f}, {3});
  param.set_grad(flat_grads.slice(1, {3}));
  sum(scale(param, 2.0f)).backward();
  const std::vector<float> g = flat_grads.to_vector();
  CHECK(g[0] == 0.0f);
  CHECK(g[1] == doctest::Approx(2.0));
  CHECK(g[3] == doctest::Approx(2.0));
  CHECK(g[4] == 0.0f);
}

TEST_CASE("an overwrite-marked grad is replaced, written in place by matmul, then added to") {
  // w (2, 2) with its grad a view into a buffer holding stale values from a previous step.
  Tensor flat_grads = Tensor::from_vector({9.0f, 9.0f, 9.0f, 9.0f, 7.0f}, {5});
  Tensor w = leaf({1.0f, 2.0f, 3.0f, 4.0f}, {2, 2});
  Tensor grad_view = flat_grads.slice(0, {2, 2});
  w.set_grad(grad_view);
  const Tensor x = Tensor::from_vector({1.0f, 2.0f}, {1, 2});
  w.set_overwrite_grad(true);
  sum(matmul(x, w)).backward();  // d/dw sum(x w) = x^T 1 = [[1, 1], [2, 2]]
  CHECK(!w.overwrite_grad());
  CHECK(w.grad().raw_data() == grad_view.raw_data());  // still the same buffer
  CHECK(flat_grads.to_vector() == std::vector<float>{1.0f, 1.0f, 2.0f, 2.0f, 7.0f});
  sum(matmul(x, w)).backward();  // not marked: accumulates
  CHECK(flat_grads.to_vector() == std::vector<float>{2.0f, 2.0f, 4.0f, 4.0f, 7.0f});
  // A leaf on both sides of one matmul gets both contributions, marked or not:
  // d/dw sum(w^T w) = w (1 1^T) + w (1 1^T) ... = 2 * row sums of w broadcast.
  w.set_overwrite_grad(true);
  sum(matmul(w, w, true, false)).backward();
  const std::vector<float> g = flat_grads.to_vector();
  CHECK(g[0] == doctest::Approx(6.0));   // 2 * (1 + 2)
  CHECK(g[2] == doctest::Approx(14.0));  // 2 * (3 + 4)
}
