// What fit/evaluate take and return.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/binary_file.h"
#include "core/data_parallel.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "nn/callbacks.h"
#include "nn/epoch_breakdown.h"

namespace engine::nn {

enum class Loss {
  // Integer labels (N,) against a softmax head (fused with it) or raw logits.
  SparseCategoricalCrossentropy,
  // Float targets shaped like the output, against a sigmoid head (fused with it, in the stable
  // form); accuracy at threshold 0.5 for a single output.
  BinaryCrossentropy,
  // Regression: float targets (N, F), or (N,) for a single output, against the model's output
  // as it is (no activation fused; a linear head is the usual one). Per sample, the mean over
  // the F outputs of (output - target)^2 (core/ops/regression_loss.h). Its metric is the mean
  // absolute error, reported as "mae" where a classification loss reports "accuracy".
  MeanSquaredError,
  // The same with |output - target|; its "mae" metric is then the loss itself, as in Keras.
  MeanAbsoluteError,
};

// Whether the loss is a regression loss (MeanSquaredError, MeanAbsoluteError): float targets,
// the model's own output, and "mae" instead of "accuracy".
bool is_regression(Loss loss);

// A labelled set, resident on the model's device: x (N, ...), y (N,) int32 or float, or float
// (N, F) targets of a regression loss or a multi-output sigmoid head.
struct Dataset {
  Tensor x;
  Tensor y;
  int64_t size() const { return x.defined() ? x.dim(0) : 0; }
};

// Where fit() takes its batches from: a resident Dataset (fit's other overload wraps one), or
// a loader that fills the batch itself each step (datasets/image_batches.h, through the app).
// fit() records one full-batch step as a CUDA graph and replays it, so what a full-batch step
// reads must stay at the same addresses: rows() and the index next() returns for a full batch.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual int64_t size() const = 0;         // samples in one pass over the data
  virtual const Dataset& rows() const = 0;  // what a step gathers its rows from
  // Called before the epoch's first next(): the epoch (1-based), its steps and batch size, and
  // the step it starts at (0, or the step a resumed run goes on with: next() is then first
  // called for that step's samples).
  virtual void start_epoch(int epoch, int64_t steps, int64_t batch, int64_t first_step) = 0;
  // The source's random state before start_epoch, for a checkpoint: restore_state(state()) on
  // a source over the same data makes the epochs after draw the batches they would have
  // drawn. Empty (the default) where the batches depend only on (seed, epoch), as the image
  // loader's do.
  virtual Bytes state() const { return {}; }
  virtual void restore_state(const Bytes& state);
  // What the source trains on, as 64 bits a checkpoint records, so that a run resumed on other
  // data is refused (FitRun::resume_from) even where the sample count is the same: for resident
  // data the CRC-32s of the inputs' and the labels' bytes (fingerprint_of, nn/checkpoint.h), for
  // the image loader those of its file list and its labels. 0 (the default): the source cannot
  // tell, and a resumed run is not checked for it. Called once per fit, where a checkpoint is
  // saved or resumed.
  virtual uint64_t fingerprint() const { return 0; }
  // Makes samples [first, first + count) of the epoch ready in rows() and returns the (count,)
  // I32 index of their rows there.
  virtual Tensor next(int64_t first, int64_t count) = 0;
  // Seconds the current epoch's next() calls spent waiting for data (0: resident data).
  virtual double wait_seconds() const { return 0.0; }
  // Whether next() copies the batch from the host (a loader) rather than picking rows that
  // are already on the device: --breakdown counts next()'s device time as input if so, as the
  // step's compute if not (nn/epoch_breakdown.h).
  virtual bool copies_from_host() const { return false; }
  // Whether it serves a data-parallel rank its own shard (FitOptions::communicator); fit()
  // refuses a source that does not, which would train every rank on the same rows.
  virtual bool serves_ranks() const { return false; }
  // The samples of one pass over the whole data set, what a checkpoint records: size(), but
  // for a source serving a data-parallel rank, whose size() is its shard, all of them.
  virtual int64_t data_size() const { return size(); }
  // Where the source is rows() on the device picked in an order it holds there: that order
  // for the epoch start_epoch began (sample i of the epoch is row (*epoch_order())[i]), which
  // the fused MLP kernel reads for many steps at once (nn/fused_mlp.h). nullptr otherwise.
  virtual const Tensor* epoch_order() const { return nullptr; }
};

