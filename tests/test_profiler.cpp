// --profile (core/profiler.h): the FLOP and byte formulas against hand-computed values, the
// verdicts against fake peaks, the report on a fake profile, and a real profiled CPU run.
// Profiling is process-wide, so this suite has its own executable.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/profiler.h"

using engine::Conv2dGeometry;
using engine::MeasuredPeaks;
using engine::OpProfile;
using engine::Tensor;

TEST_CASE("matmul_cost: 2mnk FLOPs, A + B + C bytes") {
  // The seed MLP's first layer: (32 x 784) @ (784 x 128).
  const engine::OpCost c = engine::matmul_cost(32, 128, 784);
  CHECK(c.flops == 2.0 * 32 * 128 * 784);  // 6,422,528
  CHECK(c.bytes == 4.0 * (32 * 784 + 784 * 128 + 32 * 128));  // 518,144
}

TEST_CASE("conv2d_cost: the implicit GEMM's FLOPs, x + w + y bytes") {
  // Dogs vs Cats' first layer: 32 images of 150x150x3, 32 filters of 3x3, valid: 148x148 out.
  Conv2dGeometry g;
  g.batch = 32, g.in_h = 150, g.in_w = 150, g.in_c = 3;
  g.kernel_h = 3, g.kernel_w = 3, g.out_c = 32, g.out_h = 148, g.out_w = 148;
  const engine::OpCost c = engine::conv2d_cost(g);
  CHECK(c.flops == 2.0 * (32.0 * 148 * 148) * 32 * 27);  // 1.21 GFLOP
  CHECK(c.bytes == 4.0 * (32.0 * 150 * 150 * 3 + 3 * 3 * 3 * 32 + 32.0 * 148 * 148 * 32));
}

TEST_CASE("elementwise_cost: FLOPs per element, 4 bytes per element per tensor") {
  const engine::OpCost c = engine::elementwise_cost(1000, 2.0, 3);
  CHECK(c.flops == 2000.0);
  CHECK(c.bytes == 12000.0);
}

TEST_CASE("verdict: launch floor first, then the ridge point") {
  const MeasuredPeaks peaks{1e12, 1e11, 2e-6};  // ridge: 10 FLOP per byte
  OpProfile row{"op", "", 10, 10 * 5e-6, {1e6, 1e6}};  // 5 us per call: under 3 x 2 us
  CHECK(engine::verdict(row, peaks) == "launch-bound");
  row.seconds = 10 * 1e-3;  // 1 ms per call
  CHECK(engine::verdict(row, peaks) == "memory-bound");  // 1 FLOP per byte
  row.cost.flops = 1e8;  // 100 FLOP per byte
  CHECK(engine::verdict(row, peaks) == "compute-bound");
  row.calls = 0;
  CHECK(engine::verdict(row, peaks) == "-");
}

TEST_CASE("print_profile: a fake profile's rows, shares, rates and the wall-time line") {
  engine::Profile p;
  p.device = "fake";
  p.peaks = {1e12, 1e11, 2e-6};
  p.ops = {{"matmul", "64x64 @ 64x64", 100, 0.2, {2e9, 1e6}},       // 2 ms/call, 1 TFLOP/s
           {"axpby", "1000", 100, 0.1, {3e3, 1.2e4}},              // 1 ms/call: memory-bound
           {"increment", "scalar", 50, 50 * 1e-6, {1.0, 8.0}}};   // 1 us: launch-bound
  p.op_seconds = 0.2 + 0.1 + 50e-6;
  p.wall_seconds = 0.5;
  std::ostringstream out;
  engine::print_profile(out, p, 2);
  const std::string text = out.str();
  CHECK(text.find("compute-bound") != std::string::npos);
  CHECK(text.find("memory-bound") != std::string::npos);
  CHECK(text.find("1000.0") != std::string::npos);     // 2e9 FLOP / 2 ms = 1000 GFLOP/s
  CHECK(text.find("100.0%  compute") != std::string::npos);  // of the 1 TFLOP/s peak
  CHECK(text.find("(the other ops)") != std::string::npos);  // the third row, summed
  CHECK(text.find("(60%)") != std::string::npos);       // 0.30005 s of 0.5 s wall
  // No host <-> device copies measured (the CPU): no line for them.
  CHECK(text.find("Host <-> device") == std::string::npos);
}

