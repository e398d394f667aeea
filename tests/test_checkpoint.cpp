// Checkpoints (nn/checkpoint.h) and what fit does with them: a run stopped mid-epoch or at an
// epoch boundary and resumed ends with the weights of a straight run, bit for bit, with every
// optimizer; a resumed run with other settings or other data (as many samples, one number
// changed) is refused, naming the file; a version-1 file still loads; the state after fit is
// fit's last checkpoint; bad files are refused with one line, the model untouched; NaN weights
// are never saved; the NaN check names the epoch, the step and the parameter. The command line
// around them (signals, kill -9 mid-write) is tests/test_checkpoint_cli.sh.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/binary_file.h"
#include "core/error.h"
#include "nn/checkpoint.h"
#include "nn/layers.h"
#include "nn/optimizers.h"
#include "nn/weights_io.h"
#include "tests/file_fixtures.h"

using namespace engine;
using engine::test::check_message;
using engine::test::error_of;
using engine::test::TempDir;

namespace {

constexpr int EPOCHS = 3;

// 43 samples of (2, 3) with labels 0/1: batches of 8 make 6 steps, the last one partial.
nn::Dataset toy_data(int64_t n = 43) {
  Generator rng(11);
  std::vector<float> x(static_cast<size_t>(n * 6));
  std::vector<int32_t> y(static_cast<size_t>(n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = rng.uniform() - 0.5f;
  for (size_t i = 0; i < y.size(); ++i) y[i] = x[i * 6] > x[i * 6 + 5] ? 1 : 0;
  return {Tensor::from_vector(x, {n, 2, 3}), Tensor::from_ints(y, {n})};
}

using MakeOptimizer = std::function<std::unique_ptr<nn::Optimizer>()>;

// Dense -> Dropout -> Dense: dropout draws from the step counter, so a resumed run must restore it.
nn::Sequential toy_model(const MakeOptimizer& optimizer, uint64_t seed, int64_t hidden = 8) {
  nn::Sequential model{nn::flatten(), nn::dense(hidden, Activation::Relu), nn::dropout(0.3f),
                       nn::dense(2, Activation::Softmax)};
  model.build({2, 3}, Device::cpu(), seed);
  model.compile(optimizer(), nn::Loss::SparseCategoricalCrossentropy);
  return model;
}

nn::FitOptions fit_options() {
  nn::FitOptions options;
  options.epochs = EPOCHS;
  options.batch_size = 8;
  options.seed = 7;
  options.verbose = false;
  return options;
}

// Raises `flag` as the batch of (epoch, step) is drawn, so that fit stops right after that
// step (1-based), as a signal arriving during it would make it.
class StopAt final : public nn::BatchSource {
 public:
  StopAt(nn::BatchSource& inner, int epoch, int64_t step, std::atomic<int>& flag)
      : inner_(inner), stop_epoch_(epoch), stop_step_(step), flag_(flag) {}
  int64_t size() const override { return inner_.size(); }
  const nn::Dataset& rows() const override { return inner_.rows(); }
  void start_epoch(int epoch, int64_t steps, int64_t batch, int64_t first_step) override {
    epoch_ = epoch;
    batch_ = batch;
    inner_.start_epoch(epoch, steps, batch, first_step);
  }
  Tensor next(int64_t first, int64_t count) override {
    if (epoch_ == stop_epoch_ && first / batch_ + 1 == stop_step_) flag_.store(SIGINT);
    return inner_.next(first, count);
  }
  Bytes state() const override { return inner_.state(); }
  void restore_state(const Bytes& state) override { inner_.restore_state(state); }
  uint64_t fingerprint() const override { return inner_.fingerprint(); }

 private:
  nn::BatchSource& inner_;
  int stop_epoch_;
  int64_t stop_step_;
  std::atomic<int>& flag_;
  int epoch_ = 0;
  int64_t batch_ = 1;
};

// Trains EPOCHS epochs straight, and again stopped after (epoch, step) and resumed from the
// checkpoint into a model built with other initial weights; both must end the same.
void check_resume_matches_straight(const MakeOptimizer& optimizer, int epoch, int64_t step) {
  const nn::Dataset data = toy_data();
  TempDir dir;
  const std::string path = dir.file("run.ckpt");

  nn::Sequential straight = toy_model(optimizer, 1);
  const nn::History expected = straight.fit(data, fit_options());

  nn::Sequential first = toy_model(optimizer, 1);
  std::atomic<int> flag{0};
  nn::FitOptions stopping = fit_options();
  stopping.checkpoint_path = path;
  stopping.stop_signal = &flag;
  nn::ResidentBatches batches(data, stopping, Device::cpu());
  StopAt source(batches, epoch, step, flag);
  const nn::History stopped = first.fit(source, stopping);
  CHECK(stopped.interrupted_by == SIGINT);
  CHECK(stopped.checkpoint_saved);
  const bool at_boundary = step == 6;  // the epoch's last step: the epoch is finished first
  CHECK(stopped.stopped_epoch == (at_boundary ? epoch + 1 : epoch));
  CHECK(stopped.stopped_step == (at_boundary ? 0 : step));

  nn::Sequential second = toy_model(optimizer, 99);  // other initial weights, overwritten
  const nn::TrainingState state = nn::load_checkpoint(second, path);
  CHECK(state.epoch == stopped.stopped_epoch);
  CHECK(state.step == stopped.stopped_step);
  nn::FitOptions resuming = fit_options();
  resuming.resume = &state;
  const nn::History resumed = second.fit(data, resuming);

  CHECK(second.parameters().values.to_vector() == straight.parameters().values.to_vector());
  CHECK(second.step_counter().to_int_vector() == straight.step_counter().to_int_vector());
  REQUIRE(resumed.epochs.size() == expected.epochs.size());
  for (size_t e = 0; e < expected.epochs.size(); ++e) {
    CHECK(resumed.epochs[e].epoch == expected.epochs[e].epoch);
    CHECK(resumed.epochs[e].loss == expected.epochs[e].loss);
    CHECK(resumed.epochs[e].accuracy == expected.epochs[e].accuracy);
  }
  // The resumed process warms up again, in the epoch it goes on with (two full steps are left
  // in it in every case here); the epochs before it are not its own and have no step timing.
  for (const nn::EpochRecord& e : resumed.epochs) {
    INFO("epoch ", e.epoch);
    if (e.epoch < state.epoch) {
      CHECK(e.warmup_steps + e.steady_steps == 0);
    } else if (e.epoch == state.epoch) {
      CHECK(e.warmup_steps == 2);
      CHECK(e.warmup_steps + e.steady_steps == e.steps - state.step);
      CHECK(e.warmup_seconds + e.steady_seconds == doctest::Approx(e.seconds - state.seconds));
    } else {
      CHECK(e.warmup_steps == 0);
      CHECK(e.steady_steps == e.steps);
    }
  }
}

std::unique_ptr<nn::Optimizer> adam() { return std::make_unique<nn::Adam>(); }

}  // namespace

TEST_CASE("stopped and resumed equals straight through, bit for bit, with every optimizer") {
  const std::vector<std::pair<const char*, MakeOptimizer>> optimizers = {
      {"Adam", adam},
      {"SGD with momentum", [] { return std::make_unique<nn::SGD>(0.05f, 0.9f); }},
      {"RMSprop", [] { return std::make_unique<nn::RMSprop>(); }},
      {"Adadelta", [] { return std::make_unique<nn::Adadelta>(); }},
  };
  for (const auto& entry : optimizers) {  // (no structured binding: INFO captures it, Clang refuses)
    const MakeOptimizer& optimizer = entry.second;
    INFO("optimizer: ", entry.first);
    SUBCASE("mid-epoch") { check_resume_matches_straight(optimizer, 2, 3); }
    SUBCASE("at an epoch boundary") { check_resume_matches_straight(optimizer, 1, 6); }
    SUBCASE("in the first step") { check_resume_matches_straight(optimizer, 1, 1); }
  }
}

TEST_CASE("checkpoints every N epochs and after the last; a resumed run needs the same settings") {
  const nn::Dataset data = toy_data();
  TempDir dir;
  nn::Sequential model = toy_model(adam, 1);
  nn::FitOptions options = fit_options();
  options.checkpoint_path = dir.file("every2.ckpt");
  options.checkpoint_every = 2;
  model.fit(data, options);
  nn::Sequential other = toy_model(adam, 1);
  nn::TrainingState state = nn::load_checkpoint(other, options.checkpoint_path);
  CHECK(state.epoch == EPOCHS + 1);  // saved after the last epoch (3), not only after epoch 2
  CHECK(state.history.size() == EPOCHS);

  // Every refusal names the checkpoint's file (before issue 24, none did).
  const std::string& file = options.checkpoint_path;
  nn::FitOptions resuming = fit_options();
  resuming.resume = &state;
  resuming.seed = 8;
  check_message(error_of([&] { other.fit(data, resuming); }),
                {file + ": saved by a run with seed 7", "this run has seed 8", "same seed"});
  resuming.seed = 7;
  resuming.batch_size = 4;
  check_message(error_of([&] { other.fit(data, resuming); }),
                {file + ": ", "batch size 8", "batch size 4"});
  resuming.batch_size = 8;
  resuming.epochs = 2;
  check_message(error_of([&] { other.fit(data, resuming); }),
                {file + ": has 3 epochs done, more than the 2"});
  resuming.epochs = EPOCHS;
  const nn::Dataset more = toy_data(50);  // 7 steps of 8, not 6
  check_message(error_of([&] { other.fit(more, resuming); }), {file + ": ", "7 steps per epoch"});
  const nn::Dataset fewer = toy_data(41);  // still 6 steps, but not the same samples
  check_message(error_of([&] { other.fit(fewer, resuming); }),
                {file + ": saved by a run on other training data (43 samples",
                 "this run trains on 41 samples"});
  // A checkpoint in the middle of epoch 2 is past a run of 1 epoch.
  {
    nn::Sequential stopped = toy_model(adam, 1);
    std::atomic<int> flag{0};
    nn::FitOptions stopping = fit_options();
    stopping.checkpoint_path = dir.file("mid.ckpt");
    stopping.stop_signal = &flag;
    nn::ResidentBatches batches(data, stopping, Device::cpu());
    StopAt source(batches, 2, 3, flag);
    stopped.fit(source, stopping);
    nn::TrainingState mid = nn::load_checkpoint(stopped, stopping.checkpoint_path);
    nn::FitOptions one = fit_options();
    one.epochs = 1;
    one.resume = &mid;
    check_message(error_of([&] { stopped.fit(data, one); }),
                  {stopping.checkpoint_path, "1 epochs done and part of the next, more than the 1"});
  }
  // Nothing left to do: the history comes back whole, the weights stay.
  const std::vector<float> before = other.parameters().values.to_vector();
  const nn::History done = other.fit(data, resuming);
  CHECK(done.epochs.size() == EPOCHS);
  CHECK(other.parameters().values.to_vector() == before);
}

namespace {

// One epoch of the toy run, checkpointed to `path`.
void train_one_epoch(const nn::Dataset& data, const std::string& path) {
  nn::Sequential model = toy_model(adam, 1);
  nn::FitOptions options = fit_options();
  options.epochs = 1;
  options.checkpoint_path = path;
  options.checkpoint_every = 1;
  model.fit(data, options);
}

// `data` with one number of `which` (its inputs or its labels) changed.
nn::Dataset with_one_change(const nn::Dataset& data, bool labels) {
  if (labels) {
    std::vector<int32_t> y = data.y.to_int_vector();
    y[17] = 1 - y[17];
    return {data.x, Tensor::from_ints(y, data.y.shape())};
  }
  std::vector<float> x = data.x.to_vector();
  x[100] += 0.25f;
  return {Tensor::from_vector(x, data.x.shape()), data.y};
}

}  // namespace

TEST_CASE("resuming on other data is refused naming the checkpoint, with the same sample count") {
  const nn::Dataset data = toy_data();
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  train_one_epoch(data, path);
  nn::Sequential model = toy_model(adam, 1);
  const nn::TrainingState state = nn::load_checkpoint(model, path);
  CHECK(state.file == path);
  CHECK(state.data_samples == 43);
  CHECK(state.data_fingerprint == nn::fingerprint_of(data));
  nn::FitOptions resuming = fit_options();
  resuming.resume = &state;
  // 43 samples each, one number changed (before issue 24, both resumed without a word).
  for (const bool labels : {false, true}) {
    const std::string changed = labels ? "a label changed" : "an input changed";
    INFO(changed);
    check_message(error_of([&] { model.fit(with_one_change(data, labels), resuming); }),
                  {path + ": saved by a run on other training data (43 samples, fingerprint ",
                   "this run trains on 43 samples, fingerprint ",
                   "(resume on the data the checkpoint was saved with)"});
  }
  // The same data in other tensors resumes: the fingerprint is of the bytes, not where they are.
  const nn::Dataset copy{data.x.clone(), data.y.clone()};
  const nn::History resumed = model.fit(copy, resuming);
  CHECK(resumed.epochs.size() == EPOCHS);
}

TEST_CASE("a checkpoint of format version 1, without a data fingerprint, still loads and resumes") {
  const nn::Dataset data = toy_data();
  TempDir dir;
  const std::string path = dir.file("v2.ckpt"), old = dir.file("v1.ckpt");
  train_one_epoch(data, path);
  // Version 1 is version 2 without the sample count and fingerprint, the 16 bytes after the
  // magic (8), the version (4), the seed, the batch size and the steps per epoch (8 each).
  engine::test::Bytes bytes = engine::test::read_bytes(path);
  bytes.erase(bytes.begin() + 36, bytes.begin() + 52);
  bytes[8] = 1;
  const size_t body = bytes.size() - 4;
  const uint32_t crc = crc32_of(reinterpret_cast<const char*>(bytes.data()), body);
  std::memcpy(bytes.data() + body, &crc, sizeof crc);
  engine::test::write_bytes(old, bytes);

  nn::Sequential model = toy_model(adam, 5);
  const nn::TrainingState state = nn::load_checkpoint(model, old);
  CHECK(state.data_fingerprint == 0);
  CHECK(state.epoch == 2);
  nn::FitOptions resuming = fit_options();
  resuming.resume = &state;
  // Its data is not checked, but its shuffling state is for 43 samples, and a refusal of it
  // names the file too.
  check_message(error_of([&] { model.fit(toy_data(41), resuming); }),
                {old + ": the checkpoint's shuffling state", "not for 41 training samples"});
  CHECK(model.fit(data, resuming).epochs.size() == EPOCHS);
}

TEST_CASE("state_after_fit is what fit's own checkpoint after the last epoch holds, byte for byte") {
  // The apps save it when a signal comes after fit and nothing else keeps the trained model.
  const nn::Dataset data = toy_data();
  TempDir dir;
  nn::Sequential model = toy_model(adam, 1);
  nn::FitOptions options = fit_options();
  options.checkpoint_path = dir.file("by_fit.ckpt");
  options.checkpoint_every = EPOCHS;
  nn::ResidentBatches batches(data, options, Device::cpu());
  const nn::History history = model.fit(batches, options);
  const std::string after = dir.file("after_fit.ckpt");
  nn::save_checkpoint(model, nn::state_after_fit(options, batches, history), after);
  CHECK(engine::test::read_bytes(after) == engine::test::read_bytes(options.checkpoint_path));
}

TEST_CASE("bad checkpoints are refused with one line naming the file, the model untouched") {
  TempDir dir;
  const std::string good = dir.file("good.ckpt"), bad = dir.file("bad.ckpt");
  {
    nn::Sequential model = toy_model(adam, 1);
    nn::FitOptions options = fit_options();
    options.epochs = 1;
    options.checkpoint_path = good;
    options.checkpoint_every = 1;
    model.fit(toy_data(), options);
  }
  const engine::test::Bytes bytes = engine::test::read_bytes(good);
  nn::Sequential model = toy_model(adam, 5);
  const std::vector<float> before = model.parameters().values.to_vector();
  const auto refused = [&](const std::string& path) {
    return error_of([&] { nn::load_checkpoint(model, path); });
  };

  check_message(refused(dir.file("missing.ckpt")), {"checkpoint file", "missing.ckpt", "no such file"});
  engine::test::write_bytes(bad, {});
  check_message(refused(bad), {bad, "truncated"});
  engine::test::write_bytes(bad, engine::test::Bytes(bytes.begin(), bytes.begin() + 100));
  check_message(refused(bad), {bad, "checksum mismatch"});
  engine::test::Bytes copy = bytes;
  copy[0] = 'X';
  engine::test::write_bytes(bad, copy);
  check_message(refused(bad), {bad, "not a checkpoint file (bad magic)"});
  copy = bytes;
  copy[8] = static_cast<uint8_t>(nn::CHECKPOINT_FORMAT_VERSION + 1);  // version: bytes 8..11
  engine::test::write_bytes(bad, copy);
  check_message(refused(bad), {bad, "written by a newer engine (format version " +
                                        std::to_string(nn::CHECKPOINT_FORMAT_VERSION + 1)});
  copy = bytes;
  copy[copy.size() / 2] ^= 0x10;
  engine::test::write_bytes(bad, copy);
  check_message(refused(bad), {bad, "checksum mismatch"});
  nn::save_weights(model, bad);
  check_message(refused(bad), {bad, "a weights file", "not a checkpoint"});

  nn::Sequential wider = toy_model(adam, 1, 9);
  check_message(error_of([&] { nn::load_checkpoint(wider, good); }),
                {good, "'dense/kernel' has shape (6, 8) in the file but (6, 9) in the model"});
  nn::Sequential rmsprop = toy_model([] { return std::make_unique<nn::RMSprop>(); }, 1);
  check_message(error_of([&] { nn::load_checkpoint(rmsprop, good); }),
                {good, "holds the state of Adam but the model trains with RMSprop"});

  CHECK(model.parameters().values.to_vector() == before);
  CHECK(model.step_counter().to_int_vector() == std::vector<int32_t>{0});
}

TEST_CASE("a checkpoint of NaN weights is refused and the previous one stays") {
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  nn::Sequential model = toy_model(adam, 1);
  nn::save_checkpoint(model, nn::TrainingState{}, path);
  const engine::test::Bytes saved = engine::test::read_bytes(path);
  std::vector<float> values = model.parameters().values.to_vector();
  values.back() = std::numeric_limits<float>::quiet_NaN();  // dense_1/bias, the last parameter
  model.parameters().values.copy_from(Tensor::from_vector(values, {model.parameter_count()}));
  check_message(error_of([&] { nn::save_checkpoint(model, nn::TrainingState{}, path); }),
                {path, "not saving a checkpoint", "dense_1/bias holds nan",
                 "the previous checkpoint is kept"});
  CHECK(engine::test::read_bytes(path) == saved);
}

TEST_CASE("the NaN check names the epoch, the step and the first parameter in forward order") {
  nn::Dataset data = toy_data();
  std::vector<float> x = data.x.to_vector();
  x[20 * 6 + 4] = std::numeric_limits<float>::quiet_NaN();  // sample 20: step 3 unshuffled
  data.x = Tensor::from_vector(x, data.x.shape());
  TempDir dir;
  nn::Sequential model = toy_model(adam, 1);
  nn::FitOptions options = fit_options();
  options.shuffle = false;
  options.check_numerics = true;
  options.checkpoint_path = dir.file("run.ckpt");
  options.checkpoint_every = 1;
  // (relu turns the NaN input into 0 on the way forward, so the loss stays finite: only the
  // first kernel's gradient, x^T dy, sees it.)
  check_message(error_of([&] { model.fit(data, options); }),
                {"NaN/Inf at epoch 1, step 3/6", "gradient of dense/kernel (forward order)",
                 "Training stopped without saving it"});
  // Unchecked, training goes on with NaN weights, and the epoch's checkpoint refuses them.
  options.check_numerics = false;
  nn::Sequential unchecked = toy_model(adam, 1);
  check_message(error_of([&] { unchecked.fit(data, options); }),
                {"not saving a checkpoint", "holds nan"});
}

namespace {

// Dense(1) regression to targets of 1e9 with SGD at 1e30 (issue 24): every step's loss (~1e18)
// and gradients (~2e9) are finite, but the update (~2e39) overflows the weights to infinity.
// With one step per epoch, only the weights after the run's last update show it.
nn::Sequential overflowing_model() {
  nn::Sequential model{nn::flatten(), nn::dense(1)};
  model.build({2, 3}, Device::cpu(), 1);
  model.compile(std::make_unique<nn::SGD>(1e30f), nn::Loss::MeanSquaredError);
  return model;
}

nn::Dataset overflowing_data(int64_t n) {
  return {Tensor::from_vector(std::vector<float>(static_cast<size_t>(n * 6), 1.0f), {n, 2, 3}),
          Tensor::from_vector(std::vector<float>(static_cast<size_t>(n), 1e9f), {n})};
}

}  // namespace

TEST_CASE("the NaN check also checks the weights of the run's last update, which --save writes") {
  TempDir dir;
  const std::string weights = dir.file("model.weights");
  nn::Sequential model = overflowing_model();
  nn::save_weights(model, weights);  // an earlier run's good file
  const engine::test::Bytes good = engine::test::read_bytes(weights);
  nn::FitOptions options = fit_options();
  options.epochs = 1;
  options.batch_size = 4;  // one step: the last update is the only one
  options.check_numerics = true;
  // Before issue 24, fit returned normally here with infinite weights (the app then saved them).
  check_message(error_of([&] { model.fit(overflowing_data(4), options); }),
                {"NaN/Inf at epoch 1, step 1/1", "in the weights of dense/kernel (forward order)",
                 "after the step's update", "value inf", "Training stopped without saving it"});
  // The app's --save after such a run (here without the check) is refused too, the file kept.
  check_message(error_of([&] { nn::save_weights(model, weights); }),
                {weights, "not saving the weights", "dense/kernel holds inf in the weights",
                 "a file already there is kept"});
  CHECK(engine::test::read_bytes(weights) == good);

  // Stopped by a signal after step 1 of 2, without a checkpoint: the weights fit returns with
  // are checked too.
  nn::Sequential stopped = overflowing_model();
  const nn::Dataset data = overflowing_data(8);
  std::atomic<int> flag{0};
  options.stop_signal = &flag;
  nn::ResidentBatches batches(data, options, Device::cpu());
  StopAt source(batches, 1, 1, flag);
  check_message(error_of([&] { stopped.fit(source, options); }),
                {"NaN/Inf at epoch 1, step 1/2", "in the weights of dense/kernel"});
}

TEST_CASE("a checkpoint with a valid checksum but a NaN in Adam's state is refused, naming it") {
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  nn::Sequential trained = toy_model(adam, 1);
  nn::FitOptions options = fit_options();
  options.epochs = 1;
  options.checkpoint_path = path;
  options.checkpoint_every = 1;
  trained.fit(toy_data(), options);
  engine::test::Bytes bytes = engine::test::read_bytes(path);
  // Adam's state "m": uint32 name length 1, "m", uint64 count, then the floats, dense_1/bias's
  // two last. A NaN goes into the very last one, and the CRC-32 is made right again.
  const uint64_t count = static_cast<uint64_t>(trained.parameter_count());
  engine::test::Bytes record = {1, 0, 0, 0, 'm'};
  for (int i = 0; i < 8; ++i) record.push_back(static_cast<uint8_t>(count >> (8 * i)));
  const auto at = std::search(bytes.begin(), bytes.end(), record.begin(), record.end());
  REQUIRE(at != bytes.end());
  const size_t last = static_cast<size_t>(at - bytes.begin()) + record.size() + (count - 1) * 4;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(bytes.data() + last, &nan, sizeof nan);
  const size_t body = bytes.size() - 4;
  const uint32_t crc = crc32_of(reinterpret_cast<const char*>(bytes.data()), body);
  std::memcpy(bytes.data() + body, &crc, sizeof crc);
  const std::string bad = dir.file("nan_m.ckpt");
  engine::test::write_bytes(bad, bytes);

  nn::Sequential model = toy_model(adam, 5);
  const std::vector<float> before = model.parameters().values.to_vector();
  // Before issue 24, this loaded, and training from it went on with the NaN.
  check_message(error_of([&] { nn::load_checkpoint(model, bad); }),
                {bad, "refusing the checkpoint", "dense_1/bias holds nan in Adam's m"});
  CHECK(model.parameters().values.to_vector() == before);
  CHECK(model.step_counter().to_int_vector() == std::vector<int32_t>{0});
  nn::load_checkpoint(model, path);  // the untouched file still loads
}
