// The GPU's convolutions (kernels/conv/), max pooling (kernels/pool.cu) and the RMSprop and
// Adadelta updates (kernels/optimizers.cu), through their dispatch points (raw::X on GPU
// tensors) and kernels/conv/ directly, against references computed here in double by direct
// loops over the definitions (core/ops/conv2d.h, pool.h, optimizers.h), independent of the
// CPU's implementations and of the kernels' own formulation: backward-data is a scatter here
// (each forward term adds its share to dx), a gather in the kernel. GPU only:
// gpu_skip_main.cpp reports "Skipped" without a GPU.
//
// Tolerances. U = 2^-24 is float32's unit roundoff. A float sum of K products errs by at most
// ~K U of sum |terms| in any order (Higham's gamma_K), split-K's tree of partial sums included,
// so |got - ref| <= 2 K U sum |terms| (a factor 2 of margin). TF32 rounds each operand to 11
// significant bits first (cvt.rna, relative error <= 2^-11 each, so <= ~2^-10 per product):
// 4 TF32_U sum |terms| more, as tests/test_matmul_ladder.cpp bounds its TF32 versions. Outputs
// are poisoned with NaN first, so an element a kernel forgets to write fails.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/conv_geometry.h"
#include "core/device_services.h"
#include "core/error.h"
#include "core/ops/activation.h"
#include "core/ops/conv2d.h"
#include "core/ops/elementwise.h"
#include "core/ops/optimizers.h"
#include "core/ops/pool.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "kernels/conv/backward_filter_few_channels.h"
#include "kernels/conv/transpose_filters.h"
#include "kernels/conv/forward_few_channels.h"
#include "kernels/conv/implicit_gemm.h"
#include "kernels/conv/tma_wgmma.h"
#include "kernels/device_caps.h"
#include "kernels/launch.h"

using namespace engine;
namespace conv = engine::cuda::conv;

namespace {

constexpr double U = 1.0 / 16777216.0;   // float32 unit roundoff, 2^-24
constexpr double TF32_U = 1.0 / 2048.0;  // TF32 keeps 10 mantissa bits: unit roundoff 2^-11
const float NaN = std::numeric_limits<float>::quiet_NaN();

template <typename... Args>
std::string str(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

std::string describe(const Conv2dGeometry& g) {
  return str("x (", g.batch, ", ", g.in_h, ", ", g.in_w, ", ", g.in_c, ") * w (", g.kernel_h, ", ",
             g.kernel_w, ", ", g.in_c, ", ", g.out_c, ") stride (", g.stride_h, ", ", g.stride_w,
             ") pad (", g.pad_top, ", ", g.pad_left, ") -> (", g.out_h, ", ", g.out_w, ")");
}

std::vector<float> random_values(size_t n, Generator& rng) {
  std::vector<float> v(n);
  for (float& x : v) x = 2.0f * rng.uniform() - 1.0f;
  return v;
}

// A GPU tensor holding `values`, starting `offset` floats into its storage (offset 1: not
// 16-byte aligned, which sends the kernels down their scalar-load path).
Tensor on_gpu(const std::vector<float>& values, const Shape& shape, int64_t offset = 0) {
  std::vector<float> padded(static_cast<size_t>(offset) + values.size(), 0.0f);
  std::copy(values.begin(), values.end(), padded.begin() + offset);
  const Tensor storage = Tensor::from_vector(padded, {static_cast<int64_t>(padded.size())}, Device::cuda());
  return storage.slice(offset, shape);
}
Tensor poisoned(const Shape& shape, int64_t offset = 0) {
  return on_gpu(std::vector<float>(static_cast<size_t>(numel(shape)), NaN), shape, offset);
}

// A bias gradient against its reference: within `ulps` units of roundoff of each column's sum
// of |dy| (dy's rows of out_c), the bound of float sums of those terms in any fixed order.
void check_column_sums(const std::string& what, const std::vector<float>& got, const std::vector<double>& want,
                       const std::vector<float>& dy, double ulps) {
  std::vector<double> scale(got.size(), 0.0);
  for (size_t i = 0; i < dy.size(); ++i) scale[i % scale.size()] += std::fabs(dy[i]);
  size_t bad = 0;
  for (size_t c = 0; c < got.size(); ++c)
    if (!(std::fabs(got[c] - want[c]) <= ulps * U * scale[c] + 1e-30)) ++bad;
  INFO(what);
  CHECK(bad == 0);
}

std::vector<double> widened(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// A reference result: the exact value (in double) and sum |terms|, per element.
struct Reference {
  std::vector<double> value, magnitude;
  int64_t terms = 0;  // the reduction's length K
};

// Visits every term of the convolution: f(x index, w index, y index), for x (batch, in_h,
// in_w, in_c), w (kh, kw, in_c, out_c), y (batch, out_h, out_w, out_c), zero padding skipped.
template <typename F>
void for_each_term(const Conv2dGeometry& g, F&& f) {
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        for (int64_t kh = 0; kh < g.kernel_h; ++kh)
          for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
            const int64_t ih = oh * g.stride_h + kh - g.pad_top, iw = ow * g.stride_w + kw - g.pad_left;
            if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
            for (int64_t ci = 0; ci < g.in_c; ++ci)
              for (int64_t co = 0; co < g.out_c; ++co) {
                const int64_t xi = ((n * g.in_h + ih) * g.in_w + iw) * g.in_c + ci;
                const int64_t wi = ((kh * g.kernel_w + kw) * g.in_c + ci) * g.out_c + co;
                const int64_t yi = ((n * g.out_h + oh) * g.out_w + ow) * g.out_c + co;
                f(static_cast<size_t>(xi), static_cast<size_t>(wi), static_cast<size_t>(yi));
              }
          }
}

// y = conv(x, w); dx = sum over terms of dy * w; dw = sum over terms of x * dy.
Reference reference(conv::Pass pass, const Conv2dGeometry& g, const std::vector<float>& first,
                    const std::vector<float>& second) {
  Reference r;
  const conv::GemmShape s = conv::gemm_shape(pass, g);
  r.value.assign(static_cast<size_t>(s.M * s.N), 0.0);
  r.magnitude.assign(r.value.size(), 0.0);
  r.terms = s.K;
  auto add = [&](size_t out, double a, double b) {
    r.value[out] += a * b;
    r.magnitude[out] += std::fabs(a * b);
  };
  switch (pass) {
    case conv::Pass::Forward:  // first = x, second = w
      for_each_term(g, [&](size_t xi, size_t wi, size_t yi) { add(yi, first[xi], second[wi]); });
      break;
    case conv::Pass::BackwardData:  // first = dy, second = w
      for_each_term(g, [&](size_t xi, size_t wi, size_t yi) { add(xi, first[yi], second[wi]); });
      break;
    case conv::Pass::BackwardFilter:  // first = x, second = dy
      for_each_term(g, [&](size_t xi, size_t wi, size_t yi) { add(wi, first[xi], second[yi]); });
      break;
  }
  return r;
}

// Whether got matches the reference within the bound above; returns the worst err / bound.
double expect_close(const Reference& r, const std::vector<float>& got, bool tf32, const std::string& what) {
  REQUIRE(got.size() == r.value.size());
  size_t bad = 0;
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double bound = ((tf32 ? 4.0 * TF32_U : 0.0) + 2.0 * static_cast<double>(r.terms + 4) * U) *
                             r.magnitude[i] + 1e-30;
    const double err = std::fabs(static_cast<double>(got[i]) - r.value[i]);
    if (!(err <= bound)) {  // NaN (an unwritten element) fails too
      if (bad < 3) MESSAGE(what, ": element ", i, " is ", got[i], ", expected ", r.value[i], " +- ", bound);
      ++bad;
    }
    worst = std::max(worst, err / bound);
  }
  INFO(what, ": worst err/bound ", worst);
  CHECK(bad == 0);
  return worst;
}

// The operands of one pass, random, on the host.
struct Operands {
  std::vector<float> x, w, dy;
};
Operands random_operands(const Conv2dGeometry& g, Generator& rng) {
  return {random_values(static_cast<size_t>(numel(g.x_shape())), rng),
          random_values(static_cast<size_t>(numel(g.w_shape())), rng),
          random_values(static_cast<size_t>(numel(g.y_shape())), rng)};
}

// The reference of `pass` on these operands.
Reference reference_of(conv::Pass pass, const Conv2dGeometry& g, const Operands& o) {
  switch (pass) {
    case conv::Pass::Forward: return reference(pass, g, o.x, o.w);
    case conv::Pass::BackwardData: return reference(pass, g, o.dy, o.w);
    case conv::Pass::BackwardFilter: return reference(pass, g, o.x, o.dy);
  }
  return {};
}

// Runs `pass` through its dispatch point (raw::conv2d_*: on GPU tensors, the engine's own
// tiling) with TF32 set on `gpu` as asked, and checks it against r; offset 1 puts every operand
// and the output off 16-byte alignment.
void check_dispatched_pass(DeviceServices& gpu, conv::Pass pass, const Conv2dGeometry& g, const Operands& o,
                        const Reference& r, bool tf32, int64_t offset = 0) {
  gpu.set_tf32(tf32);
  Tensor out;
  switch (pass) {
    case conv::Pass::Forward: {
      const Tensor x = on_gpu(o.x, g.x_shape(), offset), w = on_gpu(o.w, g.w_shape(), offset);
      out = poisoned(g.y_shape(), offset);
      raw::conv2d_forward(g, x, w, out);
      break;
    }
    case conv::Pass::BackwardData: {
      const Tensor dy = on_gpu(o.dy, g.y_shape(), offset), w = on_gpu(o.w, g.w_shape(), offset);
      out = poisoned(g.x_shape(), offset);
      raw::conv2d_backward_data(g, dy, w, out);
      break;
    }
    case conv::Pass::BackwardFilter: {
      const Tensor x = on_gpu(o.x, g.x_shape(), offset), dy = on_gpu(o.dy, g.y_shape(), offset);
      out = poisoned(g.w_shape(), offset);
      raw::conv2d_backward_filter(g, x, dy, out);
      break;
    }
  }
  gpu.set_tf32(false);
  expect_close(r, out.to_vector(), tf32, str(conv::to_string(pass), (tf32 ? " tf32 " : " fp32 "), describe(g),
                                             offset ? " (unaligned)" : ""));
}

// Runs `pass` through kernels/conv/ with tiling t directly, checks it against r, and returns it.
std::vector<float> check_tiling(conv::Pass pass, const Conv2dGeometry& g, const Operands& o,
                                const Reference& r, const conv::Tiling& t) {
  const int64_t floats = conv::workspace_floats(t, conv::gemm_shape(pass, g));
  const Tensor workspace = floats > 0 ? Tensor::full({floats}, NaN, Device::cuda()) : Tensor();
  float* ws = floats > 0 ? workspace.data<float>() : nullptr;
  Tensor out;
  if (pass == conv::Pass::Forward) {
    const Tensor x = on_gpu(o.x, g.x_shape()), w = on_gpu(o.w, g.w_shape());
    out = poisoned(g.y_shape());
    conv::forward(g, t, x.data<float>(), w.data<float>(), out.data<float>(), ws, cuda::stream());
  } else if (pass == conv::Pass::BackwardData) {
    const Tensor dy = on_gpu(o.dy, g.y_shape()), w = on_gpu(o.w, g.w_shape());
    out = poisoned(g.x_shape());
    conv::backward_data(g, t, dy.data<float>(), w.data<float>(), out.data<float>(), ws, cuda::stream());
  } else {
    const Tensor x = on_gpu(o.x, g.x_shape()), dy = on_gpu(o.dy, g.y_shape());
    out = poisoned(g.w_shape());
    conv::backward_filter(g, t, x.data<float>(), dy.data<float>(), out.data<float>(), ws, cuda::stream());
  }
  std::vector<float> values = out.to_vector();
  expect_close(r, values, t.tf32,
               str(conv::to_string(pass), " tiles ", t.block_rows(), "x", t.bn, " k_slice ", t.k_slice,
                   t.tf32 ? str(" tf32 in ", t.stages, " stages ") : " fp32 ", describe(g)));
  return values;
}

const conv::Pass PASSES[] = {conv::Pass::Forward, conv::Pass::BackwardData, conv::Pass::BackwardFilter};

// Every pass in both precisions through its dispatch point, each against one reference.
void check_dispatched_passes(DeviceServices& gpu, const Conv2dGeometry& g, const Operands& o, bool unaligned_too) {
  for (const conv::Pass pass : PASSES) {
    const Reference r = reference_of(pass, g, o);
    for (const bool tf32 : {false, true}) {
      check_dispatched_pass(gpu, pass, g, o, r, tf32);
      if (unaligned_too) check_dispatched_pass(gpu, pass, g, o, r, tf32, 1);
    }
  }
}

// Checks y == act(z + bias) elementwise, z an output without them, bias per last-axis column:
// to float rounding (relu: the same accumulators plus one add; tanh and the sigmoid: the
// device's tanhf and __expf against the host's double).
void expect_bias_activation(const std::vector<float>& y, const std::vector<float>& z, const std::vector<float>& bias,
                            Activation act, const std::string& what) {
  REQUIRE(y.size() == z.size());
  const size_t cols = bias.size();
  int bad = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double v = double{z[i]} + bias[i % cols];
    const double expected = act == Activation::Relu      ? std::max(v, 0.0)
                            : act == Activation::Tanh    ? std::tanh(v)
                            : act == Activation::Sigmoid ? 1.0 / (1.0 + std::exp(-v))
                                                         : v;
    if (!(std::abs(y[i] - expected) <= 1e-5 * std::max(1.0, std::abs(expected))) && bad++ < 3)
      FAIL_CHECK(what, ": element ", i, " is ", y[i], ", expected ", expected);
  }
  CHECK(bad == 0);
}