TEST_CASE("print_profile: the host <-> device bandwidths, where the device has them") {
  engine::Profile p;
  p.device = "fake gpu";
  p.peaks = {1e12, 1e11, 2e-6, 5.0e10, 2.5e10};
  p.wall_seconds = 1.0;
  std::ostringstream out;
  engine::print_profile(out, p);
  const std::string text = out.str();
  CHECK(text.find("Host <-> device (pinned): 50.00 GB/s in, 25.00 GB/s out") != std::string::npos);
}

TEST_CASE("a profiled CPU run counts every call and times it") {
  // Made before profiling starts: its fill is not seen, but the ops on it afterwards are (the
  // hook is read at every call, core/dispatch.h, whenever the tensors were made).
  const Tensor before = Tensor::full({8, 8}, 1.0f);
  engine::enable_profiling(engine::Device::cpu());
  REQUIRE(engine::profiling_enabled(engine::Device::cpu()));
  const Tensor a = Tensor::full({64, 32}, 1.0f), b = Tensor::full({32, 16}, 2.0f);
  for (int i = 0; i < 3; ++i) (void)engine::matmul(a, b);
  (void)engine::matmul(before, before);
  const engine::Profile p = engine::collect_profile(engine::Device::cpu());
  const OpProfile* row = nullptr;
  const OpProfile* before_row = nullptr;
  for (const OpProfile& r : p.ops) {
    if (r.op == "matmul" && r.shape == "64x32 @ 32x16") row = &r;
    if (r.op == "matmul" && r.shape == "8x8 @ 8x8") before_row = &r;
  }
  REQUIRE(row != nullptr);
  CHECK(row->shape == "64x32 @ 32x16");
  CHECK(row->calls == 3);
  REQUIRE(before_row != nullptr);
  CHECK(before_row->calls == 1);
  CHECK(row->seconds > 0.0);
  CHECK(row->cost.flops == 2.0 * 64 * 16 * 32);
  CHECK(p.peaks.flops_per_s > 0.0);
  CHECK(p.peaks.bytes_per_s > 0.0);
  CHECK(p.wall_seconds >= p.op_seconds);
}

TEST_CASE("profiled CPU run: scopes split rows and sum per scope; no host->device copy; a dot") {
  engine::enable_profiling(engine::Device::cpu());
  const Tensor a = Tensor::full({8, 4}, 1.0f), b = Tensor::full({4, 2}, 2.0f);
  {
    engine::ProfileScope forward("forward");
    (void)engine::matmul(a, b);
    {
      engine::ProfileScope inner("nan check g.g");
      CHECK(std::string(engine::current_profile_scope()) == "nan check g.g");
      const Tensor g = Tensor::full({1, 300}, 1.0f), h = Tensor::full({300, 1}, 1.0f);
      (void)engine::matmul(g, h);
    }
    CHECK(std::string(engine::current_profile_scope()) == "forward");
  }
  CHECK(engine::current_profile_scope() == nullptr);
  const std::vector<float> values(16, 1.0f);
  (void)Tensor::from_vector(values, {4, 4});  // a copy into a tensor: memory to memory on the CPU
  const engine::Profile p = engine::collect_profile(engine::Device::cpu());
  bool forward_row = false, dot_row = false;
  for (const OpProfile& r : p.ops) {
    CHECK(r.op.find("host->device") == std::string::npos);
    if (r.op == "matmul" && r.shape == "8x4 @ 4x2" && r.scope == "forward") forward_row = true;
    if (r.shape == "1x300 @ 300x1" && r.scope == "nan check g.g") {
      dot_row = true;
      CHECK(r.op.find("dot") != std::string::npos);
    }
  }
  CHECK(forward_row);
  CHECK(dot_row);
  std::ostringstream out;
  engine::print_profile(out, p, 100);
  const std::string text = out.str();
  CHECK(text.find("forward: matmul") != std::string::npos);
  CHECK(text.find("By scope:") != std::string::npos);
  CHECK(text.find("nan check g.g ") != std::string::npos);
  CHECK(text.find("host->device") == std::string::npos);
}
