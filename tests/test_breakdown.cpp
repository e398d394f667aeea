// --breakdown and the memory per epoch, on the CPU: the bar renderer on parts made by hand; fit's
// breakdown adding up to the epoch's wall (which must agree with the epoch's own clocks), the
// data wait of a slow source kept apart from its input; the memory fields; the --json fields;
// the median time per step after the warm-up, on epochs made by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "apps/common/breakdown_report.h"
#include "apps/common/training_report.h"
#include "nn/layers.h"
#include "nn/sequential.h"
#include "toy_data.h"

using namespace engine;
using test::toy_data;

namespace {

nn::Sequential toy_model() {
  nn::Sequential model{nn::flatten(), nn::dense(64, Activation::Relu),
                      nn::dense(2, Activation::Softmax)};
  model.build({2, 3}, Device::cpu(), 1);
  model.compile(std::make_unique<nn::Adam>(0.01f), nn::Loss::SparseCategoricalCrossentropy);
  return model;
}

// Resident rows behind a loader's face: every next() first sleeps `wait` (counted as the
// source's data wait, as a loader counts the device's idling) and says it copies from the host.
class SlowSource final : public nn::BatchSource {
 public:
  SlowSource(const nn::Dataset& data, const nn::FitOptions& options, std::chrono::microseconds wait)
      : rows_(data, options, Device::cpu()), wait_(wait) {}
  int64_t size() const override { return rows_.size(); }
  const nn::Dataset& rows() const override { return rows_.rows(); }
  void start_epoch(int epoch, int64_t steps, int64_t batch, int64_t first_step) override {
    waited_ = 0.0;
    rows_.start_epoch(epoch, steps, batch, first_step);
  }
  Tensor next(int64_t first, int64_t count) override {
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(wait_);
    waited_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return rows_.next(first, count);
  }
  double wait_seconds() const override { return waited_; }
  bool copies_from_host() const override { return true; }

 private:
  nn::ResidentBatches rows_;
  std::chrono::microseconds wait_;
  double waited_ = 0.0;
};

nn::EpochBreakdown parts(double wall, double data, double input, double compute, double reads,
                         double eval) {
  nn::EpochBreakdown b;
  b.wall_seconds = wall;
  b.data_wait_seconds = data;
  b.input_seconds = input;
  b.compute_seconds = compute;
  b.readback_seconds = reads;
  b.eval_seconds = eval;
  return b;
}

size_t count(const std::string& text, char c) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), c));
}

// Every epoch of `history` has a breakdown whose parts are non-negative, add up to its wall, and
// whose wall holds the epoch's own clocks (the steps' seconds and the validation's) and little
// more; returns the largest measured fraction. (The largest: where other processes share the
// cores, the time this one is descheduled between two steps is part of no measured part, and
// may take a good share of one short epoch.)
double check_breakdowns(const nn::History& history) {
  double best = 0.0;
  for (const nn::EpochRecord& e : history.epochs) {
    REQUIRE(e.breakdown);
    const nn::EpochBreakdown& b = *e.breakdown;
    for (const double part : {b.data_wait_seconds, b.input_seconds, b.compute_seconds,
                              b.readback_seconds, b.eval_seconds}) {
      CHECK(part >= 0.0);
    }
    const double sum = b.data_wait_seconds + b.input_seconds + b.compute_seconds +
                       b.readback_seconds + b.eval_seconds + b.other_seconds();
    CHECK(sum == doctest::Approx(b.wall_seconds).epsilon(1e-9));
    // The named parts are disjoint stretches of the wall: at most a clock's rounding over it.
    CHECK(b.other_seconds() >= -1e-4);
    CHECK(b.eval_seconds == e.val_seconds);
    CHECK(b.wall_seconds >= e.seconds + e.val_seconds);
    CHECK(b.wall_seconds <= e.seconds + e.val_seconds + 0.05);
    CHECK(b.compute_seconds > 0.0);
    CHECK(b.steps == e.steps);
    CHECK(b.replayed_steps == 0);  // the CPU records no graphs
    best = std::max(best, b.measured_fraction());
  }
  return best;
}

}  // namespace