// For a random bias and each elementwise activation: forward(bias, act, y) writes y (poisoned
// first), which must be act(z + bias), z the same pass's output without them.
template <typename Forward>
void check_bias_activations(const Conv2dGeometry& g, const std::vector<float>& z, Generator& rng,
                            const std::string& what, Forward&& forward) {
  const std::vector<float> bias_values = random_values(static_cast<size_t>(g.out_c), rng);
  const Tensor bias = on_gpu(bias_values, {g.out_c});
  for (const Activation act : {Activation::None, Activation::Relu, Activation::Tanh, Activation::Sigmoid}) {
    Tensor y = poisoned(g.y_shape());
    forward(bias, act, y);
    expect_bias_activation(y.to_vector(), z, bias_values, act,
                           str(what, " + bias, ", activation_name(act), " ", describe(g)));
  }
}

Conv2dGeometry geometry(int64_t batch, int64_t h, int64_t w, int64_t in_c, int64_t kh, int64_t kw,
                        int64_t out_c, int64_t sh, int64_t sw, Padding padding) {
  return conv2d_geometry({batch, h, w, in_c}, {kh, kw, in_c, out_c}, sh, sw, padding);
}

}  // namespace

TEST_CASE("conv2d passes match a double reference at odd sizes, both paddings, strides 1 and 2") {
  DeviceServices& gpu = device_services(Device::cuda());
  Generator rng(2026);
  struct Image {
    int64_t batch, h, w;
  };
  struct Kernel {
    int64_t kh, kw;
  };
  int cases = 0;
  for (const Image im : {Image{2, 5, 7}, Image{3, 9, 9}}) {
    for (const int64_t in_c : {1, 3, 4, 8}) {
      for (const int64_t out_c : {1, 5, 32}) {
        for (const Kernel k : {Kernel{1, 1}, Kernel{3, 3}, Kernel{5, 3}}) {
          for (const int64_t stride : {1, 2}) {
            for (const Padding padding : {Padding::Valid, Padding::Same}) {
              const Conv2dGeometry g = geometry(im.batch, im.h, im.w, in_c, k.kh, k.kw, out_c, stride,
                                                stride, padding);
              check_dispatched_passes(gpu, g, random_operands(g, rng), false);
              ++cases;
            }
          }
        }
      }
    }
  }
  CHECK(cases == 288);
}

TEST_CASE("conv2d: unequal strides, unaligned operands, batch 1 and 1x1 images") {
  DeviceServices& gpu = device_services(Device::cuda());
  Generator rng(7);
  const Conv2dGeometry shapes[] = {
      geometry(2, 9, 7, 4, 3, 3, 8, 2, 1, Padding::Same),
      geometry(2, 7, 9, 8, 3, 5, 4, 1, 2, Padding::Valid),
      geometry(1, 1, 1, 8, 3, 3, 12, 1, 1, Padding::Same),  // only the centre tap meets x
      geometry(1, 6, 6, 16, 2, 2, 16, 2, 2, Padding::Valid),
  };
  // Each also off 16-byte alignment, which sends them down the scalar-load path.
  for (const Conv2dGeometry& g : shapes) check_dispatched_passes(gpu, g, random_operands(g, rng), true);
}

