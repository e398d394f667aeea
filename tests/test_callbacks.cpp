// Keras' habits in fit (nn/callbacks.h, issue 23 item 6): a callback sees every epoch and step
// and can stop the run; early stopping stops at the right epoch and restores the best weights;
// the schedules' rates per epoch; the best model saved; the CSV log's header, rows and its
// resumed appending; and a step recorded as a graph follows a schedule's rate (re-recorded), bit
// for bit as the op-by-op step.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops.h"
#include "file_fixtures.h"
#include "nn/callbacks.h"
#include "nn/checkpoint.h"
#include "nn/fit_run.h"
#include "nn/graphed_step.h"
#include "nn/layers.h"
#include "nn/model_file.h"
#include "nn/observers/observers.h"
#include "nn/sequential.h"
#include "nn/weights_io.h"
#include "toy_data.h"

using namespace engine;
using test::toy_data;
using test::toy_model;

namespace {

std::vector<float> weights(const nn::Sequential& model) {
  return model.parameters().values.to_vector();
}

// What a callback saw, hook by hook.
struct Recorder : nn::Callback {
  std::vector<int> began;                             // on_epoch_begin's epochs
  std::vector<std::pair<int, int64_t>> batches;       // (epoch, step) of on_batch_end
  std::vector<nn::EpochRecord> ended;                 // on_epoch_end's records
  std::vector<std::vector<float>> weights_at_end;     // the weights after each epoch
  std::vector<float> rates;                           // the rate at each epoch's start
  int train_ends = 0;
  size_t history_at_train_end = 0;
  double first_running_loss = 0.0;
  int stop_at_epoch = 0;  // with stop_at_step: stop_training() in that on_batch_end
  int64_t stop_at_step = 0;

  void on_epoch_begin(nn::FitControl& fit, int epoch) override {
    began.push_back(epoch);
    rates.push_back(fit.model().optimizer().learning_rate());
  }
  void on_batch_end(nn::FitControl& fit, int64_t step) override {
    batches.emplace_back(fit.epoch(), step);
    if (batches.size() == 1) first_running_loss = fit.running_loss();  // waits for the device
    if (fit.epoch() == stop_at_epoch && step == stop_at_step) fit.stop_training();
  }
  void on_epoch_end(nn::FitControl& fit, const nn::EpochRecord& record) override {
    ended.push_back(record);
    weights_at_end.push_back(weights(fit.model()));
  }
  void on_train_end(nn::FitControl& fit) override {
    ++train_ends;
    history_at_train_end = fit.history().epochs.size();
  }
};

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> fields_of(const std::string& row) {
  std::vector<std::string> fields;
  std::stringstream in(row);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
  return fields;
}

}  // namespace

TEST_CASE("a callback sees every epoch and every step, in order, and the final records") {
  const nn::Dataset train = toy_data(75, 4);  // 3 steps of 32, 32 and 11
  nn::Sequential model = toy_model();
  auto recorder = std::make_shared<Recorder>();
  std::ostringstream log;
  nn::FitOptions options;
  options.epochs = 2;
  options.out = &log;
  options.callbacks = {recorder};
  const nn::History history = model.fit(train, options);

  CHECK(recorder->began == std::vector<int>{1, 2});
  const std::vector<std::pair<int, int64_t>> steps{{1, 1}, {1, 2}, {1, 3}, {2, 1}, {2, 2}, {2, 3}};
  CHECK(recorder->batches == steps);
  REQUIRE(recorder->ended.size() == 2);
  for (size_t e = 0; e < 2; ++e) {
    CHECK(recorder->ended[e].epoch == history.epochs[e].epoch);
    CHECK(recorder->ended[e].loss == history.epochs[e].loss);
    CHECK(recorder->ended[e].accuracy == history.epochs[e].accuracy);
    CHECK(recorder->ended[e].learning_rate == doctest::Approx(0.01));
  }
  CHECK(recorder->weights_at_end.back() == weights(model));
  CHECK(recorder->train_ends == 1);
  CHECK(recorder->history_at_train_end == 2);
  CHECK(recorder->first_running_loss > 0.0);
  CHECK(std::isfinite(recorder->first_running_loss));
  CHECK_FALSE(history.stopped_early);
}