TEST_CASE("the breakdown bar: one run per part, as long as its share, filling the width") {
  // data 1/4, compute 1/2, other (the remainder) 1/4.
  CHECK(apps::breakdown_bar(parts(1.0, 0.25, 0.0, 0.5, 0.0, 0.0), 40) ==
        std::string(10, '~') + std::string(20, '#') + std::string(10, '.'));
  // Every part's character, in the line's order.
  CHECK(apps::breakdown_bar(parts(6.0, 1, 1, 1, 1, 1), 6) == "~>#<=.");
  // Thirds of 40: 13.33 each; the one character left goes to the first of the tied fractions.
  const std::string thirds = apps::breakdown_bar(parts(3.0, 1.0, 0.0, 1.0, 0.0, 1.0), 40);
  CHECK(thirds.size() == 40);
  CHECK(count(thirds, '~') == 14);
  CHECK(count(thirds, '#') == 13);
  CHECK(count(thirds, '=') == 13);
  // Rounding never loses or adds a character, whatever the shares.
  for (int width : {1, 7, 40, 101}) {
    CHECK(apps::breakdown_bar(parts(1.0, 0.013, 0.29, 0.4, 0.0007, 0.11), width).size() ==
          static_cast<size_t>(width));
  }
  // Measured parts a hair over the wall: no remainder, and the bar is the parts alone.
  CHECK(apps::breakdown_bar(parts(1.0, 0.0, 0.0, 1.0001, 0.0, 0.0), 10) == std::string(10, '#'));
  // An empty epoch: all remainder.
  CHECK(apps::breakdown_bar(parts(0.0, 0, 0, 0, 0, 0), 5) == ".....");

  const nn::EpochBreakdown b = parts(0.084, 0.0, 0.002, 0.061, 0.001, 0.010);
  const std::string gpu = apps::breakdown_line(b, true);
  CHECK(gpu.rfind("0.084 s = data 0.000 | h2d 0.002 | gpu 0.061 | d2h 0.001 | eval 0.010 | "
                  "other 0.010 [",
                  0) == 0);
  CHECK(gpu.find("] measured 88.1%") != std::string::npos);
  CHECK(apps::breakdown_line(b, false).find("input 0.002 | compute 0.061 | reads 0.001") !=
        std::string::npos);
}

TEST_CASE("fit's breakdown adds up to each epoch's wall, and memory is recorded every epoch") {
  const nn::Dataset train = toy_data(24000, 1);  // 750 steps: ~15 ms an epoch on one core
  const nn::Dataset validation = toy_data(500, 2);
  nn::Sequential model = toy_model();
  nn::FitOptions options;
  options.epochs = 3;
  options.verbose = false;
  options.validation = &validation;

  const nn::History plain = model.fit(train, options);  // off by default
  for (const nn::EpochRecord& e : plain.epochs) {
    CHECK_FALSE(e.breakdown);
    REQUIRE(e.memory);
    CHECK(e.memory->host_rss_bytes > 0);
    CHECK(e.memory->allocator_in_use_bytes > 0);  // the model's weights, at least
    CHECK(e.memory->allocator_reserved_bytes >= e.memory->allocator_in_use_bytes);
  }

  options.breakdown = true;
  const nn::History history = model.fit(train, options);
  // On the CPU nearly everything is a measured part: the remainder is the epoch's shuffle and a
  // few host instructions per step (2-core dev VM, 30 runs: 99.96% in the best epoch of a run,
  // 80% in the worst epoch of all, while two compilers shared the cores).
  CHECK(check_breakdowns(history) > 0.5);
  for (const nn::EpochRecord& e : history.epochs) {
    CHECK(e.breakdown->data_wait_seconds == 0.0);
    CHECK(e.breakdown->input_seconds == 0.0);  // resident rows: next() is part of the step
    CHECK(e.breakdown->eval_seconds > 0.0);
  }
}

