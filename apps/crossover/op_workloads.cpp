// The op-level workloads of apps/crossover: a square matmul, one Dense layer's step and one
// 3x3 Conv2D layer's step, each op called at its dispatch point directly (raw::X, core/ops/:
// the kernels a layer runs, without autograd's bookkeeping on the host, which mlp_step
// includes).
//
// Napkin math (FP32, FLOPs count a multiply-add as 2):
//   matmul n:     2 n^3 FLOP; copies a, b in and c out: 12 n^2 bytes. At n = 4096: 137 GFLOP,
//                 2.7 ms at cuBLAS' 51.6 TFLOP/s on an H100, against 201 MB of
//                 copies: ~8 ms at an assumed 25 GB/s from pageable host memory (the copies
//                 curve measures it). Copies grow as n^2 and work as n^3, but at every n this
//                 sweep reaches the copies would still take longer than the product.
//   dense width w, batch B: y = relu(x W + b), then dz = relu'(y) dy with db, dx = dz W^T and
//                 dW = x^T dz: 3 GEMMs of 2 B w^2, 6 B w^2 FLOP. B = 32, w = 128: 3.1 MFLOP,
//                 0.05 us at an H100's 62 TFLOP/s FP32 peak (1 us at 5% of it), far below
//                 the 5 launches' ~3 us each: launch-bound until w is in the thousands.
//   conv channels C (in = out), 32x32 images (CIFAR-10's), batch B, 3x3 same: forward,
//                 bias + relu and its backward, backward-data, backward-filter: 3 implicit GEMMs
//                 of 2 (B 32 32) C (9 C), 55,296 B C^2 FLOP. B = 32, C = 64: 7.2 GFLOP.
#include <functional>
#include <memory>

#include "apps/crossover/step_timing.h"
#include "apps/crossover/workload.h"
#include "core/conv_geometry.h"
#include "core/device_services.h"
#include "core/error.h"
#include "core/ops/activation.h"
#include "core/ops/conv2d.h"
#include "core/ops/matmul.h"
#include "core/ops/random.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace engine::crossover {
namespace {

// One step at one size, its tensors on the device, ready to run. The closures hold the
// tensors (shared handles), so they live as long as the step does.
struct OpStep {
  std::function<void()> run;       // the step's kernels, on resident data
  std::function<void()> upload;    // Copies: the step's inputs from host memory
  std::function<void()> download;  // Copies: what the host reads back; empty: it waits instead
};

Tensor random_tensor(const Shape& shape, Device device, uint64_t seed) {
  Tensor t = Tensor::empty(shape, DType::F32, device);
  raw::random_normal(t, 0.0f, 1.0f, seed);
  return t;
}

// Copies `t`'s contents from a host copy made now: what feeding `t` from host memory costs.
std::function<void()> upload_from_host(const Tensor& t) {
  const Tensor host = t.to(Device::cpu());
  return [t, host] { t.services().copy_from_host(t.raw_data(), host.raw_data(), host.nbytes()); };
}

// What a sweep is over: its name, what its size means, and sizes from `first` doubling up to
// `last` (`quick_last` in a short run).
struct Sweep {
  std::string name, size_name;
  int64_t first, last, quick_last;
};

// Times an OpStep in any variant; the workloads only say how to build their step.
class OpWorkload : public Workload {
 public:
  OpWorkload(const WorkloadSettings& settings, Sweep sweep) : settings_(settings), sweep_(std::move(sweep)) {}
  std::string name() const override { return sweep_.name; }
  std::string size_name() const override { return sweep_.size_name; }
  std::vector<int64_t> sizes(bool quick) const override {
    std::vector<int64_t> sizes;
    for (int64_t s = sweep_.first; s <= (quick ? sweep_.quick_last : sweep_.last); s *= 2) sizes.push_back(s);
    return sizes;
  }

  StepTimes time(int64_t size, Device device, Variant variant, const TimingPlan& plan) override {
    const OpStep step = prepare(size, device);
    DeviceServices& services = device_services(device);
    if (variant == Variant::Copies) {
      return time_steps(services, [&] {
        step.upload();
        step.run();
        if (step.download) {
          step.download();  // returns when the host has the result
        } else {
          services.synchronize();
        }
      }, plan, Clock::WallClock);
    }
    if (variant != Variant::Graph) return time_steps(services, step.run, plan, Clock::DeviceTimers);
    step.run();  // outside the recording: fills the allocator's cache as a training run's first step does
    std::unique_ptr<StepGraph> graph;
    try {
      graph = services.capture(step.run);
    } catch (const DeviceError&) {
      throw;  // the device itself failed: not a property of this step
    } catch (const Error& e) {
      StepTimes t;
      t.not_measured = std::string("the step cannot be recorded as a graph: ") + e.what();
      return t;
    }
    if (!graph) {
      StepTimes t;
      t.not_measured = services.name() + " cannot record graphs";
      return t;
    }
    StepTimes t = time_steps(services, [&] { graph->replay(); }, plan, Clock::DeviceTimers);
    t.launches = graph->kernel_count();
    return t;
  }

 protected:
  virtual OpStep prepare(int64_t size, Device device) const = 0;
  uint64_t seed(uint64_t stream) const { return derive_seed(settings_.seed, stream); }
  int64_t batch() const { return settings_.batch_size; }

 private:
  WorkloadSettings settings_;
  Sweep sweep_;
};

class Matmul final : public OpWorkload {
 public:
  explicit Matmul(const WorkloadSettings& settings) : OpWorkload(settings, {"matmul", "n", 16, 4096, 128}) {}
  std::string description() const override {
    return "c = a @ b, n x n, FP32: 2 n^3 FLOP; copies: a, b in, c out (12 n^2 bytes)";
  }