TEST_CASE("conv2d: every kernel variant (tiles, split-K, FP32/TF32 in 2-4 stages, vector/scalar loads)") {
  Generator rng(11);
  // Vector loads (channels multiples of 4), scalar loads (3 and 5 channels), and shapes with
  // several row and column tiles and K deep enough for 2 and 3 slices.
  const Conv2dGeometry shapes[] = {
      geometry(3, 9, 9, 8, 3, 3, 20, 1, 1, Padding::Same),
      geometry(2, 11, 13, 3, 3, 3, 5, 2, 2, Padding::Same),
      geometry(2, 17, 15, 12, 5, 3, 136, 1, 1, Padding::Valid),
  };
  int runs = 0;
  for (const Conv2dGeometry& g : shapes) {
    const Operands o = random_operands(g, rng);
    for (const conv::Pass pass : PASSES) {
      const Reference r = reference_of(pass, g, o);
      for (const int bn : {32, 64, 128}) {
        for (const int tm : {4, 8}) {
          for (const int k_slice : {0, 16, 48}) {
            conv::Tiling t;
            t.bn = bn;
            t.tm = tm;
            t.k_slice = k_slice;
            check_tiling(pass, g, o, r, t);
            t.tf32 = true;
            const std::vector<float> two_stages = check_tiling(pass, g, o, r, t);
            // The pipelined kernel multiplies the same values in the same order: the same bits.
            for (const int stages : {3, 4}) {
              t.stages = stages;
              CHECK(check_tiling(pass, g, o, r, t) == two_stages);
            }
            runs += 4;
          }
        }
      }
    }
  }
  CHECK(runs == 3 * 3 * 3 * 2 * 3 * 4);
}

namespace {

// The seed models' 3 x 3 convolutions, at batch 4.
struct SeedLayer {
  int64_t size, in_c, out_c;
  Padding padding;
  Conv2dGeometry at_batch_4() const { return geometry(4, size, size, in_c, 3, 3, out_c, 1, 1, padding); }
  std::string name() const {  // "16x16x32 -> 64"
    return detail::concat(size, "x", size, "x", in_c, " -> ", out_c);
  }
};
// Seed 003's CIFAR-10 CNN (same padding) and seed 004's MNIST CNN and Dogs vs Cats (valid).
const SeedLayer SEED_LAYERS[] = {{32, 3, 32, Padding::Same},   {32, 32, 32, Padding::Same},
                                 {16, 32, 64, Padding::Same},  {16, 64, 64, Padding::Same},
                                 {8, 64, 128, Padding::Same},  {8, 128, 128, Padding::Same},
                                 {28, 1, 32, Padding::Valid},  {26, 32, 64, Padding::Valid},
                                 // seed 004's Dogs vs Cats: the first layer takes the few-channels
                                 // filter-gradient kernel (kernels/conv/backward_filter_few_channels.cu)
                                 {150, 3, 32, Padding::Valid}, {74, 32, 32, Padding::Valid}};

}  // namespace

TEST_CASE("conv2d at the seed models' layer shapes (batch 4), FP32 and TF32") {
  DeviceServices& gpu = device_services(Device::cuda());
  Generator rng(3);
  for (const SeedLayer& l : SEED_LAYERS) {
    const Conv2dGeometry g = l.at_batch_4();
    check_dispatched_passes(gpu, g, random_operands(g, rng), false);
  }
}

TEST_CASE("ENGINE_CONV_TF32_STAGES: the device's choice when unset, 2-4 as given, anything else refused") {
  CHECK(conv::tf32_stages_setting(nullptr, 3) == 3);
  CHECK(conv::tf32_stages_setting("", 2) == 2);
  CHECK(conv::tf32_stages_setting("2", 3) == 2);
  CHECK(conv::tf32_stages_setting("3", 3) == 3);
  CHECK(conv::tf32_stages_setting("4", 2) == 4);
  for (const char* bad : {"1", "5", "33", "three", " 3"}) {
    INFO(bad);
    CHECK_THROWS_WITH_AS(conv::tf32_stages_setting(bad, 3), doctest::Contains("ENGINE_CONV_TF32_STAGES"), Error);
  }
}

TEST_CASE("ENGINE_CONV_HOPPER_TILES: none when unset, BMxBN as given, anything else refused") {
  CHECK_FALSE(conv::hopper_tiles_setting(nullptr).has_value());
  CHECK_FALSE(conv::hopper_tiles_setting("").has_value());
  for (const int bm : {64, 128}) {
    for (const int bn : {32, 64, 128}) {
      const std::string text = std::to_string(bm) + "x" + std::to_string(bn);
      const std::optional<conv::HopperTiles> t = conv::hopper_tiles_setting(text.c_str());
      REQUIRE(t.has_value());
      CHECK(t->bm == bm);
      CHECK(t->bn == bn);
    }
  }
  for (const char* bad : {"32x32", "64x16", "64x256", "64", "64X32", " 64x32", "64x32 "}) {
    INFO(bad);
    CHECK_THROWS_WITH_AS(conv::hopper_tiles_setting(bad), doctest::Contains("ENGINE_CONV_HOPPER_TILES"), Error);
  }
}

TEST_CASE("the pipelined TF32 kernel at the seed layers' tilings: the two-stage kernel's bits") {
  // A subcase per layer, so that racecheck can take them in separate processes (-sc="16x16x*").
  Generator rng(13);
  for (const SeedLayer& l : SEED_LAYERS) {
    if (l.in_c % 4 != 0) continue;  // the first layers' 1 and 3 channels: no 16-byte loads
    const Conv2dGeometry g = l.at_batch_4();
    const Operands o = random_operands(g, rng);  // outside the subcase: the same draws each run
    SUBCASE(l.name().c_str()) {
      for (const conv::Pass pass : PASSES) {
        const Reference r = reference_of(pass, g, o);
        conv::Tiling t = conv::choose_tiling(pass, g, true, cuda::multiprocessor_count());
        t.stages = 2;
        const std::vector<float> two_stages = check_tiling(pass, g, o, r, t);
        for (const int stages : {3, 4}) {
          t.stages = stages;
          CHECK(check_tiling(pass, g, o, r, t) == two_stages);
        }
      }
    }
  }
}

TEST_CASE("conv2d backward-filter is deterministic, and replays inside a CUDA graph") {
  DeviceServices& gpu = device_services(Device::cuda());
  Generator rng(5);
  // Split-K at batch 8 (the engine splits K = 8 * 32 * 32 over many slices).
  const Conv2dGeometry g = geometry(8, 32, 32, 32, 3, 3, 32, 1, 1, Padding::Same);
  const conv::Tiling t = conv::choose_tiling(conv::Pass::BackwardFilter, g, false, cuda::multiprocessor_count());
  INFO("tiling ", t.block_rows(), "x", t.bn, " k_slice ", t.k_slice);
  CHECK(t.k_slice > 0);
  const Operands o = random_operands(g, rng);
  const Tensor x = on_gpu(o.x, g.x_shape()), w = on_gpu(o.w, g.w_shape()), dy = on_gpu(o.dy, g.y_shape());
  Tensor dw = poisoned(g.w_shape()), y = poisoned(g.y_shape()), dx = poisoned(g.x_shape());
  raw::conv2d_backward_filter(g, x, dy, dw);
  const std::vector<float> first = dw.to_vector();
  raw::conv2d_backward_filter(g, x, dy, dw);
  CHECK(dw.to_vector() == first);  // bitwise: the slices are added in a fixed order
  expect_close(reference(conv::Pass::BackwardFilter, g, o.x, o.dy), first, false, "backward_filter batch 8");

  // All three passes recorded into a graph (workspaces from the graph's pool, no sync inside)
  // and replayed give what they give op by op.
  raw::conv2d_forward(g, x, w, y);
  raw::conv2d_backward_data(g, dy, w, dx);
  const std::vector<float> y_eager = y.to_vector(), dx_eager = dx.to_vector();
  Tensor y2 = poisoned(g.y_shape()), dx2 = poisoned(g.x_shape()), dw2 = poisoned(g.w_shape());
  const std::unique_ptr<StepGraph> graph = gpu.capture([&] {
    raw::conv2d_forward(g, x, w, y2);
    raw::conv2d_backward_data(g, dy, w, dx2);
    raw::conv2d_backward_filter(g, x, dy, dw2);
  });
  REQUIRE(graph != nullptr);
  graph->replay();
  graph->replay();
  CHECK(y2.to_vector() == y_eager);
  CHECK(dx2.to_vector() == dx_eager);
  CHECK(dw2.to_vector() == first);
}

