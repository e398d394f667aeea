#include <iostream>

#include "nn/observers/observers.h"

namespace engine::nn {

Progress::Progress(const FitOptions& options)
    : out_(options.out ? *options.out : std::cout), verbose_(options.verbose) {}

void Progress::epoch_started(FitRun& run) {
  if (verbose_) {
    out_ << "Epoch " << run.epoch << "/" << run.options.epochs;
    if (run.first_step > 0) out_ << " (resumed at step " << run.first_step + 1 << "/" << run.steps << ")";
    out_ << "\n" << std::flush;
  }
  bar_ = std::make_unique<ProgressBar>(out_, run.steps, verbose_ && ProgressBar::stdout_is_terminal(),
                                       run.earlier_seconds);
}

void Progress::step_finished(FitRun& run, int64_t done, int64_t count) {
  (void)count;
  // Reading the metrics waits for the device: only when the line is due for a redraw.
  if (verbose_ && bar_->due(done)) {
    const auto [loss, metric] = run.read_means();
    bar_->update(done, metrics_of(run.metric, loss, metric));
  }
}

void Progress::epoch_finished(FitRun& run, EpochRecord& record) {
  if (!verbose_) return;
  // A regression loss's metric is the mean absolute error, shown as Keras names it: "mae".
  const bool mae = run.metric == Metric::MeanAbsoluteError;
  Metrics extra;
  if (run.options.validation) {
    extra = {{"val_loss", record.val_loss},
             {mae ? "val_mae" : "val_accuracy", mae ? record.val_mae : record.val_accuracy}};
  }
  bar_->finish(metrics_of(run.metric, record.loss, mae ? record.mae : record.accuracy), extra);
}

void Progress::interrupted() {
  if (verbose_ && bar_ && bar_->interactive()) out_ << "\n";
}

}  // namespace engine::nn