 protected:
  OpStep prepare(int64_t n, Device device) const override {
    const Tensor a = random_tensor({n, n}, device, seed(1));
    const Tensor b = random_tensor({n, n}, device, seed(2));
    Tensor c = Tensor::empty({n, n}, DType::F32, device);
    const Tensor c_host = Tensor::empty({n, n});
    OpStep step;
    step.run = [a, b, c]() mutable { raw::matmul(a, false, b, false, c, 1.0f, 0.0f); };
    const auto upload_a = upload_from_host(a), upload_b = upload_from_host(b);
    step.upload = [upload_a, upload_b] {
      upload_a();
      upload_b();
    };
    step.download = [c, c_host] { c.services().copy_to_host(c_host.raw_data(), c.raw_data(), c.nbytes()); };
    return step;
  }
};

// The tensors of one layer's step, y = relu(op(x, w) + bias) and its backward from dy (the
// gradient the layer above hands down): z, y, dy, dz as (rows, units) matrices, for the bias
// and the relu; z_out and dz_out the same storage as z and dz in the op's own output shape
// (a conv's NHWC image: its rows are the pixels, its units the channels).
struct LayerTensors {
  Tensor x, w, bias, dy, z, y, dz, db, dx, dw, z_out, dz_out;
};

// The layer's own op: z = op(x, w) (forward), dx and dw from dz (its two backward passes).
using LayerPass = std::function<void(LayerTensors&)>;

// A layer step: forward, bias + relu, their backward (dz and db in one pass), backward-data,
// backward-filter: the kernels an engine layer runs; copies feed x from host memory.
OpStep layer_step(const Shape& x_shape, const Shape& w_shape, const Shape& out_shape, Device device,
                  uint64_t seed, LayerPass forward, LayerPass backward_data, LayerPass backward_filter) {
  const int64_t units = out_shape.back(), rows = numel(out_shape) / units;
  auto empty = [&](const Shape& shape) { return Tensor::empty(shape, DType::F32, device); };
  LayerTensors t{random_tensor(x_shape, device, derive_seed(seed, 0)),
                 random_tensor(w_shape, device, derive_seed(seed, 1)),
                 random_tensor({units}, device, derive_seed(seed, 2)),
                 random_tensor({rows, units}, device, derive_seed(seed, 3)),
                 empty({rows, units}), empty({rows, units}), empty({rows, units}), empty({units}),
                 empty(x_shape), empty(w_shape), Tensor(), Tensor()};
  t.z_out = t.z.view(out_shape);
  t.dz_out = t.dz.view(out_shape);
  OpStep step;
  step.upload = upload_from_host(t.x);
  step.run = [t, forward, backward_data, backward_filter]() mutable {
    forward(t);
    raw::bias_activation_forward(Activation::Relu, t.z, t.bias, t.y);  // y = relu(z + b)
    raw::bias_activation_backward(Activation::Relu, t.y, t.dy, t.dz, t.db);  // dz = [y > 0] dy
    backward_data(t);
    backward_filter(t);
  };
  return step;
}

class DenseStep final : public OpWorkload {
 public:
  explicit DenseStep(const WorkloadSettings& settings) : OpWorkload(settings, {"dense", "width", 16, 4096, 128}) {}
  std::string description() const override {
    return "one Dense(width, relu) layer on (batch " + std::to_string(batch()) +
           ", width): forward, relu + bias backward, dW, dx: 6 batch width^2 FLOP; "
           "copies: the input x in";
  }

 protected:
  OpStep prepare(int64_t w, Device device) const override {
    return layer_step(
        {batch(), w}, {w, w}, {batch(), w}, device, seed(3),
        [](LayerTensors& t) { raw::matmul(t.x, false, t.w, false, t.z, 1.0f, 0.0f); },    // z = x W
        [](LayerTensors& t) { raw::matmul(t.dz, false, t.w, true, t.dx, 1.0f, 0.0f); },   // dx = dz W^T
        [](LayerTensors& t) { raw::matmul(t.x, true, t.dz, false, t.dw, 1.0f, 0.0f); });  // dW = x^T dz
  }
};

class ConvStep final : public OpWorkload {
 public:
  explicit ConvStep(const WorkloadSettings& settings) : OpWorkload(settings, {"conv", "channels", 4, 256, 8}) {}
  std::string description() const override {
    return "one Conv2D(channels, 3x3, same, relu) layer on (batch " + std::to_string(batch()) +
           ", 32, 32, channels): forward, relu + bias backward, backward-data, backward-filter: "
           "55,296 batch channels^2 FLOP; copies: the input x in";
  }

 protected:
  OpStep prepare(int64_t c, Device device) const override {
    constexpr int64_t IMAGE = 32;
    const Conv2dGeometry g = conv2d_geometry({batch(), IMAGE, IMAGE, c}, {3, 3, c, c}, 1, 1, Padding::Same);
    return layer_step(
        g.x_shape(), g.w_shape(), g.y_shape(), device, seed(4),
        [g](LayerTensors& t) { raw::conv2d_forward(g, t.x, t.w, t.z_out); },
        [g](LayerTensors& t) { raw::conv2d_backward_data(g, t.dz_out, t.w, t.dx); },
        [g](LayerTensors& t) { raw::conv2d_backward_filter(g, t.x, t.dz_out, t.dw); });
  }
};

}  // namespace

std::unique_ptr<Workload> make_matmul(const WorkloadSettings& s) { return std::make_unique<Matmul>(s); }
std::unique_ptr<Workload> make_dense(const WorkloadSettings& s) { return std::make_unique<DenseStep>(s); }
std::unique_ptr<Workload> make_conv(const WorkloadSettings& s) { return std::make_unique<ConvStep>(s); }

}  // namespace engine::crossover