TEST_CASE("stop_training() in on_batch_end ends the epoch after that step, and the run") {
  const nn::Dataset train = toy_data(75, 4);
  nn::Sequential model = toy_model();
  auto recorder = std::make_shared<Recorder>();
  recorder->stop_at_epoch = 2;
  recorder->stop_at_step = 2;
  std::ostringstream log;
  nn::FitOptions options;
  options.epochs = 5;
  options.out = &log;
  options.callbacks = {recorder};
  const nn::History history = model.fit(train, options);
  REQUIRE(history.epochs.size() == 2);
  CHECK(history.epochs[0].steps == 3);
  CHECK(history.epochs[1].steps == 2);
  CHECK(history.stopped_early);
  CHECK(recorder->batches.size() == 5);
  CHECK(recorder->ended.size() == 2);
  CHECK(recorder->train_ends == 1);
}

TEST_CASE("early stopping on a scripted val_loss: stops after `patience` epochs, best weights back") {
  const nn::Dataset data = toy_data(64, 4);
  nn::Sequential model = toy_model();
  std::ostringstream log;
  nn::FitOptions options;
  options.epochs = 10;
  options.validation = &data;
  options.out = &log;
  options.early_stopping = nn::EarlyStopping{"val_loss", /*patience=*/3, 0.0, /*restore=*/true};
  nn::ResidentBatches source(data, options, Device::cpu());
  nn::FitRun run(model, source, options);
  run.metric = nn::Metric::Accuracy;
  nn::EarlyStopper stopper(run);

  // Improves at epochs 1, 2 and 4; epochs 5, 6, 7 do not (0.5 is not beaten): stop after 7.
  const std::vector<double> val_loss{1.0, 0.8, 0.85, 0.5, 0.6, 0.55, 0.7, 0.1, 0.1, 0.1};
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    run.epoch = epoch;
    raw::fill(model.parameters().values, static_cast<float>(epoch));  // the epoch's "weights"
    nn::EpochRecord record;
    record.epoch = epoch;
    record.val_loss = val_loss[static_cast<size_t>(epoch - 1)];
    stopper.epoch_finished(run, record);
    run.history.epochs.push_back(record);
    if (run.stop_training) break;
  }
  CHECK(run.history.epochs.size() == 7);
  stopper.train_finished(run);
  CHECK(run.history.best_epoch == 4);
  for (const float w : weights(model)) REQUIRE(w == 4.0f);  // epoch 4's buffer, restored
  CHECK(log.str() ==
        "Early stopping: val_loss has not improved for 3 epochs; best 0.5000 at epoch 4, "
        "weights restored\n");
}

TEST_CASE("early stopping: accuracy is maximised, min_delta, and monitors this run cannot measure") {
  const nn::Dataset data = toy_data(64, 4);
  nn::Sequential model = toy_model();
  std::ostringstream log;
  nn::FitOptions options;
  options.validation = &data;
  options.out = &log;
  options.early_stopping = nn::EarlyStopping{"val_accuracy", /*patience=*/2, /*min_delta=*/0.05, false};
  nn::ResidentBatches source(data, options, Device::cpu());
  nn::FitRun run(model, source, options);
  run.metric = nn::Metric::Accuracy;
  nn::EarlyStopper stopper(run);
  // 0.5 -> 0.6 improves by more than 0.05; 0.64 and 0.2 do not: stop after epoch 4.
  const std::vector<double> accuracy{0.5, 0.6, 0.64, 0.2, 0.9};
  int epoch = 0;
  while (!run.stop_training && epoch < 5) {
    nn::EpochRecord record;
    record.epoch = ++epoch;
    record.val_accuracy = accuracy[static_cast<size_t>(epoch - 1)];
    stopper.epoch_finished(run, record);
    run.history.epochs.push_back(record);
  }
  CHECK(epoch == 4);
  stopper.train_finished(run);
  CHECK(run.history.best_epoch == 2);
  CHECK(log.str() == "Early stopping: val_accuracy has not improved for 2 epochs; best 0.6000 at epoch 2\n");

  CHECK(nn::lower_is_better("val_loss"));
  CHECK(nn::lower_is_better("mae"));
  CHECK_FALSE(nn::lower_is_better("accuracy"));
  nn::FitOptions unvalidated;
  unvalidated.early_stopping = nn::EarlyStopping{};  // val_loss
  nn::FitRun bare(model, source, unvalidated);
  bare.metric = nn::Metric::Accuracy;
  test::check_message(test::error_of([&] { nn::EarlyStopper refused(bare); }),
                      {"early stopping monitors val_loss", "no validation data",
                       "it measures loss, accuracy"});
  unvalidated.early_stopping->monitor = "mae";
  test::check_message(test::error_of([&] { nn::EarlyStopper refused(bare); }),
                      {"early stopping monitors mae, which this run does not measure"});
  unvalidated.early_stopping->monitor = "val_los";
  test::check_message(test::error_of([&] { nn::EarlyStopper refused(bare); }),
                      {"cannot monitor 'val_los'", "val_loss, loss, val_accuracy"});
}