TEST_CASE("the Hopper kernels: every pass at odd shapes, every tile and slicing, and where they apply") {
  if (!cuda::device_caps().kernels.wgmma_tma) {
    MESSAGE("skipped: no sm_90a code for this GPU in this build");
    return;
  }
  DeviceServices& gpu = device_services(Device::cuda());
  Generator rng(17);
  // Gathered channels (in_c forward, out_c backward) multiples of 32; images of 1x1 and odd
  // sizes, both paddings, 1x1 / 3x3 / 5x3 kernels, batch 1 and 33, output channels that leave
  // a partial column tile (136), odd counts (3, 5: 4-byte stores; 10: the filter gradient's
  // copy of dy reads 4-byte groups of 4 channels).
  const Conv2dGeometry shapes[] = {
      geometry(1, 1, 1, 32, 3, 3, 32, 1, 1, Padding::Same),
      geometry(3, 5, 7, 32, 3, 3, 64, 1, 1, Padding::Valid),
      geometry(2, 9, 11, 64, 5, 3, 136, 1, 1, Padding::Same),
      geometry(5, 6, 6, 96, 1, 1, 3, 1, 1, Padding::Valid),
      geometry(2, 7, 5, 5, 3, 3, 32, 1, 1, Padding::Same),
      geometry(33, 8, 8, 32, 3, 3, 32, 1, 1, Padding::Same),
      geometry(3, 6, 5, 32, 3, 3, 10, 1, 1, Padding::Same),
  };
  const conv::HopperTiles tiles[] = {{64, 32}, {64, 64}, {64, 128}, {128, 32}, {128, 64}, {128, 128}};
  for (const Conv2dGeometry& g : shapes) {
    const Operands o = random_operands(g, rng);
    const Tensor x = on_gpu(o.x, g.x_shape()), w = on_gpu(o.w, g.w_shape()), dy = on_gpu(o.dy, g.y_shape());
    for (const conv::Pass pass : {conv::Pass::Forward, conv::Pass::BackwardData}) {
      const bool forward = pass == conv::Pass::Forward;
      const Tensor& gathered = forward ? x : dy;
      Tensor out = poisoned(forward ? g.y_shape() : g.x_shape());
      const bool applies = conv::hopper_applies(pass, g, gathered.data<float>(), w.data<float>(), out.data<float>());
      CHECK(applies == ((forward ? g.in_c : g.out_c) % 32 == 0));
      CHECK_FALSE(conv::hopper_applies(pass, g, gathered.data<float>() + 1, w.data<float>(), out.data<float>()));
      if (!applies) continue;
      const Reference r = reference_of(pass, g, o);
      // Through the dispatch point (the engine's tiles; the forward transposes the filters).
      check_dispatched_pass(gpu, pass, g, o, r, true);
      // Every tile, called directly: the forward's filters transposed here, tap by tap.
      std::vector<float> filters_t(o.w.size());
      const int64_t taps = g.kernel_h * g.kernel_w;
      for (int64_t tap = 0; tap < taps; ++tap)
        for (int64_t ci = 0; ci < g.in_c; ++ci)
          for (int64_t co = 0; co < g.out_c; ++co)
            filters_t[static_cast<size_t>((tap * g.out_c + co) * g.in_c + ci)] =
                o.w[static_cast<size_t>((tap * g.in_c + ci) * g.out_c + co)];
      const Tensor w_t = on_gpu(filters_t, {static_cast<int64_t>(filters_t.size())});
      for (const conv::HopperTiles& t : tiles) {
        out = poisoned(forward ? g.y_shape() : g.x_shape());
        if (forward)
          conv::hopper_forward(g, t, x.data<float>(), w_t.data<float>(), nullptr, Activation::None, out.data<float>(),
                               cuda::stream());
        else
          conv::hopper_backward_data(g, t, dy.data<float>(), w.data<float>(), out.data<float>(), cuda::stream());
        expect_close(r, out.to_vector(), true,
                     str(conv::to_string(pass), " on Hopper, tiles ", t.bm, "x", t.bn, " ", describe(g)));
        if (!forward) continue;
        // The bias and each activation in the epilogue, against the same tile's output.
        check_bias_activations(g, out.to_vector(), rng, str("forward on Hopper, tiles ", t.bm, "x", t.bn),
                               [&](const Tensor& bias, Activation act, Tensor& y) {
                                 conv::hopper_forward(g, t, x.data<float>(), w_t.data<float>(), bias.data<float>(),
                                                      act, y.data<float>(), cuda::stream());
                               });
      }
    }
  }
  // The filter gradient (tma_wgmma_filter.cu): x's channels a multiple of 32.
  for (const Conv2dGeometry& g : shapes) {
    const Operands o = random_operands(g, rng);
    const Tensor x = on_gpu(o.x, g.x_shape()), dy = on_gpu(o.dy, g.y_shape());
    Tensor dw = poisoned(g.w_shape());
    const bool applies =
        conv::hopper_applies(conv::Pass::BackwardFilter, g, x.data<float>(), dy.data<float>(), dw.data<float>());
    CHECK(applies == (g.in_c % 32 == 0));
    CHECK_FALSE(
        conv::hopper_applies(conv::Pass::BackwardFilter, g, x.data<float>() + 1, dy.data<float>(), dw.data<float>()));
    if (!applies) continue;
    const Reference r = reference_of(conv::Pass::BackwardFilter, g, o);
    check_dispatched_pass(gpu, conv::Pass::BackwardFilter, g, o, r, true);
    // dy's column sums (the bias gradient the dy copy adds up), in double.
    std::vector<double> column_sums(static_cast<size_t>(g.out_c), 0.0);
    for (size_t i = 0; i < o.dy.size(); ++i) column_sums[i % column_sums.size()] += o.dy[i];
    // Every tile, unsplit and in 2 and 3 slices of the pixel tiles (the last one shorter where
    // they do not divide), the workspace poisoned: what the pass reads, it wrote first; with
    // and without the bias gradient.
    for (const int bn : {32, 64, 128}) {
      for (const int slices : {1, 2, 3}) {
        conv::HopperFilterPlan plan = conv::plan_hopper_filter(g, cuda::multiprocessor_count(), slices);
        plan.bn = bn;
        const Tensor workspace = Tensor::full({plan.workspace_floats(g)}, NaN, Device::cuda());
        for (const bool with_bias : {false, true}) {
          dw = poisoned(g.w_shape());
          Tensor db = poisoned({g.out_c});
          conv::hopper_backward_filter(g, plan, x.data<float>(), dy.data<float>(), dw.data<float>(),
                                       with_bias ? db.data<float>() : nullptr, workspace.data<float>(),
                                       cuda::stream());
          const std::string what = str("backward_filter on Hopper, tiles 64x", bn, ", ", plan.slices, " slices of ",
                                       plan.slice_tiles, " pixel tiles", with_bias ? ", with db, " : ", ", describe(g));
          expect_close(r, dw.to_vector(), true, what);
          if (with_bias) check_column_sums(what, db.to_vector(), column_sums, o.dy, 128.0);  // FP32 sums
        }
      }
    }
  }
  // An empty batch: dw is a sum of nothing.
  const Conv2dGeometry empty = geometry(0, 8, 8, 32, 3, 3, 32, 1, 1, Padding::Same);
  Tensor dw = poisoned(empty.w_shape()), db = poisoned({empty.out_c});
  conv::hopper_backward_filter(empty, conv::plan_hopper_filter(empty, cuda::multiprocessor_count()), nullptr,
                               nullptr, dw.data<float>(), db.data<float>(), nullptr, cuda::stream());
  for (const float v : dw.to_vector()) CHECK(v == 0.0f);
  for (const float v : db.to_vector()) CHECK(v == 0.0f);
  // Never a stride of 2.
  const Conv2dGeometry strided = geometry(2, 8, 8, 32, 3, 3, 32, 2, 2, Padding::Same);
  const Tensor a = poisoned(strided.x_shape()), b = poisoned(strided.w_shape()), c = poisoned(strided.y_shape());
  CHECK_FALSE(conv::hopper_applies(conv::Pass::Forward, strided, a.data<float>(), b.data<float>(), c.data<float>()));
  CHECK_FALSE(
      conv::hopper_applies(conv::Pass::BackwardFilter, strided, a.data<float>(), c.data<float>(), b.data<float>()));
}