struct TrainingState;

// Where fit() runs an MLP's steps in a fused kernel (FitOptions::fused, nn/fused_mlp.h).
enum class FusedUse { Auto, On, Off };

struct FitOptions {
  int epochs = 1;
  int64_t batch_size = 32;
  int64_t steps_per_epoch = 0;  // 0: the whole set (the last batch may be partial)
  bool shuffle = true;
  uint64_t seed = 0;            // shuffle order and dropout masks
  const Dataset* validation = nullptr;
  bool verbose = true;          // Keras-style progress on `out`
  std::ostream* out = nullptr;  // std::cout when null
  // Record one full-batch training step as a CUDA graph and replay it for every full batch
  // (where the device can record; the CPU cannot). A partial last batch runs op by op.
  bool use_graph = true;
  // An MLP's steps in a fused kernel, many steps a launch, where the model and the run allow
  // it (nn/fused_mlp.h says when): Auto where a weight-stationary kernel takes the model (as
  // the seed's small and wide models on an H100, where they beat the graph), On wherever a
  // fused kernel does (the streaming one is slower than the graph on wide models:
  // docs/FUSED_MLP.md), Off never. Otherwise, op by op (replayed as a graph with use_graph).
  FusedUse fused = FusedUse::Auto;

  // Checkpoints (nn/checkpoint.h): with a path, fit saves one after every `checkpoint_every`
  // epochs and after the last (0: none of those), and one when `stop_signal` asks it to stop.
  std::string checkpoint_path;
  int checkpoint_every = 0;
  // Where a checkpoint left off (load_checkpoint, which also restored the model and its
  // optimizer): fit goes on from there to `epochs` as if it had never stopped. It must have
  // been saved with the same seed, batch size and steps per epoch, over the same data (the
  // source's fingerprint); else fit throws engine::Error naming the checkpoint's file.
  const TrainingState* resume = nullptr;
  // Once this holds a nonzero value (a signal number, set by a handler), fit finishes the
  // step it is in, saves a checkpoint (with a checkpoint_path), and returns with
  // History::interrupted_by set. Checked after every step.
  const std::atomic<int>* stop_signal = nullptr;
  // After every step, check that the loss and the gradients are finite; on a NaN or an
  // infinity, throw engine::Error naming the epoch, the step and the first parameter (in
  // forward order) whose gradient holds it, before anything is saved. Costs a dot product
  // over the gradients and two scalar reads per step: a synchronisation on the GPU.
  bool check_numerics = false;
  // Measure where each epoch's time went (EpochRecord::breakdown, nn/epoch_breakdown.h): device
  // timers around each step's parts, read after the epoch. Needs the device's timers, which
  // --profile holds.
  bool breakdown = false;

  // Keras' habits (nn/callbacks.h). None of them adds work to a step unless a callback asks
  // for it in on_batch_end; the others act at an epoch's start or end.
  // Callbacks of your own: on_epoch_begin, on_batch_end, on_epoch_end, on_train_end.
  std::vector<std::shared_ptr<Callback>> callbacks;
  std::optional<EarlyStopping> early_stopping;
  LearningRateSchedule lr_schedule;  // Kind::None: the optimizer's rate throughout
  SaveBest save_best;                // with a path: the model whenever its monitor improves
  // A CSV row per epoch (Keras' CSVLogger): epoch,loss,<metric>,val_loss,val_<metric>, the
  // metric being accuracy or mae, the val_ columns with validation data, then lr with a
  // schedule; epochs counted from 1 as the progress line does. Written with the header on a
  // fresh run and flushed after each epoch; with `resume`, the file keeps its header and the
  // rows of the epochs the checkpoint holds, and the run appends to it.
  std::string log_csv;