TEST_CASE("early stopping in fit: the run ends at the right epoch with the best epoch's weights") {
  const nn::Dataset train = toy_data(75, 4);
  nn::Sequential model = toy_model();
  auto recorder = std::make_shared<Recorder>();
  std::ostringstream log;
  nn::FitOptions options;
  options.epochs = 8;
  options.out = &log;
  options.callbacks = {recorder};
  // Nothing beats epoch 1 by 1e9: epochs 2 and 3 wait, and the run stops after epoch 3.
  options.early_stopping = nn::EarlyStopping{"loss", /*patience=*/2, /*min_delta=*/1e9, true};
  const nn::History history = model.fit(train, options);
  REQUIRE(history.epochs.size() == 3);
  CHECK(history.stopped_early);
  CHECK(history.best_epoch == 1);
  REQUIRE(recorder->weights_at_end.size() == 3);
  CHECK(recorder->weights_at_end[2] != recorder->weights_at_end[0]);  // it did train on
  CHECK(weights(model) == recorder->weights_at_end[0]);               // and came back
  CHECK(log.str().find("Early stopping: loss has not improved for 2 epochs; best ") !=
        std::string::npos);
  CHECK(log.str().find(" at epoch 1, weights restored\n") != std::string::npos);
}

TEST_CASE("learning-rate schedules: the rate of every epoch, as fit sets it") {
  const nn::LearningRateSchedule step = nn::LearningRateSchedule::step(0.5, 2);
  const std::vector<double> stepped{0.1, 0.1, 0.05, 0.05, 0.025, 0.025};
  for (int epoch = 1; epoch <= 6; ++epoch) {
    CHECK(step.rate(0.1, epoch, 6) == doctest::Approx(stepped[static_cast<size_t>(epoch - 1)]));
  }
  // min + (lr0 - min)(1 + cos(pi (epoch - 1) / epochs)) / 2 over 4 epochs from 0.1 to 0.01.
  const nn::LearningRateSchedule cosine = nn::LearningRateSchedule::cosine(0.01);
  const std::vector<double> cosined{0.1, 0.01 + 0.045 * (1 + std::sqrt(0.5)), 0.055,
                                    0.01 + 0.045 * (1 - std::sqrt(0.5))};
  for (int epoch = 1; epoch <= 4; ++epoch) {
    CHECK(cosine.rate(0.1, epoch, 4) == doctest::Approx(cosined[static_cast<size_t>(epoch - 1)]));
  }
  CHECK(nn::LearningRateSchedule{}.rate(0.1, 3, 4) == 0.1);

  // In fit: the optimizer's rate at each epoch's start (callbacks run after the schedule) and
  // in each record, from the rate fit started with.
  const nn::Dataset train = toy_data(40, 4);
  for (const bool use_step : {true, false}) {
    nn::Sequential model = toy_model(0.1f);
    auto recorder = std::make_shared<Recorder>();
    std::ostringstream log;
    nn::FitOptions options;
    options.epochs = 4;
    options.out = &log;
    options.callbacks = {recorder};
    options.lr_schedule = use_step ? step : cosine;
    const nn::History history = model.fit(train, options);
    REQUIRE(recorder->rates.size() == 4);
    for (int epoch = 1; epoch <= 4; ++epoch) {
      const float expected = static_cast<float>(options.lr_schedule.rate(0.1, epoch, 4));
      CHECK(recorder->rates[static_cast<size_t>(epoch - 1)] == expected);
      CHECK(history.epochs[static_cast<size_t>(epoch - 1)].learning_rate == expected);
    }
  }

  nn::Sequential model = toy_model(0.1f);
  std::ostringstream log;
  nn::FitOptions options;
  options.out = &log;
  options.lr_schedule = nn::LearningRateSchedule::cosine(0.5);
  test::check_message(test::error_of([&] { model.fit(train, options); }),
                      {"cosine's minimum must be at least 0 and below the optimizer's rate"});
  options.lr_schedule = nn::LearningRateSchedule::step(1.5, 2);
  test::check_message(test::error_of([&] { model.fit(train, options); }),
                      {"a step's factor must be in (0, 1], got 1.5"});
}