TEST_CASE("the Hopper filter gradient's plan: as many blocks as fit the SMs, slices that cover every pixel once") {
  // CIFAR's 32x32x32 -> 32 at batch 100: dw is 288 x 32, 5 blocks of 64 x 32 before slicing;
  // six fit an SM (37 KB each): 792 / 5 -> 159 slices wanted, at most 128. Pixel tiles: columns of 8 pixels of 4 images (the narrowest
  // of those that waste none), 3,200 of them.
  const Conv2dGeometry cifar = geometry(100, 32, 32, 32, 3, 3, 32, 1, 1, Padding::Same);
  const conv::HopperFilterPlan plan = conv::plan_hopper_filter(cifar, 132);
  CHECK(plan.bn == 32);
  CHECK(plan.pixels.w == 1);
  CHECK(plan.pixels.h == 8);
  CHECK(plan.pixels.n == 4);
  CHECK(plan.pixels.count == 3200);
  CHECK(plan.slices == 128);  // of 25 pixel tiles each
  CHECK(plan.slice_tiles == 25);
  CHECK(plan.copy_blocks() == 800);  // of 4 pixel tiles
  // dyT, the slices' partial dw, the dy copy's column sums.
  CHECK(plan.workspace_floats(cifar) == 32 * 3200 * 32 + 128 * 288 * 32 + 800 * 32);
  // 8x8x128 -> 128: 18 blocks of 64 x 128, three an SM (73 KB each): 396 / 18 -> 22 slices
  // wanted, of 10 of the 200 pixel tiles (8 x 1 pixels of 4 images): 20.
  const conv::HopperFilterPlan deep = conv::plan_hopper_filter(geometry(100, 8, 8, 128, 3, 3, 128, 1, 1, Padding::Same), 132);
  CHECK(deep.bn == 128);
  CHECK(deep.pixels.count == 200);
  CHECK(deep.slices == 20);
  CHECK(deep.slice_tiles == 10);
  // MNIST's 26x26 output images: tiles of 2-pixel columns or rows over 16 images waste none.
  const conv::HopperFilterPlan mnist = conv::plan_hopper_filter(geometry(128, 28, 28, 32, 3, 3, 64, 1, 1, Padding::Valid), 132);
  CHECK(mnist.pixels.count * 32 == 128 * 26 * 26);
  // As many slices as asked, at most one a pixel tile.
  CHECK(conv::plan_hopper_filter(geometry(1, 2, 2, 32, 1, 1, 32, 1, 1, Padding::Valid), 132, 50).slices == 1);
}

TEST_CASE("the few-channels forward: 1 to 4 channels, odd sizes, strides and paddings, bias and activations") {
  Generator rng(19);
  const Conv2dGeometry shapes[] = {
      geometry(2, 5, 7, 1, 3, 3, 4, 1, 1, Padding::Same),
      geometry(3, 9, 9, 3, 5, 3, 32, 2, 2, Padding::Valid),
      geometry(1, 1, 1, 2, 3, 3, 8, 1, 1, Padding::Same),
      geometry(2, 6, 5, 4, 1, 1, 256, 1, 3, Padding::Same),
      geometry(33, 8, 8, 3, 3, 3, 64, 1, 1, Padding::Same),
  };
  for (const Conv2dGeometry& g : shapes) {
    const Operands o = random_operands(g, rng);
    const Tensor x = on_gpu(o.x, g.x_shape()), w = on_gpu(o.w, g.w_shape());
    Tensor z = poisoned(g.y_shape());
    REQUIRE(conv::few_channels_forward_fits(g, z.data<float>()));
    conv::few_channels_forward(g, x.data<float>(), w.data<float>(), nullptr, Activation::None, z.data<float>(),
                               cuda::multiprocessor_count(), cuda::stream());
    expect_close(reference_of(conv::Pass::Forward, g, o), z.to_vector(), false, str("few-channels forward ", describe(g)));
    check_bias_activations(g, z.to_vector(), rng, "few-channels forward",
                           [&](const Tensor& bias, Activation act, Tensor& y) {
                             conv::few_channels_forward(g, x.data<float>(), w.data<float>(), bias.data<float>(), act,
                                                        y.data<float>(), cuda::multiprocessor_count(), cuda::stream());
                           });
  }
  // Not for 5 channels, 12 or 512 output channels, filters over 48 KB, or an unaligned y.
  const Tensor y = poisoned({64});
  CHECK_FALSE(conv::few_channels_forward_fits(geometry(1, 4, 4, 5, 3, 3, 32, 1, 1, Padding::Same), y.data<float>()));
  CHECK_FALSE(conv::few_channels_forward_fits(geometry(1, 4, 4, 3, 3, 3, 12, 1, 1, Padding::Same), y.data<float>()));
  CHECK_FALSE(conv::few_channels_forward_fits(geometry(1, 4, 4, 1, 3, 3, 512, 1, 1, Padding::Same), y.data<float>()));
  CHECK_FALSE(conv::few_channels_forward_fits(geometry(1, 9, 9, 4, 7, 7, 128, 1, 1, Padding::Same), y.data<float>()));
  CHECK_FALSE(conv::few_channels_forward_fits(geometry(1, 4, 4, 3, 3, 3, 32, 1, 1, Padding::Same), y.data<float>() + 1));
  CHECK(conv::few_channels_forward_fits(geometry(1, 4, 4, 3, 3, 3, 32, 1, 1, Padding::Same), y.data<float>()));
}

TEST_CASE("the few-channels filter gradient: its FMA and TF32 forms, 1 and 3 channels, odd sizes, the same bits twice") {
  Generator rng(23);
  const bool tensor_cores = cuda::device_caps().kernels.tf32_mma;
  const Conv2dGeometry shapes[] = {
      geometry(2, 5, 7, 1, 3, 3, 8, 1, 1, Padding::Same),
      geometry(3, 9, 9, 3, 3, 3, 16, 2, 2, Padding::Valid),
      geometry(1, 1, 1, 3, 3, 3, 32, 1, 1, Padding::Same),
      geometry(33, 8, 8, 3, 3, 3, 32, 1, 1, Padding::Same),   // more pixels than a block's warps take
      geometry(4, 40, 30, 1, 3, 3, 32, 1, 2, Padding::Same),  // several blocks, unequal strides
      geometry(2, 6, 6, 3, 3, 3, 4, 1, 1, Padding::Same),     // out_c 4 and 64: the FMA form only
      geometry(2, 6, 6, 1, 3, 3, 64, 1, 1, Padding::Valid),
  };
  for (const Conv2dGeometry& g : shapes) {
    const Operands o = random_operands(g, rng);
    const Tensor x = on_gpu(o.x, g.x_shape()), dy = on_gpu(o.dy, g.y_shape());
    REQUIRE(conv::few_channels_filter_fits(g, dy.data<float>()));
    CHECK(conv::few_channels_filter_tf32_fits(g) == (tensor_cores && g.out_c % 8 == 0 && g.out_c <= 32));
    const Reference r = reference_of(conv::Pass::BackwardFilter, g, o);
    const int sms = cuda::multiprocessor_count();
    for (const bool tf32 : {false, true}) {
      std::vector<float> first;
      for (int run = 0; run < 2; ++run) {
        const Tensor workspace = Tensor::full({conv::few_channels_workspace_floats(g, sms)}, NaN, Device::cuda());
        Tensor dw = poisoned(g.w_shape());
        conv::few_channels_backward_filter(g, x.data<float>(), dy.data<float>(), dw.data<float>(),
                                           workspace.data<float>(), sms, tf32, cuda::stream());
        const std::vector<float> values = dw.to_vector();
        if (run == 0) {
          expect_close(r, values, tf32 && conv::few_channels_filter_tf32_fits(g),
                       str("few-channels filter gradient", tf32 ? " (tf32) " : " ", describe(g)));
          first = values;
        } else {
          CHECK(values == first);
        }
      }
    }
  }
}

