#include "nn/fit_run.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "core/error.h"
#include "nn/sequential.h"

namespace engine::nn {
namespace {

// 16 hex digits: how a refusal shows a data fingerprint.
std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, value);
  return text;
}

}  // namespace

FitRun::FitRun(Sequential& trained, BatchSource& batches, const FitOptions& settings)
    : model(trained),
      source(batches),
      options(settings),
      device(device_services(trained.device())),
      clock(device, settings.breakdown, batches.copies_from_host()),
      running(trained.device()),
      data_fingerprint(settings.resume || !settings.checkpoint_path.empty() ? batches.fingerprint()
                                                                            : 0) {}

void FitRun::resume_from(const TrainingState& saved) {
  const std::string file = saved.file.empty() ? "the checkpoint" : saved.file;
  // The settings that shaped its batches and masks.
  // The batch is the global one (over all GPUs of a data-parallel run), so a checkpoint
  // resumes on any number of GPUs that take the same samples per step.
  const int64_t batch = global_batch(options);
  ENGINE_CHECK(saved.seed == options.seed && saved.batch_size == batch &&
                   saved.steps_per_epoch == steps,
               file, ": saved by a run with seed ", saved.seed, ", batch size ", saved.batch_size,
               " and ", saved.steps_per_epoch, " steps per epoch; this run has seed ", options.seed,
               ", batch size ", batch, " and ", steps,
               " steps per epoch (resume with the same seed, batch size and steps per epoch)");
  // A checkpoint in the middle of an epoch past `epochs` holds weights of no epoch's end.
  ENGINE_CHECK(saved.epoch <= options.epochs ||
                   (saved.epoch == options.epochs + 1 && saved.step == 0),
               file, ": has ", saved.epoch - 1, " epochs done",
               saved.step > 0 ? " and part of the next" : "", ", more than the ", options.epochs,
               " this run asks for");
  // The data: a fingerprint of 0 is one the source (or a version-1 file) could not give.
  const bool fingerprints = saved.data_fingerprint != 0 && data_fingerprint != 0;
  ENGINE_CHECK(!fingerprints || saved.data_fingerprint == data_fingerprint, file,
               ": saved by a run on other training data (", saved.data_samples,
               " samples, fingerprint ", hex(saved.data_fingerprint), "); this run trains on ",
               source.data_size(), " samples, fingerprint ", hex(data_fingerprint),
               " (resume on the data the checkpoint was saved with)");
  history.epochs = saved.history;
  try {
    source.restore_state(saved.source_state);
  } catch (const Error& e) {
    throw Error(file + ": " + e.what());
  }
}

void FitRun::start_epoch(int number, const TrainingState* resume) {
  clock.start_epoch();
  epoch = number;
  const bool resumed = resume && resume->epoch == number;
  first_step = resumed ? resume->step : 0;
  earlier_seconds = resumed ? resume->seconds : 0.0;
  earlier_wait = resumed ? resume->data_wait_seconds : 0.0;
  replayed_steps = 0;
  fused_steps = 0;
  if (resumed && options.communicator) {
    // The checkpoint holds the sums over all ranks (sum_over_ranks): rank 0 takes them, so the
    // epoch's end sums them once; every rank counts its share of the samples.
    const bool first = options.communicator->rank() == 0;
    running.restore(first ? resume->loss_sum : 0.0f, first ? resume->correct : 0.0f,
                    resume->samples / options.communicator->world());
  } else if (resumed) {
    running.restore(resume->loss_sum, resume->correct, resume->samples);
  } else {
    running.reset();
  }
}

void FitRun::sum_over_ranks() {
  if (!options.communicator) return;
  options.communicator->all_reduce_sum(running.loss_sum);
  options.communicator->all_reduce_sum(running.correct);
  running.samples *= options.communicator->world();  // every rank ran as many
}

std::pair<double, double> FitRun::read_means() {
  clock.enter(BreakdownClock::Part::Readback);
  std::pair<double, double> means{running.loss(), running.metric(metric)};
  clock.leave();  // the read drained the device: until the next launch is no part's
  return means;
}

Metrics metrics_of(Metric metric, double loss, double value) {
  return {{"loss", loss}, {metric_name(metric), value}};
}

int64_t global_batch(const FitOptions& options) {
  return options.batch_size * (options.communicator ? options.communicator->world() : 1);
}

int64_t steps_per_epoch(const FitOptions& options, int64_t samples) {
  const int64_t pass = (samples + options.batch_size - 1) / options.batch_size;
  return options.steps_per_epoch > 0 ? std::min(options.steps_per_epoch, pass) : pass;
}

}  // namespace engine::nn