namespace {

// A stand-in for a CUDA graph on the CPU: it replays the step with the learning rate it was
// recorded with, as a graph's update kernel keeps the rate it was launched with.
class FrozenRateGraph final : public StepGraph {
 public:
  FrozenRateGraph(std::function<void()> step, nn::Optimizer& optimizer)
      : step_(std::move(step)), optimizer_(optimizer), rate_(optimizer.learning_rate()) {}
  void replay() override {
    const float now = optimizer_.learning_rate();
    optimizer_.set_learning_rate(rate_);
    step_();
    optimizer_.set_learning_rate(now);
  }
  int64_t kernel_count() const override { return 1; }

 private:
  std::function<void()> step_;
  nn::Optimizer& optimizer_;
  float rate_;
};

// Three epochs of three full steps under a cosine schedule, through GraphedStep with `record`
// (none: op by op, as on the CPU).
std::vector<float> scheduled_steps(nn::Sequential& model, const nn::Dataset& train,
                                   nn::GraphedStep::Recorder record, nn::History* history) {
  nn::FitOptions options;
  options.shuffle = false;
  options.epochs = 3;
  nn::ResidentBatches source(train, options, model.device());
  nn::FitRun run(model, source, options);
  run.steps = 3;
  run.full_batch = 32;
  run.metric = nn::Metric::Accuracy;
  model.set_training_seed(options.seed);
  nn::GraphedStep step(run, std::move(record));
  const nn::LearningRateSchedule schedule = nn::LearningRateSchedule::cosine(0.001);
  for (int epoch = 1; epoch <= 3; ++epoch) {
    model.optimizer().set_learning_rate(static_cast<float>(schedule.rate(0.01, epoch, 3)));
    run.start_epoch(epoch, nullptr);
    source.start_epoch(epoch, run.steps, 32, 0);
    for (int64_t s = 0; s < run.steps; ++s) {
      step.run(source.next(s * 32, 32), true);
      run.running.samples += 32;
    }
  }
  *history = run.history;
  return weights(model);
}

}  // namespace

TEST_CASE("a schedule with a recorded step equals the op-by-op step, bit for bit (re-recorded)") {
  const nn::Dataset train = toy_data(96, 4);
  nn::Sequential eager_model = toy_model();
  nn::History eager_history;
  const std::vector<float> eager = scheduled_steps(eager_model, train, nullptr, &eager_history);
  CHECK(eager_history.graph_captures == 0);  // the CPU records nothing

  nn::Sequential graphed_model = toy_model();
  int recordings = 0;
  const nn::GraphedStep::Recorder frozen = [&](const std::function<void()>& step) {
    ++recordings;
    return std::make_unique<FrozenRateGraph>(step, graphed_model.optimizer());
  };
  nn::History graphed_history;
  const std::vector<float> graphed = scheduled_steps(graphed_model, train, frozen, &graphed_history);
  // Recorded at epoch 1's second step, again at the first step of epochs 2 and 3 (new rates).
  CHECK(recordings == 3);
  CHECK(graphed_history.graph_captures == 3);
  CHECK(graphed_history.graph_replay);
  CHECK(graphed == eager);

  // fit itself, with and without the graph (on the CPU both run op by op).
  const nn::Dataset data = toy_data(75, 5);
  std::vector<std::vector<float>> results;
  for (const bool use_graph : {true, false}) {
    nn::Sequential model = toy_model();
    std::ostringstream log;
    nn::FitOptions options;
    options.epochs = 3;
    options.out = &log;
    options.use_graph = use_graph;
    options.lr_schedule = nn::LearningRateSchedule::step(0.5, 1);
    model.fit(data, options);
    results.push_back(weights(model));
  }
  CHECK(results[0] == results[1]);
}