TEST_CASE("the first layer's fused filter gradient: act'(y) and the bias sums as dy is read, dz never written") {
  if (!cuda::device_caps().kernels.tf32_mma) {
    MESSAGE("skipped: no TF32 tensor cores on this GPU");
    return;
  }
  DeviceServices& gpu = device_services(Device::cuda());
  Generator rng(29);
  const Conv2dGeometry shapes[] = {
      geometry(2, 5, 7, 1, 3, 3, 8, 1, 1, Padding::Same),
      geometry(3, 9, 9, 3, 3, 3, 16, 2, 2, Padding::Valid),
      geometry(33, 8, 8, 3, 3, 3, 32, 1, 1, Padding::Same),
      geometry(4, 40, 30, 1, 3, 3, 32, 1, 2, Padding::Same),
  };
  const int sms = cuda::multiprocessor_count();
  for (const Conv2dGeometry& g : shapes) {
    const Operands o = random_operands(g, rng);
    // A Relu layer's output: half of it zero, where act' is 0.
    std::vector<float> y_values(o.dy.size());
    for (float& v : y_values) v = std::max(0.0f, rng.uniform() - 0.5f);
    const Tensor x = on_gpu(o.x, g.x_shape()), dy = on_gpu(o.dy, g.y_shape()), y = on_gpu(y_values, g.y_shape());
    const Shape rows{g.batch * g.out_h * g.out_w, g.out_c};
    for (const Activation act : {Activation::None, Activation::Relu}) {
      REQUIRE(conv::few_channels_fused_fits(g, act));
      const std::string what = str("fused first-layer filter gradient, act ", static_cast<int>(act), " ", describe(g));
      INFO(what);
      // Unfused: dz written (act' dy, or dy itself), then the TF32 form and sum_rows.
      Tensor dz = act == Activation::None ? dy : poisoned(g.y_shape());
      Tensor db_ref = poisoned({g.out_c}), dz_rows = dz.view(rows);
      if (act == Activation::None) raw::sum_rows(dy.view(rows), db_ref);
      else raw::bias_activation_backward(act, y.view(rows), dy.view(rows), dz_rows, db_ref);
      Tensor dw_ref = poisoned(g.w_shape());
      const Tensor workspace = Tensor::full({conv::few_channels_workspace_floats(g, sms)}, NaN, Device::cuda());
      conv::few_channels_backward_filter(g, x.data<float>(), dz.data<float>(), dw_ref.data<float>(),
                                         workspace.data<float>(), sms, true, cuda::stream());
      // Fused: the same dz values rounded the same way, so the same dw to the bit; db is the
      // same sum in another order.
      Tensor dw = poisoned(g.w_shape()), db = poisoned({g.out_c});
      const Tensor workspace2 = Tensor::full({conv::few_channels_workspace_floats(g, sms)}, NaN, Device::cuda());
      conv::few_channels_fused_backward_filter(g, act, y.data<float>(), x.data<float>(), dy.data<float>(),
                                               dw.data<float>(), db.data<float>(), workspace2.data<float>(), sms,
                                               cuda::stream());
      CHECK(dw.to_vector() == dw_ref.to_vector());
      const std::vector<float> got = db.to_vector();
      check_column_sums(what, got, widened(db_ref.to_vector()), o.dy, 256.0);
      // Through the dispatch point under --tf32: the fused kernel, the same bits.
      if (act == Activation::Relu) {
        gpu.set_tf32(true);
        Tensor dw_op = poisoned(g.w_shape()), db_op = poisoned({g.out_c});
        raw::conv2d_activation_backward_filter(g, act, y, x, dy, dw_op, db_op);
        gpu.set_tf32(false);
        CHECK(dw_op.to_vector() == dw.to_vector());
        CHECK(db_op.to_vector() == got);
      }
    }
  }
}

TEST_CASE("conv2d_bias_activation_forward on the GPU: the forward pass then act(y + bias), fused or not") {
  DeviceServices& gpu = device_services(Device::cuda());
  Generator rng(18);
  // Shapes the Hopper kernel takes (in TF32 on an H100) and ones it does not (5 channels, a
  // stride of 2, FP32): the epilogue there is the bias_activation kernel over y.
  const Conv2dGeometry shapes[] = {
      geometry(3, 5, 7, 32, 3, 3, 64, 1, 1, Padding::Valid),
      geometry(2, 9, 11, 64, 5, 3, 136, 1, 1, Padding::Same),
      geometry(2, 7, 5, 5, 3, 3, 32, 1, 1, Padding::Same),
      geometry(2, 8, 8, 32, 3, 3, 32, 2, 2, Padding::Same),
  };
  for (const Conv2dGeometry& g : shapes) {
    const Operands o = random_operands(g, rng);
    const Tensor x = on_gpu(o.x, g.x_shape()), w = on_gpu(o.w, g.w_shape());
    for (const bool tf32 : {false, true}) {
      gpu.set_tf32(tf32);
      Tensor z = poisoned(g.y_shape());
      raw::conv2d_forward(g, x, w, z);
      check_bias_activations(g, z.to_vector(), rng, tf32 ? "conv2d tf32" : "conv2d fp32",
                             [&](const Tensor& bias, Activation act, Tensor& y) {
                               raw::conv2d_bias_activation_forward(g, x, w, bias, act, y);
                             });
      gpu.set_tf32(false);
    }
  }
}

TEST_CASE("transpose_filters: every layer's taps transposed, odd channel counts, more layers than a launch takes") {
  // 20 layers (two launches), channels that fill no 32 x 32 tile and ones that fill several.
  Generator rng(23);
  const int shapes[][3] = {{9, 32, 32}, {3, 5, 37}, {1, 1, 1}, {15, 64, 136}, {4, 33, 31}};
  std::vector<Tensor> w, t;
  std::vector<std::vector<float>> values;
  std::vector<cuda::conv::FilterTranspose> layers;
  for (int l = 0; l < 20; ++l) {
    const int taps = shapes[l % 5][0], in_c = shapes[l % 5][1], out_c = shapes[l % 5][2];
    values.push_back(random_values(static_cast<size_t>(taps * in_c * out_c), rng));
    w.push_back(on_gpu(values.back(), {taps, in_c, out_c}));
    t.push_back(poisoned({taps, out_c, in_c}));
    layers.push_back({w.back().data<float>(), t.back().data<float>(), taps, in_c, out_c});
  }
  cuda::conv::transpose_filters(layers, cuda::stream());
  for (size_t l = 0; l < layers.size(); ++l) {
    const auto& [source, target, taps, in_c, out_c] = layers[l];
    const std::vector<float> got = t[l].to_vector();
    size_t bad = 0;
    for (int k = 0; k < taps; ++k)
      for (int ci = 0; ci < in_c; ++ci)
        for (int co = 0; co < out_c; ++co)
          bad += got[static_cast<size_t>((k * out_c + co) * in_c + ci)] ==
                         values[l][static_cast<size_t>((k * in_c + ci) * out_c + co)]
                     ? 0
                     : 1;
    INFO("layer ", l, ": ", taps, " taps of ", in_c, " x ", out_c);
    CHECK(bad == 0);
  }
}

TEST_CASE("prepared forward filters: the same bits as each layer's own copy, none kept past the scope") {
  DeviceServices& gpu = device_services(Device::cuda());
  Generator rng(29);
  // Layers the Hopper forward takes (in_c 32 and 64, out_c 40 and 136: partial tiles) and one
  // it does not (5 channels): prepared together, as a model's forward pass prepares them.
  const Conv2dGeometry shapes[] = {
      geometry(2, 9, 11, 32, 3, 3, 40, 1, 1, Padding::Same),
      geometry(3, 5, 7, 64, 5, 3, 136, 1, 1, Padding::Valid),
      geometry(2, 7, 5, 5, 3, 3, 32, 1, 1, Padding::Same),
  };
  std::vector<Tensor> x, w;
  std::vector<std::vector<float>> w_values;
  for (const Conv2dGeometry& g : shapes) {
    const Operands o = random_operands(g, rng);
    x.push_back(on_gpu(o.x, g.x_shape()));
    w_values.push_back(o.w);
  }
  const auto outputs = [&] {
    std::vector<std::vector<float>> y;
    for (size_t i = 0; i < w.size(); ++i) {
      Tensor out = poisoned(shapes[i].y_shape());
      raw::conv2d_forward(shapes[i], x[i], w[i], out);
      y.push_back(out.to_vector());
    }
    return y;
  };
  for (const bool tf32 : {false, true}) {
    gpu.set_tf32(tf32);
    INFO((tf32 ? "TF32" : "FP32"));
    w.clear();
    for (size_t i = 0; i < w_values.size(); ++i) w.push_back(on_gpu(w_values[i], shapes[i].w_shape()));
    const std::vector<std::vector<float>> own = outputs();
    {
      const PreparedConvFilters prepared(w);
      CHECK(outputs() == own);
    }
    // Changed filters after the scope: each pass reads them, not a copy the scope left.
    for (Tensor& filters : w) raw::fill(filters, 0.25f);
    const std::vector<std::vector<float>> after = outputs();
    for (size_t i = 0; i < w.size(); ++i) {
      Tensor fresh = Tensor::full(w[i].shape(), 0.25f, Device::cuda());
      Tensor out = poisoned(shapes[i].y_shape());
      raw::conv2d_forward(shapes[i], x[i], fresh, out);
      CHECK(after[i] == out.to_vector());
    }
    gpu.set_tf32(false);
  }
}