TEST_CASE("a source's data wait is its own part, not its input's or the steps'") {
  const nn::Dataset train = toy_data(320, 3);  // 10 steps of 32
  nn::Sequential model = toy_model();
  nn::FitOptions options;
  options.epochs = 2;
  options.verbose = false;
  options.breakdown = true;
  SlowSource source(train, options, std::chrono::microseconds(3000));
  const nn::History history = model.fit(source, options);
  CHECK(check_breakdowns(history) > 0.5);
  for (const nn::EpochRecord& e : history.epochs) {
    const nn::EpochBreakdown& b = *e.breakdown;
    CHECK(b.data_wait_seconds == e.data_wait_seconds);
    CHECK(b.data_wait_seconds >= 10 * 0.003);
    // next()'s span less the wait: what is left is the index copy and the clock's reads,
    // microseconds, not the sleep.
    CHECK(b.input_seconds < 0.1 * b.data_wait_seconds);
  }
}

TEST_CASE("--json carries each epoch's breakdown and memory") {
  nn::History history;
  nn::EpochRecord e;
  e.epoch = 1;
  e.steps = 10;
  e.val_loss = 0.5;
  e.breakdown = parts(0.084, 0.0, 0.002, 0.061, 0.001, 0.010);
  e.breakdown->steps = 10;
  e.breakdown->replayed_steps = 8;
  e.memory = nn::EpochMemory{100 << 20, 3 << 20, 4 << 20};
  history.epochs.push_back(e);
  history.epochs.push_back(nn::EpochRecord{});  // restored from a checkpoint: neither
  nlohmann::json record;
  apps::record_fit(record, Device::cpu(), history);
  const nlohmann::json& first = record["epochs_run"][0];
  CHECK(first["breakdown"]["other_seconds"].get<double>() == doctest::Approx(0.010));
  CHECK(first["breakdown"]["measured_fraction"].get<double>() == doctest::Approx(0.074 / 0.084));
  CHECK(first["breakdown"]["replayed_steps"] == 8);
  double sum = 0.0;
  for (const char* key : {"data_wait_seconds", "input_seconds", "compute_seconds",
                          "readback_seconds", "eval_seconds", "other_seconds"}) {
    sum += first["breakdown"][key].get<double>();
  }
  CHECK(sum == doctest::Approx(first["breakdown"]["wall_seconds"].get<double>()));
  CHECK(first["memory"]["host_rss_bytes"] == 100 << 20);
  CHECK(first["memory"]["allocator_reserved_bytes"] == 4 << 20);
  CHECK_FALSE(record["epochs_run"][1].contains("breakdown"));
  CHECK_FALSE(record["epochs_run"][1].contains("memory"));
}

TEST_CASE("the breakdown report counts the steps run op by op, and those in the fused kernel") {
  const auto history_of = [](int64_t replayed, int64_t fused) {
    nn::History history;
    nn::EpochRecord e;
    e.epoch = 1;
    e.breakdown = parts(0.084, 0.0, 0.002, 0.061, 0.001, 0.010);
    e.breakdown->steps = 10;
    e.breakdown->replayed_steps = replayed;
    e.breakdown->fused_steps = fused;
    history.epochs.push_back(e);
    return history;
  };
  std::ostringstream graph, fused, cpu;
  apps::print_breakdown(graph, Device::cuda(), history_of(8, 0));
  CHECK(graph.str().find("  2 of 10 steps ran op by op") != std::string::npos);
  CHECK(graph.str().find("fused MLP kernel") == std::string::npos);
  apps::print_breakdown(fused, Device::cuda(), history_of(0, 10));
  CHECK(fused.str().find("  10 of 10 steps ran in the fused MLP kernel") != std::string::npos);
  CHECK(fused.str().find("op by op") == std::string::npos);
  std::ostringstream both;  // the count leaves out the fused steps as well as the replays
  apps::print_breakdown(both, Device::cuda(), history_of(2, 6));
  CHECK(both.str().find("  2 of 10 steps ran op by op") != std::string::npos);
  apps::print_breakdown(cpu, Device::cpu(), history_of(0, 0));  // the CPU replays nothing
  CHECK(cpu.str().find("op by op") == std::string::npos);

  nlohmann::json record;
  apps::record_fit(record, Device::cpu(), history_of(0, 10));
  CHECK(record["epochs_run"][0]["breakdown"]["fused_steps"] == 10);
}

