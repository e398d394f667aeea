// Checkpoints: all a training run needs to go on after a crash, a kill or Ctrl-C as if it had
// never stopped, so that the resumed run ends with the same weights, bit for bit, as one that
// ran straight through (on the CPU with fixed threads; on a GPU with the same device and
// kernels). A checkpoint holds the weights, the optimizer's state (moments, accumulators), the
// step counter (Adam's bias correction and the dropout masks read it), the shuffling state,
// the run's seed and batch settings, a fingerprint of the data it trains on, the epoch and step
// to go on with, that epoch's running loss and accuracy sums, and the records of the epochs
// done. The format is in docs/checkpoints.md: a magic string, a version, the fields, a CRC-32
// of them all.
#pragma once
#include <string>
#include <vector>

#include "nn/sequential.h"
#include "nn/training.h"

namespace engine::nn {

// Version 2 added the data's sample count and fingerprint. Version 1 files still load; they
// carry no fingerprint, so a run resumed from one is not checked for other data.
constexpr uint32_t CHECKPOINT_FORMAT_VERSION = 2;

// BatchSource::fingerprint of resident data: the CRC-32 of the inputs' bytes, then that of the
// labels' (or targets'), in 64 bits. A device's tensors are copied to the host for it; on the
// CPU it reads them where they are (27 ms for 60,000 images of 28 x 28 on one core).
uint64_t fingerprint_of(const Dataset& data);

// Writes a checkpoint of the compiled `model` and `state` through a temporary of its own,
// `path.tmp.XXXXXX`, fsynced and renamed over `path`: a crash or a kill mid-write leaves the
// previous checkpoint whole.
// Refuses (engine::Error, the previous file untouched) weights or optimizer state that hold a
// NaN or an infinity: a checkpoint is only ever a good point to go back to.
void save_checkpoint(Sequential& model, const TrainingState& state, const std::string& path);

// Throws engine::Error, one line, where `flat` (laid out like store.values: the weights or an
// optimizer's state buffer, on the host) holds a NaN or an infinity: "<path>: <refusal>:
// dense/kernel holds nan in <what><why>", naming the first parameter in forward order. The
// savers (checkpoints, save_weights, save_model) call it before writing anything, so a file
// already at `path` is kept; the loaders before changing the model.
void refuse_non_finite(const ParameterStore& store, const std::vector<float>& flat,
                       const std::string& path, const std::string& refusal,
                       const std::string& what, const std::string& why);

// Restores a checkpoint into a compiled model with the same parameters and optimizer type:
// its weights, optimizer state and step counter; returns the rest for FitOptions::resume.
// Throws engine::Error with one line naming the file and the problem (missing, truncated, bad
// magic, a weights file, newer version, checksum, other parameters or shapes, another
// optimizer, a NaN or an infinity in the weights or the optimizer's state), having left the
// model untouched.
TrainingState load_checkpoint(Sequential& model, const std::string& path);

// The state a fit() that returned after its last epoch left its run in: what a checkpoint saved
// then holds (fit saves one itself only where FitOptions asks for it). The apps save it when a
// signal comes after fit and nothing else keeps the trained model (apps/common/training_report.cpp);
// resuming it with the same options trains no more. `options` and `source` are fit's.
TrainingState state_after_fit(const FitOptions& options, const BatchSource& source,
                              const History& history);

}  // namespace engine::nn