TEST_CASE("conv2d_bias_backward_filter on the GPU: dw as conv2d_backward_filter's, db dy's column sums") {
  DeviceServices& gpu = device_services(Device::cuda());
  Generator rng(19);
  // Every path of the filter gradient: the few-channels kernel (3 channels), the Hopper
  // kernel's copy of dy that sums the columns (32 channels, TF32 on an H100), the implicit
  // GEMMs (5 channels; FP32), each followed by sum_rows where it does not sum them itself.
  const Conv2dGeometry shapes[] = {
      geometry(4, 9, 7, 3, 3, 3, 32, 1, 1, Padding::Same),
      geometry(33, 8, 8, 32, 3, 3, 40, 1, 1, Padding::Same),
      geometry(3, 5, 7, 32, 3, 3, 64, 1, 1, Padding::Valid),
      geometry(2, 7, 5, 5, 3, 3, 32, 1, 1, Padding::Same),
  };
  for (const Conv2dGeometry& g : shapes) {
    const Operands o = random_operands(g, rng);
    const Tensor x = on_gpu(o.x, g.x_shape()), dy = on_gpu(o.dy, g.y_shape());
    const Tensor dy_rows = dy.view({g.batch * g.out_h * g.out_w, g.out_c});
    for (const bool tf32 : {false, true}) {
      gpu.set_tf32(tf32);
      Tensor dw_alone = poisoned(g.w_shape()), db_alone = poisoned({g.out_c});
      raw::conv2d_backward_filter(g, x, dy, dw_alone);
      raw::sum_rows(dy_rows, db_alone);
      Tensor dw = poisoned(g.w_shape()), db = poisoned({g.out_c});
      raw::conv2d_bias_backward_filter(g, x, dy, dw, db);
      gpu.set_tf32(false);
      const std::string what = str("conv2d_bias_backward_filter", tf32 ? " tf32 " : " fp32 ", describe(g));
      INFO(what);
      CHECK(dw.to_vector() == dw_alone.to_vector());  // the same kernels compute dw
      // db: the same sums in another order where the dy copy adds them up.
      check_column_sums(what, db.to_vector(), widened(db_alone.to_vector()), o.dy, 256.0);
    }
  }
}

TEST_CASE("conv2d_activation_backward_filter with dz on the GPU: dz, dw and db as the composed ops") {
  DeviceServices& gpu = device_services(Device::cuda());
  Generator rng(31);
  // Every path: the Hopper copy of dy that applies act', writes dz and sums db (32 and 64
  // channels, 10 output channels for the scalar loads; TF32 on an H100), the few-channels
  // kernel and the implicit GEMMs (3 and 5 channels, and FP32), where dz comes first.
  const Conv2dGeometry shapes[] = {
      geometry(33, 8, 8, 32, 3, 3, 40, 1, 1, Padding::Same),
      geometry(3, 6, 5, 32, 3, 3, 10, 1, 1, Padding::Same),
      geometry(3, 5, 7, 64, 3, 3, 64, 1, 1, Padding::Valid),
      geometry(4, 9, 7, 3, 3, 3, 32, 1, 1, Padding::Same),
      geometry(2, 7, 5, 5, 3, 3, 32, 1, 1, Padding::Same),
  };
  for (const Conv2dGeometry& g : shapes) {
    const Operands o = random_operands(g, rng);
    const Shape rows{g.batch * g.out_h * g.out_w, g.out_c};
    for (const Activation act : {Activation::Relu, Activation::Tanh, Activation::Sigmoid}) {
      // An output of the activation: Relu's half zero, Tanh's in (-1, 1), Sigmoid's in (0, 1).
      std::vector<float> y_values(o.dy.size());
      for (float& v : y_values) {
        const float u = rng.uniform();
        v = act == Activation::Relu ? std::max(0.0f, u - 0.5f) : act == Activation::Tanh ? 2.0f * u - 1.0f : u;
      }
      const Tensor x = on_gpu(o.x, g.x_shape()), dy = on_gpu(o.dy, g.y_shape()), y = on_gpu(y_values, g.y_shape());
      for (const bool tf32 : {false, true}) {
        gpu.set_tf32(tf32);
        Tensor dz_ref = poisoned(g.y_shape()), db_ref = poisoned({g.out_c}), dw_ref = poisoned(g.w_shape());
        Tensor dz_ref_rows = dz_ref.view(rows);
        raw::bias_activation_backward(act, y.view(rows), dy.view(rows), dz_ref_rows, db_ref);
        raw::conv2d_backward_filter(g, x, dz_ref, dw_ref);
        Tensor dz = poisoned(g.y_shape()), dw = poisoned(g.w_shape()), db = poisoned({g.out_c});
        raw::conv2d_activation_backward_filter(g, act, y, x, dy, dw, db, &dz);
        gpu.set_tf32(false);
        const std::string what = str("conv2d_activation_backward_filter with dz, act ", activation_name(act),
                                     tf32 ? " tf32 " : " fp32 ", describe(g));
        INFO(what);
        // dz: act'(y) dy, the same product; so dw from the same kernels on the same values.
        CHECK(dz.to_vector() == dz_ref.to_vector());
        CHECK(dw.to_vector() == dw_ref.to_vector());
        // db: dz's column sums, in another order where the dy copy adds them up.
        check_column_sums(what, db.to_vector(), widened(db_ref.to_vector()), dz_ref.to_vector(), 256.0);
      }
    }
  }
}

TEST_CASE("the Hopper kernel's tiles: the largest that still give 132 SMs a block each") {
  struct Case {
    const char* why;
    conv::Pass pass;
    Conv2dGeometry g;
    int bm, bn;
  };
  const Case cases[] = {
      {"CIFAR 32x32x32 -> 32, batch 100: 102,400 pixels, 800 tiles of 128 x 32", conv::Pass::Forward,
       geometry(100, 32, 32, 32, 3, 3, 32, 1, 1, Padding::Same), 128, 32},
      {"CIFAR 16x16x64 -> 64 backward-data: 25,600 pixels of 64 channels, 200 tiles of 128 x 64",
       conv::Pass::BackwardData, geometry(100, 16, 16, 64, 3, 3, 64, 1, 1, Padding::Same), 128, 64},
      {"CIFAR 8x8x128 -> 128: 6,400 pixels; 128 x 128 tiles are 50 blocks, 64 x 128 100: 64 x 64",
       conv::Pass::Forward, geometry(100, 8, 8, 128, 3, 3, 128, 1, 1, Padding::Same), 64, 64},
      {"too small for any tile to fill the SMs: the smallest, 64 x 32", conv::Pass::Forward,
       geometry(1, 4, 4, 32, 3, 3, 128, 1, 1, Padding::Same), 64, 32},
  };
  for (const Case& c : cases) {
    INFO(c.why);
    const conv::HopperTiles t = conv::choose_hopper_tiles(c.pass, c.g, 132);
    CHECK(t.bm == c.bm);
    CHECK(t.bn == c.bn);
  }
}

TEST_CASE("conv2d of an empty batch: nothing to compute, dw is zero") {
  DeviceServices& gpu = device_services(Device::cuda());
  const Conv2dGeometry g = geometry(0, 5, 5, 4, 3, 3, 8, 1, 1, Padding::Same);
  const Tensor x = Tensor::empty(g.x_shape(), DType::F32, Device::cuda());
  const Tensor dy = Tensor::empty(g.y_shape(), DType::F32, Device::cuda());
  Tensor dw = poisoned(g.w_shape());
  raw::conv2d_backward_filter(g, x, dy, dw);
  for (const float v : dw.to_vector()) CHECK(v == 0.0f);
  const Tensor w = on_gpu(std::vector<float>(static_cast<size_t>(numel(g.w_shape())), 1.0f), g.w_shape());
  Tensor y = Tensor::empty(g.y_shape(), DType::F32, Device::cuda());
  raw::conv2d_forward(g, x, w, y);  // must not launch anything invalid
  gpu.synchronize();
}

// ---- max pooling -----------------------------------------------------------------------------

namespace {

// Forward: each window's max; backward: dy to each window's first maximum in row-major order,
// windows in row-major order adding into dx (in float, in the order the kernel adds them).
void pool_reference(const Conv2dGeometry& g, const std::vector<float>& x, const std::vector<float>& dy,
                    std::vector<float>& y, std::vector<float>& dx) {
  y.assign(static_cast<size_t>(numel(g.y_shape())), 0.0f);
  dx.assign(x.size(), 0.0f);
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oh = 0; oh < g.out_h; ++oh)
      for (int64_t ow = 0; ow < g.out_w; ++ow)
        for (int64_t c = 0; c < g.in_c; ++c) {
          float best = -INFINITY;
          int64_t at = -1;
          for (int64_t kh = 0; kh < g.kernel_h; ++kh)
            for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
              const int64_t ih = oh * g.stride_h + kh - g.pad_top, iw = ow * g.stride_w + kw - g.pad_left;
              if (ih < 0 || ih >= g.in_h || iw < 0 || iw >= g.in_w) continue;
              const int64_t xi = ((n * g.in_h + ih) * g.in_w + iw) * g.in_c + c;
              if (at < 0 || x[static_cast<size_t>(xi)] > best) {
                best = x[static_cast<size_t>(xi)];
                at = xi;
              }
            }
          const size_t yi = static_cast<size_t>(((n * g.out_h + oh) * g.out_w + ow) * g.in_c + c);
          y[yi] = best;
          dx[static_cast<size_t>(at)] += dy[yi];
        }
}

