// Checkpoints: all a training run needs to go on after a crash, a kill or Ctrl-C as if it had
// never stopped, so that the resumed run ends with the same weights, bit for bit, as one that
// ran straight through (on the CPU with fixed threads; on a GPU with the same device and
// kernels). A checkpoint holds the weights, the optimizer's state (moments, accumulators), the
// step counter (Adam's bias correction and the dropout masks read it), the shuffling state,
// the run's seed and batch settings, the epoch and step to go on with, that epoch's running
// loss and accuracy sums, and the records of the epochs done. The format is in
// docs/checkpoints.md: a magic string, a version, the fields, a CRC-32 of them all.
#pragma once
#include <string>
#include <vector>

#include "nn/sequential.h"
#include "nn/training.h"

namespace engine::nn {

constexpr uint32_t CHECKPOINT_FORMAT_VERSION = 1;

// Writes a checkpoint of the compiled `model` and `state` through `path.tmp`, fsynced and
// renamed over `path`: a crash or a kill mid-write leaves the previous checkpoint whole.
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

}  // namespace engine::nn
