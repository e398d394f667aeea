#include "apps/crossover/workload.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace engine::crossover {

// A sample of a few microseconds' steps would hold thousands; past this the timer's cost per
// step is already far below the step's.
constexpr int64_t MAX_STEPS_PER_SAMPLE = 10000;

const char* to_string(Variant variant) {
  switch (variant) {
    case Variant::Cpu: return "cpu";
    case Variant::Copies: return "copies";
    case Variant::Resident: return "resident";
    case Variant::Graph: return "graph";
  }
  return "?";
}

int64_t steps_per_sample(const TimingPlan& plan, double seconds_per_step, int64_t minimum) {
  const double wanted = std::ceil(plan.sample_seconds / std::max(seconds_per_step, 1e-9));
  return std::clamp(static_cast<int64_t>(wanted), minimum, std::max(minimum, MAX_STEPS_PER_SAMPLE));
}

int samples_within(const TimingPlan& plan, double seconds_per_sample) {
  const double fit = plan.budget_seconds / std::max(seconds_per_sample, 1e-9);
  const int affordable = fit >= plan.samples ? plan.samples : std::max(3, static_cast<int>(fit));
  return std::min(plan.samples, affordable);
}

const std::vector<std::string>& workload_names() {
  static const std::vector<std::string> names = {"matmul", "dense", "conv", "mlp_step"};
  return names;
}

std::unique_ptr<Workload> make_workload(const std::string& name, const WorkloadSettings& settings) {
  if (name == "matmul") return make_matmul(settings);
  if (name == "dense") return make_dense(settings);
  if (name == "conv") return make_conv(settings);
  ENGINE_CHECK(name == "mlp_step", "unknown workload '", name, "'");
  return make_mlp_step(settings);
}

}  // namespace engine::crossover
