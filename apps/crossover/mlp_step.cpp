// The seed-000 training step, swept over the batch size: the MLP of apps/mnist_mlp
// (Flatten -> Dense(128, relu) -> Dropout(0.2) -> Dense(10, softmax), Adam, sparse categorical
// cross-entropy) trained by the engine's own fit(), so each step is exactly what a training
// run does: gather the batch, forward, loss, backward, one Adam launch for all 101,770
// parameters, the running loss and accuracy on the device (23 kernels on the GPU).
//
// Napkin math: 6 B (784 x 128 + 128 x 10) = 610 kFLOP per sample, 19.5 MFLOP at the seed's
// B = 32, about 0.3 us of an H100's FP32 peak against 23 launches of ~2-3 us: launch-bound
// far past B = 32. Adam reads and writes 4 arrays of 101,770 floats per step whatever B is
// (1.6 MB), the floor of the CPU's step. Copies: 3,140 bytes per sample (a 784-pixel image and
// its label), 100 kB at B = 32.
//
// Timing: fit() times each epoch with the host's clock and synchronizes at its end, so a
// sample is one epoch of steps; the first epoch of each fit() (the op-by-op first step, the
// graph's recording) is left out.
#include <algorithm>
#include <memory>
#include <numeric>

#include "apps/crossover/workload.h"
#include "core/device_services.h"
#include "core/ops/random.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "nn/layers.h"
#include "nn/optimizers.h"
#include "nn/sequential.h"

namespace engine::crossover {
namespace {

// The same batch for every step, for as many steps as fit() asks: a step's cost without a
// data set's. With `from_host`, next() first copies the batch from host memory, as a framework
// feeding the GPU from the host does every step (the copy waits for the device: a sync a step).
class OneBatch final : public nn::BatchSource {
 public:
  OneBatch(int64_t batch, Device device, uint64_t seed, bool from_host)
      : host_{Tensor::empty({batch, 28, 28}), Tensor()}, from_host_(from_host) {
    raw::random_normal(host_.x, 0.5f, 0.25f, derive_seed(seed, 11));  // on the CPU
    Generator rng(derive_seed(seed, 12));
    std::vector<int32_t> labels(static_cast<size_t>(batch));
    for (int32_t& label : labels) label = static_cast<int32_t>(rng.below(10));
    host_.y = Tensor::from_ints(labels, {batch});
    data_ = {host_.x.to(device), host_.y.to(device)};
    std::vector<int32_t> rows(static_cast<size_t>(batch));
    std::iota(rows.begin(), rows.end(), 0);
    index_ = Tensor::from_ints(rows, {batch}, device);
  }

  // Endless: fit's steps_per_epoch decides how many steps an epoch has.
  int64_t size() const override { return data_.size() * (int64_t{1} << 30); }
  const nn::Dataset& rows() const override { return data_; }
  void start_epoch(int, int64_t, int64_t, int64_t) override {}
  Tensor next(int64_t, int64_t) override {
    if (from_host_) {
      DeviceServices& device = data_.x.services();
      device.copy_from_host(data_.x.raw_data(), host_.x.raw_data(), host_.x.nbytes());
      device.copy_from_host(data_.y.raw_data(), host_.y.raw_data(), host_.y.nbytes());
    }
    return index_;
  }

 private:
  nn::Dataset host_, data_;
  Tensor index_;
  bool from_host_;
};

class MlpStep final : public Workload {
 public:
  explicit MlpStep(const WorkloadSettings& settings) : seed_(settings.seed) {}
  std::string name() const override { return "mlp_step"; }
  std::string size_name() const override { return "batch"; }
  std::string description() const override {
    return "the seed-000 training step as fit() runs it (784-128-10 MLP, dropout, Adam): "
           "610 kFLOP per sample; copies: the batch in (3,140 bytes per sample)";
  }
  std::vector<int64_t> sizes(bool quick) const override {
    std::vector<int64_t> sizes;
    for (int64_t b = 1; b <= (quick ? 64 : 8192); b *= 2) sizes.push_back(b);
    return sizes;
  }

  StepTimes time(int64_t batch, Device device, Variant variant, const TimingPlan& plan) override {
    // apps/mnist_mlp's model (without --wide), as the header says.
    nn::Sequential model{nn::flatten(), nn::dense(128, Activation::Relu), nn::dropout(0.2f),
                         nn::dense(10, Activation::Softmax)};
    model.build({28, 28}, device, seed_);
    model.compile(std::make_unique<nn::Adam>(), nn::Loss::SparseCategoricalCrossentropy);
    OneBatch source(batch, device, seed_, variant == Variant::Copies);
    nn::FitOptions fit;
    fit.batch_size = batch;
    fit.seed = seed_;
    fit.verbose = false;
    fit.use_graph = variant == Variant::Graph;
    // A pilot: 2 epochs of 3 steps, the second in the steady state, to size the samples.
    fit.epochs = 2;
    fit.steps_per_epoch = 3;
    const nn::History pilot = model.fit(source, fit);
    const double one = pilot.epochs.back().seconds / 3.0;
    StepTimes t;
    t.steps_per_sample = steps_per_sample(plan, one, 3);  // the first epoch needs 2 to record
    const int samples = samples_within(plan, one * static_cast<double>(t.steps_per_sample));
    fit.epochs = 1 + samples;
    fit.steps_per_epoch = t.steps_per_sample;
    const nn::History history = model.fit(source, fit);
    for (size_t e = 1; e < history.epochs.size(); ++e) {
      t.per_step_ms.push_back(history.epochs[e].seconds * 1e3 / static_cast<double>(history.epochs[e].steps));
    }
    t.launches = history.kernels_per_step;
    t.timer = "wall clock + sync (fit's epochs)";
    return t;
  }

 private:
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Workload> make_mlp_step(const WorkloadSettings& s) { return std::make_unique<MlpStep>(s); }

}  // namespace engine::crossover
