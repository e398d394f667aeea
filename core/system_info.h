// What every benchmark and --json record names: the CPU model and the BLAS build; and the
// process's memory, which a soak run follows epoch by epoch.
#pragma once
#include <cstddef>
#include <string>

namespace engine {

std::string cpu_model_name();  // from /proc/cpuinfo, "unknown" elsewhere
int hardware_threads();
// The process's resident set now: VmRSS of /proc/self/status; where there is no /proc,
// getrusage's peak resident set (which only grows, so a flat curve still means no growth).
size_t host_rss_bytes();

}  // namespace engine
