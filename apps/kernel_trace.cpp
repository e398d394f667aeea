// kernel_trace: where a replayed training step's time goes, kernel by kernel, measured inside
// the CUDA graph as it runs. A library that CUDA loads into any program (CUDA_INJECTION64_PATH),
// which asks CUPTI for every kernel's start and end and, when the program exits, prints for
// each CUDA graph with at least 200 kernel runs: its kernels in order, the median time
// of each, the median idle gap before it, and the median span of one replay.
//
//   CUDA_INJECTION64_PATH=build/apps/libkernel_trace.so
//       build/apps/cifar10_cnn --gpu --tf32 --dataset synthetic --epochs 1     (one command line)
//
// Why beside ncu: ncu runs each kernel alone, caches flushed, after a replay of its own, so
// each costs at least ~2 us and the sum overstates a step (712 us under ncu for a CIFAR step
// whose graph replayed in 479); its figures say what a kernel does, this one what it costs in
// the step. The gaps say how much of the step is launching (in a one-stream graph, ~0.1 us a
// kernel on an H200) and the kernel times the rest. The first fifth of the replays (warm-up)
// is left out; a program's eager steps and other graphs (evaluation) are not in the table.
#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct KernelRun {
  uint64_t start, end;  // ns, CUPTI's clock
  uint32_t graph;       // the graph it was replayed in (CUPTI's id)
  uint64_t node;        // its node in that graph
  std::string name;     // demangled, without the engine's namespaces and the parameter list's types
  int grid_x, grid_y, grid_z;
};

std::mutex g_mutex;
std::vector<KernelRun> g_runs;
constexpr size_t BUFFER_BYTES = size_t{16} << 20;
constexpr size_t MIN_KERNELS = 200;  // graphs with fewer kernel runs in all are not reported

std::string short_name(const char* mangled) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : mangled;
  std::free(demangled);
  for (const char* noise : {"(anonymous namespace)::", "engine::cuda::", "void "}) {
    for (size_t at; (at = name.find(noise)) != std::string::npos;) name.erase(at, std::strlen(noise));
  }
  return name.substr(0, 110);
}

void CUPTIAPI give_buffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = BUFFER_BYTES;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, BUFFER_BYTES));
  *max_records = 0;  // as many as fit
}

void CUPTIAPI take_buffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  std::lock_guard<std::mutex> lock(g_mutex);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    if (k->graphId == 0) continue;  // launched outside a graph
    g_runs.push_back({k->start, k->end, k->graphId, k->graphNodeId, short_name(k->name), k->gridX, k->gridY, k->gridZ});
  }
  std::free(buffer);
}

double microseconds(uint64_t from, uint64_t to) { return static_cast<double>(to - from) * 1e-3; }

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

// One graph's table. Replays of a graph on one stream never overlap, so sorted by start its
// kernel runs are replay after replay, each of the graph's `kernels` kernels in turn.
void report_graph(uint32_t graph, std::vector<KernelRun> runs, size_t kernels) {
  std::sort(runs.begin(), runs.end(), [](const KernelRun& a, const KernelRun& b) { return a.start < b.start; });
  const size_t replays = runs.size() / kernels, first = replays / 5;
  if (replays - first < 3) return;
  std::vector<std::vector<double>> time(kernels), gap(kernels);
  std::vector<double> span;
  for (size_t r = first; r < replays; ++r) {
    const KernelRun* replay = &runs[r * kernels];
    span.push_back(microseconds(replay[0].start, replay[kernels - 1].end));
    for (size_t i = 0; i < kernels; ++i) {
      time[i].push_back(microseconds(replay[i].start, replay[i].end));
      const uint64_t previous_end = i ? replay[i - 1].end : replay[0].start;
      gap[i].push_back(replay[i].start > previous_end ? microseconds(previous_end, replay[i].start) : 0.0);
    }
  }
  std::printf("\n== graph %u: %zu kernels, %zu replays (the first %zu left out); median replay %.1f us\n", graph,
              kernels, replays, first, median(span));
  std::printf("%4s %8s %7s %12s  %s\n", "#", "us", "gap us", "grid", "kernel");
  double kernel_sum = 0.0, gap_sum = 0.0;
  for (size_t i = 0; i < kernels; ++i) {
    const KernelRun& k = runs[first * kernels + i];
    const double t = median(time[i]), g = median(gap[i]);
    kernel_sum += t;
    gap_sum += g;
    char grid[32];
    std::snprintf(grid, sizeof grid, "%dx%dx%d", k.grid_x, k.grid_y, k.grid_z);
    std::printf("%4zu %8.2f %7.2f %12s  %s\n", i, t, g, grid, k.name.c_str());
  }
  std::printf("sums of the medians: kernels %.1f us, gaps %.1f us\n", kernel_sum, gap_sum);
}

void report() {
  cuptiActivityFlushAll(1);
  std::lock_guard<std::mutex> lock(g_mutex);
  std::map<uint32_t, std::vector<KernelRun>> by_graph;
  for (KernelRun& run : g_runs) by_graph[run.graph].push_back(std::move(run));
  for (auto& [graph, runs] : by_graph) {
    if (runs.size() < MIN_KERNELS) continue;
    std::vector<uint64_t> nodes;
    for (const KernelRun& run : runs) nodes.push_back(run.node);
    std::sort(nodes.begin(), nodes.end());
    const size_t kernels = static_cast<size_t>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
    report_graph(graph, std::move(runs), kernels);
  }
  std::fflush(stdout);
}

}  // namespace

// CUDA calls this once, when the program first uses it.
extern "C" int InitializeInjection() {
  cuptiActivityRegisterCallbacks(give_buffer, take_buffer);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::atexit(report);
  return 1;
}
