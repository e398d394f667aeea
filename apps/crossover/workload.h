// apps/crossover: what a workload is (one training-like step whose size can be swept), the
// ways a GPU can run that step, and what timing one (workload, size, device, variant) gives.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"

namespace engine::crossover {

// How a step runs. On the CPU there is one way: its data is in host memory already.
enum class Variant {
  Cpu,       // the CPU (cpu/): OpenBLAS + OpenMP
  Copies,    // GPU, as the articles ran it: each step's inputs copied from host memory, the
             // step launched op by op, the host waiting for its end (transfer included)
  Resident,  // GPU, the data already on the device, the step launched op by op from the host
             // (every launch's overhead included)
  Graph,     // GPU, the data on the device, the step recorded once as a CUDA graph and
             // replayed: one launch per step (the overhead removed)
};
const char* to_string(Variant variant);  // "cpu", "copies", "resident", "graph"
inline constexpr Variant GPU_VARIANTS[] = {Variant::Copies, Variant::Resident, Variant::Graph};

// How long to time one measurement for: `samples` samples, each of enough back-to-back steps
// to last about `sample_seconds` (timers and launches then cost little per step); once a
// measurement has used `budget_seconds`, 3 samples are enough (the largest CPU sizes).
struct TimingPlan {
  int samples = 7;
  double sample_seconds = 2e-3;
  double budget_seconds = 1.5;
};

// Steps per sample for a step of `seconds_per_step` (at least `minimum`), and how many samples
// fit the plan's budget (at least 3, at most plan.samples).
int64_t steps_per_sample(const TimingPlan& plan, double seconds_per_step, int64_t minimum = 1);
int samples_within(const TimingPlan& plan, double seconds_per_sample);

// What timing one workload at one size on one device in one variant gives.
struct StepTimes {
  std::vector<double> per_step_ms;  // one per sample: its time over its steps
  int64_t steps_per_sample = 0;
  int64_t launches = 0;      // kernels in one step, where a recorded graph counted them
  std::string timer;         // how the samples were timed, for the output
  std::string not_measured;  // why there are no times (a step that cannot be recorded)
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string name() const = 0;       // "matmul"
  virtual std::string size_name() const = 0;  // what is swept: "n", "width", "batch"...
  // What one step is and what it costs, in a line or two.
  virtual std::string description() const = 0;
  // The sizes swept, smallest first; `quick`: the few small ones of a short run.
  virtual std::vector<int64_t> sizes(bool quick) const = 0;
  virtual StepTimes time(int64_t size, Device device, Variant variant, const TimingPlan& plan) = 0;
};

struct WorkloadSettings {
  int64_t batch_size = 32;  // of the dense and conv steps (mlp_step sweeps it)
  uint64_t seed = 42;
};

// "matmul", "dense", "conv", "mlp_step", in the order a full run measures them.
const std::vector<std::string>& workload_names();
std::unique_ptr<Workload> make_workload(const std::string& name, const WorkloadSettings& settings);

// The op-level workloads (op_workloads.cpp) and the seed-000 step (mlp_step.cpp).
std::unique_ptr<Workload> make_matmul(const WorkloadSettings& settings);
std::unique_ptr<Workload> make_dense(const WorkloadSettings& settings);
std::unique_ptr<Workload> make_conv(const WorkloadSettings& settings);
std::unique_ptr<Workload> make_mlp_step(const WorkloadSettings& settings);

}  // namespace engine::crossover
