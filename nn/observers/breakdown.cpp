#include "nn/observers/observers.h"

namespace engine::nn {

void Breakdown::epoch_finished(FitRun& run, EpochRecord& record) {
  record.breakdown = run.clock.finish(run.source.wait_seconds(), record.val_seconds,
                                      record.steps - run.first_step, run.replayed_steps,
                                      run.fused_steps);
}

}  // namespace engine::nn
