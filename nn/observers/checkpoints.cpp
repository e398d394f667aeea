#include "nn/observers/checkpoints.h"

#include "core/error.h"
#include "nn/checkpoint.h"
#include "nn/sequential.h"

namespace engine::nn {

Checkpoints::Checkpoints(FitRun& run) : run_(run), enabled_(!run.options.checkpoint_path.empty()) {
  at_epoch_start_.seed = run.options.seed;
  at_epoch_start_.batch_size = global_batch(run.options);
  at_epoch_start_.steps_per_epoch = run.steps;
  at_epoch_start_.data_samples = run.source.data_size();
  at_epoch_start_.data_fingerprint = run.data_fingerprint;
}

void Checkpoints::before_epoch() {
  if (enabled_) at_epoch_start_.source_state = run_.source.state();
}

void Checkpoints::save(TrainingState state) {
  const std::string& path = run_.options.checkpoint_path;
  state.history = run_.history.epochs;
  // A data-parallel run's ranks hold the same state: rank 0 writes it.
  const Communicator* ranks = run_.options.communicator;
  if (!ranks || ranks->rank() == 0) save_checkpoint(run_.model, state, path);
  run_.history.checkpoint_saved = true;
  kept_ = state.step == 0 ? detail::concat("; the last checkpoint, ", path, " (after epoch ",
                                           state.epoch - 1, "), is kept")
                          : detail::concat("; the last checkpoint, ", path, " (epoch ", state.epoch,
                                           ", step ", state.step, "), is kept");
}

void Checkpoints::save_mid_epoch(int64_t done) {
  if (!enabled_) return;
  TrainingState state = at_epoch_start_;
  state.epoch = run_.epoch;
  state.step = done;
  run_.sum_over_ranks();  // the run stops here: its sums may be all ranks' from now on
  state.loss_sum = static_cast<float>(run_.running.loss_sum.item());
  state.correct = static_cast<float>(run_.running.correct.item());
  state.samples = run_.running.samples;
  state.seconds = run_.epoch_seconds();
  state.data_wait_seconds = run_.earlier_wait + run_.source.wait_seconds();
  save(std::move(state));
}

void Checkpoints::after_epoch(int signal) {
  const int every = run_.options.checkpoint_every;
  // The run's last epoch: `epochs`, or where early stopping or a callback stopped it.
  const bool last = run_.epoch == run_.options.epochs || run_.stop_training;
  const bool due = every > 0 && (run_.epoch % every == 0 || last);
  if (!enabled_ || (!due && signal == 0)) return;
  TrainingState state = at_epoch_start_;
  state.epoch = run_.epoch + 1;
  state.source_state = run_.source.state();
  save(std::move(state));
}

}  // namespace engine::nn