struct PoolCase {
  int64_t batch, h, w, c, pool, stride;
  Padding padding;
};

// Pools x drawn by `value()` on the GPU, forward and backward, against pool_reference.
template <class Value>
void check_pool_against_reference(const PoolCase& k, Generator& rng, const Value& value) {
  const Conv2dGeometry g = pool2d_geometry({k.batch, k.h, k.w, k.c}, k.pool, k.pool, k.stride, k.stride, k.padding);
  std::vector<float> x(static_cast<size_t>(numel(g.x_shape())));
  for (float& v : x) v = value();
  const std::vector<float> dy = random_values(static_cast<size_t>(numel(g.y_shape())), rng);
  std::vector<float> y_ref, dx_ref;
  pool_reference(g, x, dy, y_ref, dx_ref);

  const Tensor tx = on_gpu(x, g.x_shape()), tdy = on_gpu(dy, g.y_shape());
  Tensor ty = poisoned(g.y_shape()), tdx = poisoned(g.x_shape());
  raw::max_pool2d_forward(g, tx, ty);
  raw::max_pool2d_backward(g, tx, ty, tdy, tdx);
  INFO("pool ", k.pool, " stride ", k.stride, " ", to_string(k.padding), " on (", k.batch, ", ", k.h, ", ",
       k.w, ", ", k.c, ")");
  CHECK(ty.to_vector() == y_ref);    // a max is exact
  CHECK(tdx.to_vector() == dx_ref);  // the same float additions in the same order
  if (!pool_windows_tile_input(g)) return;
  // Windows that tile x: the taps that training records, and the backward from them alone.
  Tensor taps = Tensor::empty(g.y_shape(), DType::U8, Device::cuda());
  Tensor ty2 = poisoned(g.y_shape()), tdx2 = poisoned(g.x_shape());
  raw::max_pool2d_forward_taps(g, tx, ty2, taps);
  raw::max_pool2d_backward_taps(g, taps, tdy, tdx2);
  CHECK(ty2.to_vector() == y_ref);
  CHECK(tdx2.to_vector() == dx_ref);
}

}  // namespace

TEST_CASE("max_pool2d forward and backward: ties, overlapping windows, leftover rows, padding") {
  Generator rng(17);
  const PoolCase cases[] = {
      {2, 8, 8, 3, 2, 2, Padding::Valid},    // the seed models' pool
      {2, 5, 7, 4, 2, 2, Padding::Valid},    // a leftover row and column: their dx is 0
      {2, 5, 7, 4, 2, 2, Padding::Same},     // padded bottom row / right column
      {3, 9, 9, 5, 3, 2, Padding::Same},     // overlapping windows add
      {1, 7, 6, 1, 3, 1, Padding::Valid},    // heavily overlapping
      {4, 32, 32, 32, 2, 2, Padding::Valid}, // seed 003's first pool at batch 4
  };
  // Few distinct values: most windows hold ties, which must go to the first maximum.
  for (const PoolCase& k : cases)
    check_pool_against_reference(k, rng, [&] { return static_cast<float>(rng.below(3)) - 1.0f; });
}

TEST_CASE("max_pool2d: windows of -inf keep their first element, on the tiled and the general path") {
  Generator rng(19);
  // 2x2 windows tiling x with 4 and with 3 channels (the tiled kernels' 16-byte and scalar
  // paths), and overlapping 3x3 windows (the general kernels).
  const PoolCase cases[] = {{2, 8, 8, 4, 2, 2, Padding::Valid},
                            {2, 6, 4, 3, 2, 2, Padding::Valid},
                            {2, 7, 7, 4, 3, 2, Padding::Valid}};
  // Mostly -inf: many windows hold nothing else, and their gradient goes to the first one.
  for (const PoolCase& k : cases)
    check_pool_against_reference(k, rng, [&] { return rng.below(4) == 0 ? -1.0f : -INFINITY; });
}

// ---- optimizers ---------------------------------------------------------------------------

TEST_CASE("rmsprop_update and adadelta_update: one step against hand-computed values") {
  Generator rng(23);
  const size_t n = 1031;  // not a multiple of the block size
  std::vector<float> p = random_values(n, rng), g = random_values(n, rng), s(n), u(n);
  for (size_t i = 0; i < n; ++i) {
    s[i] = rng.uniform();        // mean squares are >= 0
    u[i] = 0.1f * rng.uniform();
  }
  // Element 0 by hand: p = 1, g = 0.5, s = u = 0.
  p[0] = 1.0f;
  g[0] = 0.5f;
  s[0] = 0.0f;
  u[0] = 0.0f;
  // A few float roundings per element: 16 ulps of the values involved.
  auto close = [](double got, double want, double scale) { return std::fabs(got - want) <= 16.0 * U * scale + 1e-30; };

  SUBCASE("rmsprop, Keras' defaults") {
    const float lr = 1e-3f, rho = 0.9f, eps = 1e-7f;
    Tensor tp = on_gpu(p, {static_cast<int64_t>(n)}), tg = on_gpu(g, {static_cast<int64_t>(n)});
    Tensor ts = on_gpu(s, {static_cast<int64_t>(n)});
    raw::rmsprop_update(tp, tg, ts, lr, rho, eps);
    const std::vector<float> gp = tp.to_vector(), gs = ts.to_vector();
    // s = 0.1 * 0.25 = 0.025; p = 1 - 1e-3 * 0.5 / (sqrt(0.025) + 1e-7) = 0.996837722...
    CHECK(std::fabs(gs[0] - 0.025) <= 1e-8);
    CHECK(std::fabs(gp[0] - 0.99683772234) <= 1e-7);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
      const double si = double{rho} * s[i] + (1.0 - rho) * double{g[i]} * g[i];
      const double step = double{lr} * g[i] / (std::sqrt(si) + eps);
      const double pi = p[i] - step;
      if (!close(gs[i], si, si) || !close(gp[i], pi, std::fabs(p[i]) + std::fabs(step) * 4.0)) ++bad;
    }
    CHECK(bad == 0);
  }
  SUBCASE("adadelta, Keras' defaults") {
    const float lr = 1.0f, rho = 0.95f, eps = 1e-7f;
    Tensor tp = on_gpu(p, {static_cast<int64_t>(n)}), tg = on_gpu(g, {static_cast<int64_t>(n)});
    Tensor ts = on_gpu(s, {static_cast<int64_t>(n)}), tu = on_gpu(u, {static_cast<int64_t>(n)});
    raw::adadelta_update(tp, tg, ts, tu, lr, rho, eps);
    const std::vector<float> gp = tp.to_vector(), gs = ts.to_vector(), gu = tu.to_vector();
    // s = 0.05 * 0.25 = 0.0125; d = sqrt(1e-7) / sqrt(0.0125 + 1e-7) * 0.5 = 1.41420790e-3;
    // u = 0.05 d^2 = 1.0000e-7; p = 1 - d = 0.99858579...
    // 1 - rho is 0.050000012 in float (rho = 0.95f is 0.94999999): 3e-9 above 0.0125.
    CHECK(std::fabs(gs[0] - 0.0125) <= 1e-8);
    CHECK(std::fabs(gu[0] - 9.99992e-8) <= 1e-12);
    CHECK(std::fabs(gp[0] - 0.9985857921) <= 1e-7);
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
      const double si = double{rho} * s[i] + (1.0 - rho) * double{g[i]} * g[i];
      const double d = std::sqrt(u[i] + double{eps}) / std::sqrt(si + eps) * g[i];
      const double ui = double{rho} * u[i] + (1.0 - rho) * d * d;
      const double pi = p[i] - double{lr} * d;
      // sqrt(u + eps) rounds u + eps first: a few ulps of d, relative.
      if (!close(gs[i], si, si) || !close(gu[i], ui, ui * 4.0) ||
          !close(gp[i], pi, std::fabs(p[i]) + std::fabs(d) * 4.0))
        ++bad;
    }
    CHECK(bad == 0);
  }
}