TEST_CASE("the best model is saved whenever the monitored value improves") {
  test::TempDir dir;
  const nn::Dataset train = toy_data(75, 4);
  for (const std::string name : {"best.weights", "best.model"}) {
    nn::Sequential model = toy_model();
    auto recorder = std::make_shared<Recorder>();
    std::ostringstream log;
    nn::FitOptions options;
    options.epochs = 3;
    options.out = &log;
    options.callbacks = {recorder};
    options.save_best.path = dir.file(name);
    options.save_best.monitor = "loss";
    options.save_best.min_delta = 1e9;  // only epoch 1 improves (on infinity)
    model.fit(train, options);
    std::vector<float> saved;
    if (name == "best.weights") {
      nn::Sequential loaded = toy_model();
      nn::load_weights(loaded, dir.file(name));
      saved = weights(loaded);
    } else {
      saved = weights(nn::load_model(dir.file(name)));
    }
    CHECK(saved == recorder->weights_at_end[0]);
    CHECK(saved != weights(model));
    CHECK(log.str().find("Epoch 1: loss improved from inf to ") != std::string::npos);
    CHECK(log.str().find("Epoch 2: loss improved") == std::string::npos);
  }
}

TEST_CASE("the CSV log: Keras' columns, a row per epoch, and a resumed run appends") {
  test::TempDir dir;
  const nn::Dataset train = toy_data(75, 4);
  const nn::Dataset validation = toy_data(20, 9);
  const auto options_for = [&](int epochs, const std::string& csv, std::ostringstream& log) {
    nn::FitOptions options;
    options.epochs = epochs;
    options.out = &log;
    options.validation = &validation;
    options.lr_schedule = nn::LearningRateSchedule::step(0.5, 2);
    options.log_csv = csv;
    return options;
  };

  // Straight through, 4 epochs.
  std::ostringstream log;
  nn::Sequential straight = toy_model();
  const nn::History history = straight.fit(train, options_for(4, dir.file("straight.csv"), log));
  const std::vector<std::string> rows = lines_of(dir.file("straight.csv"));
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] == "epoch,loss,accuracy,val_loss,val_accuracy,lr");
  for (size_t e = 0; e < 4; ++e) {
    const std::vector<std::string> fields = fields_of(rows[e + 1]);
    REQUIRE(fields.size() == 6);
    const nn::EpochRecord& record = history.epochs[e];
    CHECK(fields[0] == std::to_string(e + 1));
    // The shortest text that reads back as the same double.
    CHECK(std::strtod(fields[1].c_str(), nullptr) == record.loss);
    CHECK(std::strtod(fields[2].c_str(), nullptr) == record.accuracy);
    CHECK(std::strtod(fields[3].c_str(), nullptr) == record.val_loss);
    CHECK(std::strtod(fields[4].c_str(), nullptr) == record.val_accuracy);
  }
  CHECK(fields_of(rows[1])[5] == "0.01");
  CHECK(fields_of(rows[3])[5] == "0.005");

  // 2 epochs with a checkpoint, a row of an epoch 3 that the checkpoint does not hold (a run
  // killed after it), then resumed to 4: the same file as straight through.
  const std::string csv = dir.file("resumed.csv"), checkpoint = dir.file("run.ckpt");
  nn::Sequential first = toy_model();
  nn::FitOptions stopping = options_for(2, csv, log);
  stopping.checkpoint_path = checkpoint;
  stopping.checkpoint_every = 1;
  first.fit(train, stopping);
  std::ofstream(csv, std::ios::app) << "3,9,9,9,9,9\n";
  nn::Sequential second = toy_model();
  const nn::TrainingState state = nn::load_checkpoint(second, checkpoint);
  nn::FitOptions resuming = options_for(4, csv, log);
  resuming.resume = &state;
  second.fit(train, resuming);
  CHECK(lines_of(csv) == rows);

  // A file with other columns is not appended to.
  nn::Sequential third = toy_model();
  const nn::TrainingState again = nn::load_checkpoint(third, checkpoint);
  nn::FitOptions other = options_for(4, csv, log);
  other.lr_schedule = {};
  other.resume = &again;
  test::check_message(test::error_of([&] { third.fit(train, other); }),
                      {"the CSV log ", "has the columns 'epoch,loss,accuracy,val_loss,val_accuracy,lr'",
                       "this run writes 'epoch,loss,accuracy,val_loss,val_accuracy'"});

  // Without validation data or a schedule: epoch,loss,accuracy; rerun from scratch: a fresh file.
  nn::Sequential plain = toy_model();
  nn::FitOptions bare;
  bare.epochs = 2;
  bare.out = &log;
  bare.log_csv = csv;
  plain.fit(train, bare);
  const std::vector<std::string> fresh = lines_of(csv);
  REQUIRE(fresh.size() == 3);
  CHECK(fresh[0] == "epoch,loss,accuracy");
  CHECK(fields_of(fresh[2]).size() == 3);
}