  // Data parallelism (core/data_parallel.h): with the ranks' communicator, each rank trains on
  // its shard of every batch (batch_size rows of the global batch_size x world), the gradients
  // are averaged over the ranks each step, the weights start from rank 0's, every rank stops
  // after the same step on a signal, the epoch's loss and metric are over all ranks' rows, and
  // only rank 0 writes checkpoints. nullptr: one process.
  Communicator* communicator = nullptr;
  // The gradients' all-reduce starts bucket by bucket, each of about this many bytes, as the
  // backward pass writes them (nn/gradient_buckets.h); larger than the model: one all-reduce
  // after the backward pass, nothing overlapped.
  int64_t bucket_bytes = int64_t{4} << 20;
};

// The samples of one step over all data-parallel ranks (batch_size x world; batch_size
// without a communicator): what a checkpoint records, so that it resumes on any number of
// GPUs with the same global batch.
int64_t global_batch(const FitOptions& options);

// A Dataset resident on the device, shuffled every epoch from options.seed; a full batch's row
// indices are copied into one index buffer, so every full-batch step reads the same tensor.
// In a data-parallel run (FitOptions::communicator) it serves this rank's shard of every
// epoch's order (rank_order, core/data_parallel.h): size() is the rank's rows per epoch.
class ResidentBatches final : public BatchSource {
 public:
  // `data` must outlive this; options gives batch_size, shuffle, seed and the communicator.
  ResidentBatches(const Dataset& data, const FitOptions& options, Device device);
  int64_t size() const override { return rows_per_rank(data_.size(), world_); }
  const Dataset& rows() const override { return data_; }
  void start_epoch(int epoch, int64_t steps, int64_t batch, int64_t first_step) override;
  Tensor next(int64_t first, int64_t count) override;
  bool serves_ranks() const override { return true; }
  int64_t data_size() const override { return data_.size(); }
  const Tensor* epoch_order() const override { return &device_order_; }
  // Each epoch shuffles the previous epoch's order on: the state is the generator's position
  // and that order.
  Bytes state() const override;
  void restore_state(const Bytes& state) override;
  uint64_t fingerprint() const override;

 private:
  const Dataset& data_;
  bool shuffle_;
  int rank_ = 0, world_ = 1;
  Generator rng_;
  std::vector<int32_t> order_;  // the epoch's order of all the rows, the same on every rank
  Tensor step_index_, device_order_;
};

// Memory after an epoch (its validation included), for a soak run's curve: flat after the
// first epoch unless something leaks.
struct EpochMemory {
  size_t host_rss_bytes = 0;  // the process's resident set (core/system_info.h)
  // The model device's caching allocator (core/allocator.h): bytes handed out and not freed,
  // and those plus the freed blocks it keeps, i.e. what it holds from the system. On the CPU
  // that allocator's memory is part of the resident set.
  size_t allocator_in_use_bytes = 0;
  size_t allocator_reserved_bytes = 0;
};

struct EpochRecord {
  int epoch = 0;         // 1-based
  double seconds = 0.0;  // wall time of the training steps (validation excluded)
  int64_t steps = 0;
  double loss = 0.0;      // mean over the epoch's samples, as Keras reports it
  double accuracy = 0.0;  // fraction; NaN where the loss has no accuracy metric
  double val_loss = 0.0;  // NaN without validation data
  double val_accuracy = 0.0;
  // A regression loss's metric in place of accuracy (which is then NaN): the mean absolute
  // error over the epoch's samples, and over the validation data. NaN for the other losses,
  // and in the records a checkpoint restores (it keeps the classification fields only).
  double mae = std::numeric_limits<double>::quiet_NaN();
  double val_mae = std::numeric_limits<double>::quiet_NaN();
  double val_seconds = 0.0;
  // The optimizer's learning rate as the epoch started (after a schedule set it); NaN in the
  // records a checkpoint restores.
  double learning_rate = std::numeric_limits<double>::quiet_NaN();
  double data_wait_seconds = 0.0;  // of `seconds`, the part the steps waited for their data
  // The steps this process ran in the epoch, split at the end of its warm-up (its first steps,
  // which pay one-off costs: nn/training.cpp), and their parts of `seconds`, on its clock. The
  // steady ones are what a median time per step is taken over. A checkpoint keeps none of
  // them, so the epochs before a resumed run's first have zeros, and in a resumed epoch
  // steps = the checkpoint's steps + warmup_steps + steady_steps (and so for the seconds).
  int64_t warmup_steps = 0;
  double warmup_seconds = 0.0;
  int64_t steady_steps = 0;
  double steady_seconds = 0.0;
  // Measured at the epoch's end, in this process: a checkpoint does not keep them, so the
  // epochs before a resumed run's first have neither. breakdown only with FitOptions::breakdown.
  std::optional<EpochMemory> memory;
  std::optional<EpochBreakdown> breakdown;
};

