#include "nn/fit_run.h"

#include "nn/sequential.h"

namespace engine::nn {

FitRun::FitRun(Sequential& trained, BatchSource& batches, const FitOptions& settings)
    : model(trained),
      source(batches),
      options(settings),
      device(device_services(trained.device())),
      clock(device, settings.breakdown, batches.copies_from_host()),
      running(trained.device()) {}

void FitRun::start_epoch(int number, const TrainingState* resume) {
  clock.start_epoch();
  epoch = number;
  const bool resumed = resume && resume->epoch == number;
  first_step = resumed ? resume->step : 0;
  earlier_seconds = resumed ? resume->seconds : 0.0;
  earlier_wait = resumed ? resume->data_wait_seconds : 0.0;
  replayed_steps = 0;
  if (resumed) {
    running.restore(resume->loss_sum, resume->correct, resume->samples);
  } else {
    running.reset();
  }
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

}  // namespace engine::nn
