// The Communicator of core/data_parallel.h over NCCL, on the engine's one stream
// (kernels/launch.h), so a recorded CUDA graph holds the step's all-reduce like any kernel.
// Built only where CMake found NCCL (ENGINE_WITH_NCCL).
#pragma once
#include <memory>

#include "core/data_parallel.h"

namespace engine::cuda {

// On the process's one GPU, whose stream is kernels/launch.h's.
std::unique_ptr<Communicator> connect_nccl(const ProcessRanks& ranks, double timeout_seconds);

}  // namespace engine::cuda