struct History {
  std::vector<EpochRecord> epochs;  // with a resumed run, the epochs before it too
  bool graph_replay = false;      // whether full batches ran as a replayed graph
  int64_t kernels_per_step = 0;   // kernel launches in the recorded step (0: not recorded)
  double capture_seconds = 0.0;   // host time of recording it, part of the warm-up (0: none)
  // Set when stop_signal stopped the run: the signal, and where it stopped (the epoch,
  // 1-based, and the steps of it done).
  int interrupted_by = 0;
  int stopped_epoch = 0;
  int64_t stopped_step = 0;
  // Whether fit saved a checkpoint; after a stop, the last one is where it stopped.
  bool checkpoint_saved = false;
  // Whether early stopping or a callback ended the run (FitControl::stop_training), and with
  // early stopping, the epoch its monitor was best at (0: none).
  bool stopped_early = false;
  int best_epoch = 0;
  // How often the step was recorded as a CUDA graph: once, and again after each change of the
  // learning rate (a replay keeps the rate it was recorded with: nn/graphed_step.h).
  int64_t graph_captures = 0;
  // Whether the steps ran in the fused MLP kernel (nn/fused_mlp.h); where the model is an MLP
  // it could run but the run did not take it, why not (one line; empty otherwise).
  bool fused = false;
  std::string fused_kernel;  // where fused: "stationary" or "streaming" (core/ops/fused_mlp.h)
  std::string fused_why_not;
};

// Where a run stands between two steps: with the model's weights, its optimizer's state and
// step counter, all a checkpoint holds to go on as if the run had never stopped.
struct TrainingState {
  // The run's settings, which shape the batches and the masks: a resumed run must share them.
  uint64_t seed = 0;
  int64_t batch_size = 0;
  int64_t steps_per_epoch = 0;  // resolved: the steps each epoch runs
  // The data it trained on: the source's size and BatchSource::fingerprint() (0: not known, as
  // in a checkpoint of format version 1). A resumed run must train on the same.
  int64_t data_samples = 0;
  uint64_t data_fingerprint = 0;
  // The epoch to go on with (1-based) and its steps already done (0 at an epoch boundary).
  int epoch = 1;
  int64_t step = 0;
  // That epoch's running sums so far, as fit keeps them on the device, and its time. `correct`
  // is the metric's sum (RunningMetrics::correct): the absolute errors of a regression loss.
  float loss_sum = 0.0f;
  float correct = 0.0f;
  int64_t samples = 0;
  double seconds = 0.0;
  double data_wait_seconds = 0.0;
  Bytes source_state;                // BatchSource::state() before `epoch` started
  std::vector<EpochRecord> history;  // the epochs done
  // The file load_checkpoint read it from (not saved): fit's refusals to resume name it.
  std::string file;
};

struct EvalOptions {
  int64_t batch_size = 32;
  bool verbose = false;
  std::ostream* out = nullptr;
};

struct EvalResult {
  double loss = 0.0;
  double accuracy = 0.0;  // NaN where the loss has no accuracy metric (a regression loss)
  int64_t samples = 0;
  double seconds = 0.0;
  // A regression loss's metric, the mean absolute error over the samples; NaN otherwise.
  double mae = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace engine::nn
