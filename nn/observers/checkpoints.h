// Checkpoints during fit() (FitOptions::checkpoint_path): after every `checkpoint_every`
// epochs and the last (`epochs`, or where early stopping or a callback stopped the run), and
// where a signal stops the run, mid-epoch or after one. Each holds
// the model, the settings that shaped the batches and masks, the source's state before the
// epoch, the epoch's running sums and time, and the history (nn/checkpoint.h).
#pragma once
#include <string>

#include "nn/fit_run.h"

namespace engine::nn {

class Checkpoints {
 public:
  explicit Checkpoints(FitRun& run);
  // Before the source starts the epoch (which consumes its state).
  void before_epoch();
  // A stop after step `done` of the epoch: the checkpoint goes on from the next step.
  void save_mid_epoch(int64_t done);
  // After the epoch's record joined the history: saves if one is due or `signal` stopped the run.
  void after_epoch(int signal);
  // For the NaN check's message: the last checkpoint saved, if any ("" before the first).
  const std::string& kept() const { return kept_; }

 private:
  void save(TrainingState state);

  FitRun& run_;
  bool enabled_;
  TrainingState at_epoch_start_;  // the settings and the source's state before this epoch
  std::string kept_;
};

}  // namespace engine::nn
