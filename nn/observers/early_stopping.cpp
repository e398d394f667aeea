#include <cmath>
#include <ostream>

#include "core/error.h"
#include "nn/observers/observers.h"
#include "nn/sequential.h"

namespace engine::nn {

EarlyStopper::EarlyStopper(FitRun& run)
    : settings_(*run.options.early_stopping),
      monitor_(run, settings_.monitor, settings_.min_delta, "early stopping") {
  ENGINE_CHECK(settings_.patience >= 0, "early stopping: patience must be at least 0, got ",
               settings_.patience);
  // A resumed run counts the epochs before it; their weights are not kept.
  for (const EpochRecord& record : run.history.epochs) {
    if (std::isnan(monitored_value(record, monitor_.name()))) continue;
    wait_ = monitor_.improved(record) ? 0 : wait_ + 1;
  }
}

// As Keras' EarlyStopping: an epoch that does not improve on the best adds to the wait, and
// the run stops once the wait reaches the patience (0 and 1 both stop at the first such epoch).
void EarlyStopper::epoch_finished(FitRun& run, EpochRecord& record) {
  if (monitor_.improved(record)) {
    wait_ = 0;
    if (settings_.restore_best_weights) {  // a device-to-device copy, once an improving epoch
      const Tensor& values = run.model.parameters().values;
      if (!best_weights_.defined()) {
        best_weights_ = Tensor::empty(values.shape(), values.dtype(), values.device());
      }
      best_weights_.copy_from(values);
      weights_epoch_ = record.epoch;
    }
    return;
  }
  ++wait_;
  if (wait_ >= settings_.patience && record.epoch > 1) {
    stopped_ = true;
    run.stop_training = true;
  }
}

void EarlyStopper::train_finished(FitRun& run) {
  run.history.best_epoch = monitor_.best_epoch();
  // An interrupted run is to be resumed: it keeps the weights its checkpoint holds.
  if (run.history.interrupted_by != 0 || run.history.epochs.empty()) return;
  const int best = monitor_.best_epoch();
  const int last = run.history.epochs.back().epoch;
  std::string restored;
  if (settings_.restore_best_weights && best != 0 && best != last) {
    if (weights_epoch_ == best) {
      run.model.parameters().values.copy_from(best_weights_);
      restored = ", weights restored";
    } else {
      restored = ", weights not restored (that epoch ran before --resume; the last epoch's kept)";
    }
  }
  std::ostream* out = fit_output(run.options);
  if (out == nullptr) return;
  const std::string best_text =
      best == 0 ? std::string("none measured")
                : detail::concat(format_monitored(monitor_.best()), " at epoch ", best);
  if (stopped_) {
    *out << "Early stopping: " << monitor_.name() << " has not improved for " << wait_
         << (wait_ == 1 ? " epoch" : " epochs") << "; best " << best_text << restored << "\n";
  } else if (!restored.empty()) {  // ran all its epochs, the best not the last
    *out << "Best " << monitor_.name() << ": " << best_text << restored << "\n";
  }
  *out << std::flush;
}

}  // namespace engine::nn
