#include "core/error.h"
#include "nn/observers/observers.h"

namespace engine::nn {

UserCallbacks::UserCallbacks(FitRun& run) : control_(run) {
  for (const std::shared_ptr<Callback>& callback : run.options.callbacks) {
    ENGINE_CHECK(callback != nullptr, "FitOptions::callbacks holds a null callback");
  }
}

void UserCallbacks::epoch_started(FitRun& run) {
  for (const auto& callback : run.options.callbacks) callback->on_epoch_begin(control_, run.epoch);
}

// Nothing here waits for the device: a callback that reads the metrics or the weights does.
void UserCallbacks::step_finished(FitRun& run, int64_t done, int64_t count) {
  (void)count;
  for (const auto& callback : run.options.callbacks) callback->on_batch_end(control_, done);
}

void UserCallbacks::epoch_finished(FitRun& run, EpochRecord& record) {
  for (const auto& callback : run.options.callbacks) callback->on_epoch_end(control_, record);
}

void UserCallbacks::train_finished(FitRun& run) {
  for (const auto& callback : run.options.callbacks) callback->on_train_end(control_);
}

}  // namespace engine::nn
