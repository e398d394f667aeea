// The profiling wrapper and its report (core/profiler.h).
#include "core/profiler.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/dispatch.h"
#include "core/peaks_cache.h"

namespace engine {

namespace {
thread_local const char* g_scope = nullptr;
}  // namespace

ProfileScope::ProfileScope(const char* name) : outer_(g_scope) { g_scope = name; }
ProfileScope::~ProfileScope() { g_scope = outer_; }
const char* current_profile_scope() { return g_scope; }

namespace {

// The copies' names say "host" and "device"; on the CPU both are host memory and each copy is
// a memcpy into, out of or within a tensor: the row says so.
// A matmul of one row by one column ("1xK @ Kx1") is a dot product, g . g in the NaN check:
// its row says so.
const char* op_name(const char* op, const std::string& shape, bool cpu) {
  const std::string name = op;
  if (name == "matmul" && shape.rfind("1x", 0) == 0 && shape.size() > 2 &&
      shape.compare(shape.size() - 2, 2, "x1") == 0 && shape.find("^T") == std::string::npos) {
    return "matmul as a dot (1xK . Kx1)";
  }
  if (!cpu) return op;
  if (name == "copy host->device") return "copy into a tensor (memcpy)";
  if (name == "copy device->host") return "copy out of a tensor (memcpy)";
  if (name == "copy device->device") return "copy within tensors (memcpy)";
  if (name == "copy host->device (pinned, async)") return "copy into a tensor (memcpy, pinned)";
  return op;
}

constexpr size_t MAX_PENDING = 4096;  // timer pairs kept before they are read and reused

// Every op and copy on one device, timed: around_op brackets the call with two of the device's
// timers, its own set (DeviceServices::make_timers), read back in batches.
class ProfilingHook final : public OpHook {
 public:
  explicit ProfilingHook(DeviceServices& device)
      : device_(device),
        timers_(device.make_timers()),
        peaks_(cached_peaks(device)),
        cpu_(device.device().is_cpu()),
        start_(std::chrono::steady_clock::now()) {}

  void around_op(const OpCall& call, const OpRun& run) override {
    const char* scope = g_scope != nullptr ? g_scope : "";
    const std::string key = std::string(call.op) + '\0' + call.shape + '\0' + scope;
    auto found = index_.find(key);
    if (found == index_.end()) {
      found = index_.emplace(key, rows_.size()).first;
      rows_.push_back({op_name(call.op, call.shape, cpu_), call.shape, 0, 0.0, call.cost, scope});
    }
    const uint64_t start = timers_->record();
    run();
    pending_.push_back({found->second, start, timers_->record()});
    if (pending_.size() >= MAX_PENDING) flush();
  }

  Profile collect() {
    device_.synchronize();
    flush();
    Profile profile;
    profile.device = device_.name();
    profile.peaks = peaks_;
    profile.ops = rows_;
    std::sort(profile.ops.begin(), profile.ops.end(),
              [](const OpProfile& a, const OpProfile& b) { return a.seconds > b.seconds; });
    for (const OpProfile& row : profile.ops) profile.op_seconds += row.seconds;
    profile.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return profile;
  }

  Device device() const { return device_.device(); }

 private:
  struct Pending {
    size_t row;
    uint64_t start, end;
  };

  // Reads every pending pair of timers (waiting for the device) and frees them for reuse.
  void flush() {
    for (const Pending& p : pending_) {
      rows_[p.row].seconds += timers_->seconds(p.start, p.end);
      rows_[p.row].calls += 1;
    }
    pending_.clear();
    timers_->reset();
  }

