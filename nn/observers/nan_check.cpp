#include <cmath>

#include "core/error.h"
#include "core/profiler.h"
#include "nn/observers/checkpoints.h"
#include "nn/observers/observers.h"
#include "nn/sequential.h"

namespace engine::nn {

NanCheck::NanCheck(FitRun& run, const Checkpoints& checkpoints)
    : checkpoints_(checkpoints), grad_check_(Tensor::empty({1, 1}, DType::F32, run.model.device())) {}

// After a step: throws if its loss (the epoch's running sum, which a NaN or an infinity
// poisons for good) or its gradients hold a NaN or an infinity. The gradients cost one dot
// product with themselves, g . g, and a scalar read: it is NaN or infinite if any gradient
// is. (A dot, not raw::sum: on the CPU it is BLAS' vectorised sdot, measured 4 us for the
// MLP's 101,770 gradients on one core against 250 us for sum, which accumulates in double;
// 2-core dev VM, 2026-11-23.) Only then do the gradients come to the host, to name the first
// parameter (in forward order) that holds one; a dot that merely overflowed (gradients beyond
// ~1e17, all finite) is found out by that scan, and training goes on.
void NanCheck::step_finished(FitRun& run, int64_t done, int64_t count) {
  (void)count;
  if (run.history.fused) {  // the fused kernel keeps no gradients; one step a launch
    check_fused_step(run, done);
    return;
  }
  const ParameterStore& store = run.model.parameters();
  const double loss = run.running.loss_sum.item();
  const int64_t n = store.count();
  const ProfileScope scope("NaN check: g.g");
  raw::matmul(store.grads.view({1, n}), false, store.grads.view({n, 1}), false,
                               grad_check_, 1.0f, 0.0f);
  if (std::isfinite(loss) && std::isfinite(grad_check_.item())) return;
  float bad = 0.0f;
  const Parameter* p = first_non_finite(store, store.grads.to_vector(), &bad);
  if (p == nullptr && std::isfinite(loss)) return;
  const std::string found =
      p ? detail::concat("first in the gradient of ", p->name, " (forward order), value ", bad,
                         "; the epoch's mean loss so far ", run.running.loss())
        : detail::concat("in the loss (the epoch's mean so far ", run.running.loss(),
                         "); the gradients are finite");
  throw Error(detail::concat("NaN/Inf at epoch ", run.epoch, ", step ", done, "/", run.steps, ": ",
                             found, ". Training stopped without saving it", checkpoints_.kept()));
}

// A step of the fused MLP kernel (nn/fused_mlp.h), which keeps no gradients: a NaN or an
// infinity in them reaches the weights through Adam in the same step, so the weights after it
// and the loss are what it checks.
void NanCheck::check_fused_step(FitRun& run, int64_t done) {
  check_weights(run, done);
  const double loss = run.running.loss_sum.item();
  if (std::isfinite(loss)) return;
  throw Error(detail::concat("NaN/Inf at epoch ", run.epoch, ", step ", done, "/", run.steps,
                             ": in the loss (the epoch's mean so far ", run.running.loss(),
                             "); the weights are finite. Training stopped without saving it",
                             checkpoints_.kept()));
}

// After the epoch's last step (or the step a callback stopped it at): the step checks above
// read the gradients before their update, so the last update of an epoch, and of the run, is
// only checked here. Its weights are what the epoch's checkpoint, the best model, the app's
// --save and fit's caller get. One dot w . w and a scalar read per epoch, where the epoch's
// end waits for the device anyway; the host scan only to name the parameter.
void NanCheck::epoch_finished(FitRun& run, EpochRecord& record) {
  check_weights(run, record.steps);
}

// A run stopped by a signal mid-epoch returns the weights of that step, unchecked as yet. (At
// an epoch's end, epoch_finished has checked them.)
void NanCheck::train_finished(FitRun& run) {
  if (run.history.interrupted_by != 0 && run.history.stopped_step > 0) {
    check_weights(run, run.history.stopped_step);
  }
}

void NanCheck::check_weights(FitRun& run, int64_t done) {
  const ParameterStore& store = run.model.parameters();
  const int64_t n = store.count();
  {
    const ProfileScope scope("NaN check: w.w");
    raw::matmul(store.values.view({1, n}), false, store.values.view({n, 1}), false, grad_check_,
                1.0f, 0.0f);
    if (std::isfinite(grad_check_.item())) return;
  }
  float bad = 0.0f;
  const Parameter* p = first_non_finite(store, store.values.to_vector(), &bad);
  if (p == nullptr) return;  // large weights whose squares overflowed the sum, all finite
  throw Error(detail::concat("NaN/Inf at epoch ", run.epoch, ", step ", done, "/", run.steps,
                             ": first in the weights of ", p->name,
                             " (forward order) after the step's update, value ", bad,
                             "; the epoch's mean loss ", run.running.loss(),
                             ". Training stopped without saving it", checkpoints_.kept()));
}

}  // namespace engine::nn