namespace {
// An epoch of `steps` whose first `warmup_steps` took `warmup_seconds` and the rest
// `steady_seconds`, as fit records one that ran whole in this process.
nn::EpochRecord timed_epoch(int epoch, int64_t steps, int64_t warmup_steps, double warmup_seconds,
                            double steady_seconds) {
  nn::EpochRecord e;
  e.epoch = epoch;
  e.steps = steps;
  e.seconds = warmup_seconds + steady_seconds;
  e.warmup_steps = warmup_steps;
  e.warmup_seconds = warmup_seconds;
  e.steady_steps = steps - warmup_steps;
  e.steady_seconds = steady_seconds;
  return e;
}
}  // namespace

TEST_CASE("the median step time is over the steps after the warm-up") {
  // A GPU run's shape: 1.2 s for the first epoch, nearly all of it its first two steps (JIT,
  // allocations, the graph's recording), then 45 us a step. Over whole epochs the median of
  // 12 ms and 45 us would be ~6 ms a step.
  nn::History history;
  history.epochs.push_back(timed_epoch(1, 100, 2, 1.1955, 0.0045));
  history.epochs.push_back(timed_epoch(2, 100, 0, 0.0, 0.0045));
  apps::MedianStep step = apps::median_step_microseconds(history);
  CHECK(step.after_warmup);
  CHECK(step.microseconds == doctest::Approx(0.5 * (0.0045 / 98 + 0.0045 / 100) * 1e6));

  // A resumed run: the epoch restored from the checkpoint was run by another process, whose
  // warm-up it may hold, unknown; it is left out (with it, the median would be 47 us).
  nn::History resumed;
  resumed.epochs.push_back(nn::EpochRecord{});
  resumed.epochs.back().steps = 100;
  resumed.epochs.back().seconds = 1.2;
  resumed.epochs.push_back(timed_epoch(2, 100, 2, 0.9, 0.0045 * 98 / 100));
  resumed.epochs.push_back(timed_epoch(3, 100, 0, 0.0, 0.0047));
  step = apps::median_step_microseconds(resumed);
  CHECK(step.after_warmup);
  CHECK(step.microseconds == doctest::Approx(46.0));

  // No step after the warm-up anywhere (epochs of one step, resumed after the first): the
  // median over whole epochs, said to include it.
  nn::History short_run;
  short_run.epochs.push_back(nn::EpochRecord{});
  short_run.epochs.back().steps = 1;
  short_run.epochs.back().seconds = 0.001;
  short_run.epochs.push_back(timed_epoch(2, 1, 1, 0.5, 0.0));
  short_run.epochs.push_back(timed_epoch(3, 1, 1, 0.002, 0.0));
  step = apps::median_step_microseconds(short_run);
  CHECK_FALSE(step.after_warmup);
  CHECK(step.microseconds == doctest::Approx(2000.0));
  CHECK(apps::median_step_microseconds(nn::History{}).microseconds == 0.0);
}

TEST_CASE("--json carries the steady median, the warm-up of each epoch and the graph's recording") {
  nn::History history;
  history.epochs.push_back(nn::EpochRecord{});  // restored from a checkpoint: no warm-up fields
  history.epochs.back().steps = 100;
  history.epochs.back().seconds = 5.0;
  history.epochs.push_back(timed_epoch(2, 100, 2, 1.1955, 0.0045));
  history.epochs.push_back(timed_epoch(3, 100, 0, 0.0, 0.0045));
  history.capture_seconds = 0.0019;
  nlohmann::json record;
  apps::record_fit(record, Device::cpu(), history);
  CHECK(record["median_step_us"].get<double>() ==
        doctest::Approx(apps::median_step_microseconds(history).microseconds));
  CHECK(record["median_step_us"].get<double>() < 50.0);
  CHECK(record["median_step_after_warmup"] == true);
  CHECK(record["capture_seconds"].get<double>() == 0.0019);
  const nlohmann::json& epochs = record["epochs_run"];
  CHECK_FALSE(epochs[0].contains("warmup_steps"));
  CHECK(epochs[1]["warmup_steps"] == 2);
  CHECK(epochs[1]["warmup_seconds"].get<double>() == 1.1955);
  CHECK(epochs[1]["steady_steps"] == 98);
  CHECK(epochs[1]["steady_seconds"].get<double>() == 0.0045);
  CHECK(epochs[2]["warmup_steps"] == 0);
  CHECK(epochs[2]["steady_steps"] == 100);
}
