// How much memory training a model takes, estimated before the first step, and the pre-flight
// check that refuses a run which cannot fit, with one line instead of an out-of-memory error
// inside the first step. dogs_vs_cats --cpu --image-size 1024 --batch-size 512 on a 23.5 GiB
// machine:
//   needs ~399.62 GiB of host memory for batch 512 (parameters 248.2 MiB, gradients 248.2 MiB,
//   optimizer state 248.2 MiB, activations 392.89 GiB, input batch 6.00 GiB), the host has
//   19.21 GiB free of 23.54 GiB: lower --batch-size
// On a GPU the memory is the device's (cudaMemGetInfo). The apps call it in one place:
// apps/common/training_report.cpp, train_and_report, before the model is built: the layers'
// shapes come from the layers themselves, so nothing sized by the data or a flag (the weights
// behind a Flatten of large images, a convolution's buffers) is allocated before the check (issue
// 24: an IDX of a few 3000 x 3000 images fed to mnist_cnn ended in std::bad_alloc while building
// the model; it is now refused with the estimate, its weights alone needing ~274 GiB).
//
// The estimate, for a batch of B samples of 4-byte floats:
//   parameters, gradients   4 bytes per weight each (the model's two flat buffers)
//   optimizer state         one more buffer of the weights' size per state the optimizer keeps
//                           (Adam 2, RMSprop 1, Adadelta 2, SGD 0, or 1 with momentum)
//   activations             B x 4 bytes x ACTIVATION_FACTOR x what the forward pass keeps for the
//                           backward pass, per sample: each layer's output, and for a layer with
//                           weights (Dense, Conv2D) its pre-activation too; nothing for Flatten
//                           (a view). The factor adds the gradients of those tensors and the
//                           intermediates of the ops.
//   input batch             B x (one sample + a label + a row index)
// The dataset itself, resident on the device before training, is not counted: it is already
// there, and the free memory the estimate is compared with is what is left beside it. Nor is
// what a CUDA graph adds: the recorded step keeps its memory, so a partial last batch (the set's
// size not a multiple of B) and the validation batches take theirs beside it (at most about the
// step's again); the factor leaves room for some of that, not all.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/device_services.h"
#include "nn/sequential.h"

namespace engine::nn {

// Bytes of activations per byte that the layers keep (above): the kept tensors, their
// gradients, with a margin for the allocator's rounding and the kernels' scratch buffers.
// tests/test_fault_reporting.cpp measures the CPU allocator's peak over one training step of
// a model of each seed model's kind, checks that the estimate lies between that peak and twice
// it, and prints the ratios.
constexpr double ACTIVATION_FACTOR = 2.0;

struct MemoryEstimate {
  int64_t batch = 0;
  size_t parameters = 0;
  size_t gradients = 0;
  size_t optimizer_state = 0;
  size_t activations = 0;
  size_t input_batch = 0;
  size_t total() const {
    return parameters + gradients + optimizer_state + activations + input_batch;
  }
};

// The estimate for `model` (built) in batches of `batch`, with `optimizer_buffers` buffers of the
// weights' size in its optimizer.
MemoryEstimate estimate_training_memory(const Sequential& model, int64_t batch,
                                        int64_t optimizer_buffers);
// The same for a model not built yet, for samples of `sample_shape`: each layer's build() fixes
// its shapes and allocates nothing (the model's build() calls it again, with the same shape).
MemoryEstimate estimate_training_memory(Sequential& model, const Shape& sample_shape,
                                        int64_t batch, int64_t optimizer_buffers);

// How many buffers of the weights' size `optimizer` keeps (Adam 2, RMSprop 1, Adadelta 2, SGD 0,
// or 1 with momentum), asked before any model exists: its state() of a store of no weights
// makes them empty (its first step, or a checkpoint's load, makes them at the weights' size).
int64_t state_buffer_count(Optimizer& optimizer);

// "~1.23 GiB for batch 32 (parameters 0.4 MiB, gradients ..., input batch 98.0 KiB)".
std::string describe(const MemoryEstimate& estimate);
// 1536 -> "1.5 KiB", 3 << 30 -> "3.00 GiB", 5 << 40 -> "5.00 TiB", 1.76e15 -> "1.56 PiB".
std::string memory_size(size_t bytes);

// Throws DeviceError, one line, when `need` bytes do not fit what `memory` has free plus
// `already_allocated` (the part of `need` in place already): "needs ~X of host memory for
// <what>, the host has Y free of Z: <hint>" ("device" on a GPU). Does nothing when memory is
// unknown. The training check below and jacobian()'s (nn/jacobian.h) say it this way.
void check_memory(size_t need, const std::string& what, const DeviceMemory& memory,
                  size_t already_allocated, Device device, const std::string& hint);

// check_memory for a training run, with the one line above: when its total exceeds
// memory.free_bytes + already_allocated, `already_allocated` being the part of the estimate
// that is in place already (the model's buffers, where made before the check). The hint is
// "lower --batch-size", or where the weights alone (parameters, gradients, optimizer state) do
// not fit, that no batch will: smaller inputs or a smaller model.
void check_training_memory(const MemoryEstimate& need, const DeviceMemory& memory,
                           size_t already_allocated, Device device);

// The pre-flight check of a training run, after model.build() and compile() and before fit():
// estimates the memory for `batch` (the training batch, at most the training set's size), logs
// the estimate at debug level, and checks it against `memory`, by default what the model's
// device reports (DeviceServices::memory_info). It makes the optimizer's state buffers now, as the
// first step would (Optimizer::state), to count them. Returns the estimate.
MemoryEstimate preflight_training_memory(Sequential& model, int64_t batch,
                                         std::optional<DeviceMemory> memory = std::nullopt);
// The pre-flight check before model.build(), which train_and_report makes: the estimate for
// samples of `sample_shape` (planned from the layers, above) in batches of `batch`, with
// `optimizer_buffers` (state_buffer_count; 0 for a run that only evaluates), logged at debug
// level and checked against `memory`, by default what `device` reports. Nothing of the model
// exists yet, so all of it must fit in the free memory. Returns the estimate.
MemoryEstimate preflight_training_memory(Sequential& model, const Shape& sample_shape,
                                         Device device, int64_t batch, int64_t optimizer_buffers,
                                         std::optional<DeviceMemory> memory = std::nullopt);

}  // namespace engine::nn
