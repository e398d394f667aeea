// What every benchmark and --json record names: the CPU model and the BLAS build.
#pragma once
#include <string>

namespace engine {

std::string cpu_model_name();  // from /proc/cpuinfo, "unknown" elsewhere
int hardware_threads();

}  // namespace engine
