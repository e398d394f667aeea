// Keras' habits in fit(): callbacks of your own, early stopping, a learning-rate schedule,
// saving the best model and a CSV log of the epochs. Each is a field of FitOptions
// (nn/training.h); fit() runs them as observers of its loop (nn/observers/).
//
//   struct Stopper : nn::Callback {                  // a callback of your own
//     void on_epoch_end(nn::FitControl& fit, const nn::EpochRecord& e) override {
//       if (e.accuracy > 0.99) fit.stop_training();
//     }
//   };
//   options.callbacks = {std::make_shared<Stopper>()};
//   options.early_stopping = nn::EarlyStopping{"val_loss", /*patience=*/3, 0.0, /*restore=*/true};
//   options.lr_schedule = nn::LearningRateSchedule::cosine(1e-5);
//   options.save_best.path = "best.model";            // whenever val_loss improves
//   options.log_csv = "log.csv";                      // epoch,loss,accuracy,val_loss,val_accuracy
#pragma once
#include <cstdint>
#include <string>

namespace engine::nn {

class Sequential;
struct EpochRecord;
struct FitRun;
struct History;

// What a callback's hooks are handed: the model being trained, where the run stands, and the
// one request a hook can make of fit, to stop.
class FitControl {
 public:
  explicit FitControl(FitRun& run) : run_(run) {}
  // The model: its weights (parameters().values), its optimizer (set_learning_rate).
  Sequential& model() const;
  int epoch() const;      // the epoch in progress, 1-based
  int epochs() const;     // FitOptions::epochs
  int64_t steps() const;  // steps per epoch
  const History& history() const;  // the epochs done so far (not yet the one ending)
  // The epoch's running means so far: its loss, and its metric (accuracy, or a regression
  // loss's mae; NaN where the loss has none). Each call waits for the device: see on_batch_end.
  double running_loss() const;
  double running_metric() const;
  // Asks fit to stop. fit checks after every step and after every epoch: from on_batch_end the
  // epoch ends after that step (its record covers the steps run, validated as usual), from
  // on_epoch_end the run ends after that epoch. fit then returns with History::stopped_early.
  void stop_training();
  bool stop_requested() const;

 private:
  FitRun& run_;
};

// A callback of your own (FitOptions::callbacks): override the hooks you need. They run in
// the order of the list, after fit's own observers (progress, validation, early stopping...).
class Callback {
 public:
  virtual ~Callback() = default;
  // Before the epoch's first step, after a schedule set its rate. May set the learning rate
  // (fit.model().optimizer().set_learning_rate: a step recorded as a CUDA graph is recorded
  // again, ~1 ms, nn/graphed_step.h) and read the weights.
  virtual void on_epoch_begin(FitControl& fit, int epoch) { (void)fit, (void)epoch; }
  // After step `step` (1-based) of fit.epoch(). Costs nothing by itself: the step's device work
  // is still in flight and fit does not wait for it. fit.running_loss() / running_metric(),
  // or reading the weights, wait for the device: on a GPU a synchronisation per step, which can
  // double the time of a small replayed step (the MLP's is ~50 us); read every N steps instead.
  // May set the learning rate and stop_training().
  virtual void on_batch_end(FitControl& fit, int64_t step) { (void)fit, (void)step; }
  // After the epoch's validation and fit's own observers filled `record`. May stop_training(),
  // read or save the model.
  virtual void on_epoch_end(FitControl& fit, const EpochRecord& record) {
    (void)fit, (void)record;
  }
  // When fit returns: after the last epoch, a stop, or a signal (history().interrupted_by);
  // not when fit throws.
  virtual void on_train_end(FitControl& fit) { (void)fit; }
};

// What early stopping and saving the best model watch, as Keras names it in the logs:
// "val_loss", "loss", "val_accuracy", "accuracy", "val_mae", "mae". Its value in `record`
// (NaN where not measured); throws engine::Error naming the valid ones for another name.
double monitored_value(const EpochRecord& record, const std::string& monitor);
// Whether smaller is better (the losses and mae; Keras' mode "min") or larger (accuracy).
bool lower_is_better(const std::string& monitor);

// Early stopping (Keras' EarlyStopping): stop once `monitor` has not improved, by more than
// `min_delta`, for `patience` epochs in a row. With restore_best_weights, fit keeps a copy of
// the weights (on the device, one buffer) at the best epoch and ends with them, whether it
// stopped early or ran all its epochs (Keras restores only when it stops). Prints
// "Early stopping: val_loss has not improved for 3 epochs; best 0.1234 at epoch 5, weights
// restored". After --resume, the epochs before it count (from the checkpoint's records), but
// their weights are not kept: a best epoch before the resume is not restored, and it says so.
struct EarlyStopping {
  std::string monitor = "val_loss";
  int patience = 0;
  double min_delta = 0.0;
  bool restore_best_weights = false;
};

// A learning rate per epoch, set at the epoch's start from the optimizer's rate when fit
// starts (lr0; Keras' LearningRateScheduler). Step: lr0 * factor^floor((epoch - 1) / every),
// so epochs 1..every train at lr0. Cosine: min + (lr0 - min) (1 + cos(pi (epoch - 1) / epochs))
// / 2, so epoch 1 trains at lr0 and the rate reaches min as the last epoch ends (as Keras'
// CosineDecay over the run). EpochRecord::learning_rate keeps each epoch's rate.
struct LearningRateSchedule {
  enum class Kind { None, Step, Cosine };
  Kind kind = Kind::None;
  double factor = 1.0;    // Step: in (0, 1]
  int every = 1;          // Step: epochs between two decays, at least 1
  double min_rate = 0.0;  // Cosine: at least 0, below lr0
  static LearningRateSchedule step(double factor, int every);
  static LearningRateSchedule cosine(double min_rate = 0.0);
  // The rate epoch `epoch` (1-based) of `epochs` trains at, from `initial` (lr0).
  double rate(double initial, int epoch, int epochs) const;
};

// Saving the best model (Keras' ModelCheckpoint with save_best_only): whenever `monitor`
// improves by more than `min_delta`, the model goes to `path` (nn/model_file.h's save_model;
// a path ending in ".weights" gets the weights alone, nn/weights_io.h, as Keras'
// ".weights.h5"). Empty path: off.
struct SaveBest {
  std::string path;
  std::string monitor = "val_loss";
  double min_delta = 0.0;
};

}  // namespace engine::nn
