// The public side of Keras' habits in fit (nn/callbacks.h): what a callback's hooks can ask of
// the run, the monitored values, the schedules' rates. The observers that run them are in
// nn/observers/.
#include "nn/callbacks.h"

#include <cmath>

#include "core/error.h"
#include "nn/fit_run.h"
#include "nn/sequential.h"

namespace engine::nn {

Sequential& FitControl::model() const { return run_.model; }
int FitControl::epoch() const { return run_.epoch; }
int FitControl::epochs() const { return run_.options.epochs; }
int64_t FitControl::steps() const { return run_.steps; }
const History& FitControl::history() const { return run_.history; }
double FitControl::running_loss() const { return run_.read_means().first; }
double FitControl::running_metric() const { return run_.read_means().second; }
void FitControl::stop_training() { run_.stop_training = true; }
bool FitControl::stop_requested() const { return run_.stop_training; }

double monitored_value(const EpochRecord& record, const std::string& monitor) {
  if (monitor == "loss") return record.loss;
  if (monitor == "accuracy") return record.accuracy;
  if (monitor == "mae") return record.mae;
  if (monitor == "val_loss") return record.val_loss;
  if (monitor == "val_accuracy") return record.val_accuracy;
  if (monitor == "val_mae") return record.val_mae;
  throw Error(detail::concat("cannot monitor '", monitor,
                             "': use val_loss, loss, val_accuracy, accuracy, val_mae or mae"));
}

bool lower_is_better(const std::string& monitor) {
  (void)monitored_value(EpochRecord{}, monitor);  // refuses an unknown name
  return monitor.find("accuracy") == std::string::npos;
}

LearningRateSchedule LearningRateSchedule::step(double factor, int every) {
  LearningRateSchedule schedule;
  schedule.kind = Kind::Step;
  schedule.factor = factor;
  schedule.every = every;
  return schedule;
}

LearningRateSchedule LearningRateSchedule::cosine(double min_rate) {
  LearningRateSchedule schedule;
  schedule.kind = Kind::Cosine;
  schedule.min_rate = min_rate;
  return schedule;
}

double LearningRateSchedule::rate(double initial, int epoch, int epochs) const {
  switch (kind) {
    case Kind::None:
      return initial;
    case Kind::Step:
      return initial * std::pow(factor, (epoch - 1) / every);
    case Kind::Cosine: {
      const double pi = std::acos(-1.0);
      const double progress = static_cast<double>(epoch - 1) / static_cast<double>(epochs);
      return min_rate + (initial - min_rate) * 0.5 * (1.0 + std::cos(pi * progress));
    }
  }
  return initial;
}

}  // namespace engine::nn
