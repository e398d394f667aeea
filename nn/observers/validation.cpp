#include "nn/observers/observers.h"
#include "nn/sequential.h"

namespace engine::nn {

void Validation::epoch_finished(FitRun& run, EpochRecord& record) {
  record.val_loss = record.val_accuracy = record.val_mae = NOT_MEASURED;
  const Dataset* data = run.options.validation;
  if (!data) return;
  const EvalResult val = run.model.evaluate(*data, {run.options.batch_size, false, nullptr});
  record.val_loss = val.loss;
  record.val_accuracy = run.metric == Metric::Accuracy ? val.accuracy : NOT_MEASURED;
  record.val_mae = run.metric == Metric::MeanAbsoluteError ? val.mae : NOT_MEASURED;
  record.val_seconds = val.seconds;
}

}  // namespace engine::nn