  DeviceServices& device_;
  std::unique_ptr<DeviceTimers> timers_;
  MeasuredPeaks peaks_;
  bool cpu_;
  std::chrono::steady_clock::time_point start_;
  std::map<std::string, size_t> index_;
  std::vector<OpProfile> rows_;
  std::vector<Pending> pending_;
};

// One slot per device: the CPU, then CUDA devices 0..15. Written once at start-up, before any
// other thread exists.
constexpr size_t MAX_DEVICES = 17;
std::array<std::unique_ptr<ProfilingHook>, MAX_DEVICES> g_profiled;

size_t slot_of(Device device) {
  const size_t slot = device.is_cpu() ? 0 : static_cast<size_t>(device.index) + 1;
  ENGINE_CHECK(slot < MAX_DEVICES, "device ", to_string(device), " is beyond the profiler's table");
  return slot;
}

}  // namespace

void enable_profiling(Device device) {
  const size_t slot = slot_of(device);
  if (g_profiled[slot]) return;
  g_profiled[slot] = std::make_unique<ProfilingHook>(device_services(device));
  add_op_hook(device, g_profiled[slot].get());
}

bool profiling_enabled(Device device) {
  const size_t slot = device.is_cpu() ? 0 : static_cast<size_t>(device.index) + 1;
  return slot < MAX_DEVICES && g_profiled[slot] != nullptr;
}

std::vector<Device> profiled_devices() {
  std::vector<Device> devices;
  for (size_t slot = 0; slot < MAX_DEVICES; ++slot) {
    if (g_profiled[slot]) devices.push_back(g_profiled[slot]->device());
  }
  return devices;
}

Profile collect_profile(Device device) {
  const size_t slot = slot_of(device);
  ENGINE_CHECK(g_profiled[slot] != nullptr, "no profile: profiling was not enabled on ",
               to_string(device));
  return g_profiled[slot]->collect();
}

std::string verdict(const OpProfile& row, const MeasuredPeaks& peaks) {
  if (row.calls == 0) return "-";
  const double per_call = row.seconds / static_cast<double>(row.calls);
  if (per_call < 3.0 * peaks.launch_seconds) return "launch-bound";
  const double ridge = peaks.flops_per_s / peaks.bytes_per_s;  // FLOPs per byte
  const double intensity = row.cost.bytes > 0 ? row.cost.flops / row.cost.bytes : 1e30;
  return intensity > ridge ? "compute-bound" : "memory-bound";
}

void print_profile(std::ostream& out, const Profile& p, size_t rows) {
  char line[512];
  out << "\nProfile (--profile) on " << p.device << ": device time per op, from timers around "
      << "each call\n";
  std::snprintf(line, sizeof line,
                "Measured peaks: %s FP32, %s copy bandwidth, %.1f us launch floor; ridge point "
                "%.1f FLOP/byte\n",
                si(p.peaks.flops_per_s, "FLOP/s").c_str(), si(p.peaks.bytes_per_s, "B/s").c_str(),
                p.peaks.launch_seconds * 1e6, p.peaks.flops_per_s / p.peaks.bytes_per_s);
  out << line;
  if (p.peaks.host_to_device_bytes_per_s > 0.0) {
    std::snprintf(line, sizeof line, "Host <-> device (pinned): %s in, %s out\n",
                  si(p.peaks.host_to_device_bytes_per_s, "B/s").c_str(),
                  si(p.peaks.device_to_host_bytes_per_s, "B/s").c_str());
    out << line;
  }
  std::snprintf(line, sizeof line, "%-31s %-34s %8s %9s %6s %10s %10s %9s %9s %6s  %s\n", "op",
                "shape", "calls", "total s", "%", "FLOP/call", "bytes/call", "GFLOP/s", "GB/s",
                "%peak", "verdict");
  out << line;
  double rest_seconds = 0.0;
  int64_t rest_calls = 0;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const OpProfile& r = p.ops[i];
    if (i >= rows) {
      rest_seconds += r.seconds;
      rest_calls += r.calls;
      continue;
    }
    const double per_call = r.calls ? r.seconds / static_cast<double>(r.calls) : 0.0;
    const double flops_rate = per_call > 0 ? r.cost.flops / per_call : 0.0;
    const double bytes_rate = per_call > 0 ? r.cost.bytes / per_call : 0.0;
    const std::string v = verdict(r, p.peaks);
    const std::string op = r.scope.empty() ? r.op : r.scope + ": " + r.op;
    const double peak_share =
        v == "compute-bound" ? flops_rate / p.peaks.flops_per_s : bytes_rate / p.peaks.bytes_per_s;
    std::snprintf(line, sizeof line,
                  "%-31.31s %-34.34s %8lld %9.4f %5.1f%% %10s %10s %9.1f %9.1f %5.1f%%  %s\n",
                  op.c_str(), r.shape.c_str(), static_cast<long long>(r.calls), r.seconds,
                  p.op_seconds > 0 ? 100.0 * r.seconds / p.op_seconds : 0.0,
                  si(r.cost.flops, "").c_str(), si(r.cost.bytes, "B").c_str(), flops_rate / 1e9,
                  bytes_rate / 1e9, 100.0 * peak_share, v.c_str());
    out << line;
  }
  if (rest_calls > 0) {
    std::snprintf(line, sizeof line, "%-31s %-34s %8lld %9.4f %5.1f%%\n", "(the other ops)", "",
                  static_cast<long long>(rest_calls), rest_seconds,
                  p.op_seconds > 0 ? 100.0 * rest_seconds / p.op_seconds : 0.0);
    out << line;
  }
  // Where the run opened ProfileScopes (forward, backward, optimizer, ...): the time per scope,
  // most time first.
  std::vector<std::pair<std::string, double>> scopes;
  bool any_scope = false;
  for (const OpProfile& r : p.ops) {
    const std::string name = r.scope.empty() ? "(no scope)" : r.scope;
    any_scope = any_scope || !r.scope.empty();
    auto it = std::find_if(scopes.begin(), scopes.end(),
                           [&name](const auto& s) { return s.first == name; });
    if (it == scopes.end()) scopes.emplace_back(name, r.seconds);
    else it->second += r.seconds;
  }
  if (any_scope) {
    std::sort(scopes.begin(), scopes.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    out << "By scope:";
    for (size_t i = 0; i < scopes.size(); ++i) {
      std::snprintf(line, sizeof line, "%s %s %.4f s (%.0f%%)", i ? "," : "",
                    scopes[i].first.c_str(), scopes[i].second,
                    p.op_seconds > 0 ? 100.0 * scopes[i].second / p.op_seconds : 0.0);
      out << line;
    }
    out << "\n";
  }
  std::snprintf(line, sizeof line,
                "Ops took %.3f s of device time in %.3f s of wall time since profiling began "
                "(%.0f%%); the rest is the host: launches, data, printing, waiting.\n",
                p.op_seconds, p.wall_seconds,
                p.wall_seconds > 0 ? 100.0 * p.op_seconds / p.wall_seconds : 0.0);
  out << line;
  out << "Verdicts: launch-bound = under 3x the launch floor per call; compute-bound = more "
         "FLOPs per byte than the ridge point (%peak of FLOP/s); memory-bound = fewer (%peak "
         "of bandwidth). A profiled GPU run launches op by op (no CUDA graph).\n";
}

}  // namespace engine
