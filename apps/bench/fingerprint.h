// What the report's numbers mean only together with: the machine (CPU, threads, BLAS build; GPU
// name, SMs, clocks, driver, CUDA) and whether PyTorch can run beside us.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace engine::bench {

using Fingerprint = std::vector<std::pair<std::string, std::string>>;

// The host and, where this build has the CUDA backend and a GPU is usable, the GPU (from the
// CUDA runtime) and nvidia-smi's view of it (driver version, clocks now, power limit) where
// nvidia-smi is on PATH. `threads`: the CPU threads the runs use. Probe logs go to `log_dir`.
Fingerprint machine_fingerprint(int threads, const std::string& log_dir);

struct PyTorchProbe {
  bool installed = false;
  bool cuda = false;        // torch.cuda.is_available()
  std::string description;  // "2.11.0+cu130, CUDA 13.0, cuDNN 91900, NVIDIA H100 80GB HBM3"
  std::string why_not;      // when not installed: "not installed (No module named 'torch')"
};

// Imports torch with `python` (in a child process, under a time limit; its log in `log_dir`).
PyTorchProbe probe_pytorch(const std::string& python, const std::string& log_dir);

}  // namespace engine::bench
