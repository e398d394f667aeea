// Seed 002: c = a . b with a [1, n] and b [n, 1], n = 10^2 ... 10^8, timed on the CPU and the
// GPU. The article (TensorFlow, 10 calls per n, tf.random.normal for a and b inside each
// call) plotted CPU and GPU time on a log-x axis: "GPU time nearly flat, CPU grows with n".
//
// Per n and device, the median of --repeats calls (after one warm-up call) of three variants:
//   matmul           the product alone, a and b already on the device;
//   generate+matmul  random_normal for a and b on the device, then the product (the article);
//   copies+matmul    a and b from host memory to the device, the product, c back (GPU only:
//                    on the CPU the data is already where the product needs it).
// Then a square-GEMM sweep (n = 64, 128, ... --max-square) in GFLOP/s. Devices: cpu
// (OpenBLAS + OpenMP), gpu (the engine's kernels: kernels/dot.cu for this shape), cudnn (the
// vendor library: cuBLAS SGEMM; its generation step is the engine's random_normal kernel,
// as cuRAND is not linked). Writes a CSV, a gnuplot script (and runs it when gnuplot is on
// PATH) and, with --json, a record of the run; prints where the GPU starts to beat the CPU.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common/app_flags.h"
#include "apps/common/app_options.h"
#include "apps/common/crossover_analysis.h"
#include "apps/common/sweep_files.h"
#include "apps/common/sweep_options.h"
#include "core/device_services.h"
#include "core/error.h"
#include "core/ops/matmul.h"
#include "core/ops/random.h"
#include "core/rng.h"
#include "core/system_info.h"
#include "core/tensor.h"
#include "cpu/cpu_device.h"

#if defined(ENGINE_WITH_CUDA)
#include "kernels/cuda_check.h"
#include "kernels/launch.h"
#include "kernels/vendor/cublas_gemm.h"
#endif

using namespace engine;
namespace fs = std::filesystem;

namespace {

constexpr double U = 1.0 / 16777216.0;  // float32 unit roundoff, 2^-24

// ---- flags ---------------------------------------------------------------------------------

struct SweepOptions : apps::SweepOptions {
  int64_t max_n = 100'000'000;
  int64_t max_square = 4096;
  SweepOptions() { csv_path = "results/matmul_sweep.csv"; }
};

void add_flags(apps::Flags& flags, SweepOptions& o) {
  apps::add_sweep_flags(flags, o);
  flags.option("--max-n", o.max_n,
               "largest vector length of the dot sweep (10^2, 10^3, ...; 1e7 works)")
      .exponent_notation()
      .check(apps::finite_in(int64_t{100}, int64_t{1'000'000'000}));
  flags.option("--max-square", o.max_square,
               "largest n of the square-GEMM sweep (64, 128, ...; below 64: no square sweep)")
      .check(apps::finite_in(int64_t{0}, int64_t{16384}));
}

// ---- devices -------------------------------------------------------------------------------

// A device the sweep runs on: where its tensors live, how it multiplies, how it is timed.
struct Target {
  std::string name;  // cpu, gpu, cudnn
  Device device;
  std::string description;
  std::function<void(const Tensor& a, const Tensor& b, Tensor& c)> matmul;  // c = a @ b
};

void engine_matmul(const Tensor& a, const Tensor& b, Tensor& c) {
  raw::matmul(a, false, b, false, c, 1.0f, 0.0f);
}

#if defined(ENGINE_WITH_CUDA)
// c = a @ b by cuBLAS SGEMM (FP32, no TF32: the articles compute in FP32) on the engine's stream.
void cublas_matmul(const Tensor& a, const Tensor& b, Tensor& c) {
  cuda::gemm::Gemm g;
  g.M = static_cast<int>(c.dim(0));
  g.N = static_cast<int>(c.dim(1));
  g.K = static_cast<int>(a.dim(1));
  g.A = a.data<float>();
  g.lda = static_cast<int>(a.dim(1));
  g.B = b.data<float>();
  g.ldb = static_cast<int>(b.dim(1));
  g.C = c.data<float>();
  g.ldc = g.N;
  cuda::vendor::cublas_sgemm(g, false, cuda::stream());
}
#endif

// The targets of the usable devices among those the flags ask for (apps/common/sweep_options.h).
std::vector<Target> select_targets(const SweepOptions& o, std::vector<std::string>& unavailable) {
  std::vector<Target> targets;
  for (const std::string& name : apps::usable_devices(o, unavailable)) {
    if (name == "cpu") {
      const std::string what = "OpenBLAS + OpenMP, " + std::to_string(cpu::num_threads()) +
                               " threads (cblas_sdot for this shape, sgemm for the squares)";
      targets.push_back({"cpu", Device::cpu(), what, engine_matmul});
      continue;
    }
#if defined(ENGINE_WITH_CUDA)  // usable_devices() has no GPU device in a CPU-only build
    const std::string gpu_name = device_services(Device::cuda(0)).name();
    if (name == "gpu") targets.push_back({"gpu", Device::cuda(0), gpu_name, engine_matmul});
    if (name == "cudnn") {
      targets.push_back({"cudnn", Device::cuda(0),
                         cuda::vendor::cublas_version() + " on " + gpu_name, cublas_matmul});
    }
#endif
  }
  return targets;
}

// ---- timing --------------------------------------------------------------------------------

#if defined(ENGINE_WITH_CUDA)
// Milliseconds between two CUDA events on the engine's stream around `body`: the GPU's own
// clock, after everything `body` queued has finished.
class EventTimer {
 public:
  EventTimer() {
    CHECK_CUDA(cudaEventCreate(&start_));
    CHECK_CUDA(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);  // destructors must not throw; a failure here changes nothing
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  double time_ms(const std::function<void()>& body) {
    CHECK_CUDA(cudaEventRecord(start_, cuda::stream()));
    body();
    CHECK_CUDA(cudaEventRecord(stop_, cuda::stream()));
    CHECK_CUDA(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};
#endif

double wall_ms(const std::function<void()>& body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// One warm-up call (allocations, cuBLAS' handle, first-touch page faults), then `repeats`
// calls timed one by one: CUDA events on the GPU, the wall clock on the CPU.
std::vector<double> time_calls(const Target& target, int repeats, const std::function<void()>& body) {
  const bool gpu = !target.device.is_cpu();
  body();
  device_services(target.device).synchronize();
  std::vector<double> ms;
#if defined(ENGINE_WITH_CUDA)
  if (gpu) {
    EventTimer timer;
    for (int i = 0; i < repeats; ++i) ms.push_back(timer.time_ms(body));
    return ms;
  }
#endif
  ENGINE_CHECK(!gpu, "GPU timing needs the CUDA build");
  for (int i = 0; i < repeats; ++i) ms.push_back(wall_ms(body));
  return ms;
}

// ---- measurements --------------------------------------------------------------------------

struct Result {
  std::string sweep;    // "dot" or "square"
  std::string device;   // target name
  int64_t n = 0;
  std::string variant;  // matmul, generate+matmul, copies+matmul
  double median_ms = 0.0, min_ms = 0.0, max_ms = 0.0;
  int calls = 0;
  double gflops = 0.0;  // 2 n (dot) or 2 n^3 (square) FLOP per median call
  double gbps = 0.0;    // dot: operand bytes read (8 n) per median call; 0 elsewhere
};

Result summarize(const std::string& sweep, const Target& t, int64_t n, const std::string& variant,
                 std::vector<double> ms, double flops, double bytes) {
  const apps::Spread spread = apps::spread_of(std::move(ms));
  Result r{sweep, t.name, n, variant, spread.median, spread.min, spread.max, spread.count};
  r.gflops = flops / (spread.median * 1e-3) / 1e9;
  r.gbps = bytes / (spread.median * 1e-3) / 1e9;
  return r;
}

const Result* find_result(const std::vector<Result>& results, const std::string& sweep,
                          const std::string& device, int64_t n, const std::string& variant) {
  for (const Result& r : results) {
    if (r.sweep == sweep && r.device == device && r.n == n && r.variant == variant) return &r;
  }
  return nullptr;
}

// The CPU measurement a GPU variant is compared with: the same variant, except that the CPU has
// no copies to make, so copies+matmul is compared with the CPU's plain matmul.
std::string cpu_counterpart(const std::string& variant) {
  return variant == "copies+matmul" ? "matmul" : variant;
}

// The operands of one n, in host memory, and what their product should be.
struct HostOperands {
  Tensor a, b;             // CPU tensors, (1, n) and (n, 1), standard normal
  double exact = 0.0;      // sum a_i b_i in double
  double magnitude = 0.0;  // sum |a_i b_i|: the scale of a float sum's rounding error
};

HostOperands host_operands(int64_t n, uint64_t seed) {
  HostOperands h{Tensor::empty({1, n}), Tensor::empty({n, 1})};
  raw::random_normal(h.a, 0.0f, 1.0f, derive_seed(seed, 0));  // CPU tensors: on the CPU
  raw::random_normal(h.b, 0.0f, 1.0f, derive_seed(seed, 1));
  const float* a = h.a.data<float>();
  const float* b = h.b.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const double p = static_cast<double>(a[i]) * b[i];
    h.exact += p;
    h.magnitude += std::fabs(p);
  }
  return h;
}

// No time without a correct product: c must be within the rounding bound of a float sum of n
// products (n U sum |a_i b_i|), else the run stops with an error naming the device.
void check_product(const Target& t, const HostOperands& h, const Tensor& c) {
  const double got = c.item();
  const auto n = static_cast<double>(h.a.numel());
  const double bound = n * U * h.magnitude + 1e-30;
  ENGINE_CHECK(std::fabs(got - h.exact) <= bound, t.name, ": the product for n = ", h.a.numel(),
               " is ", got, ", expected ", h.exact, " (bound ", bound, "): its time above is void");
}

void print_row(const Result& r, const std::vector<Result>& results);

// The three variants of the dot sweep for one target and one n.
void measure_dot(const Target& t, const HostOperands& h, int repeats, uint64_t seed,
                 std::vector<Result>& results) {
  const int64_t n = h.a.numel();
  DeviceServices& services = device_services(t.device);
  // The target's own copies: the host operands stay as they are for the next target.
  Tensor a = t.device.is_cpu() ? h.a.clone() : h.a.to(t.device);
  Tensor b = t.device.is_cpu() ? h.b.clone() : h.b.to(t.device);
  Tensor c = Tensor::zeros({1, 1}, DType::F32, t.device);
  const double flops = 2.0 * static_cast<double>(n), bytes = 8.0 * static_cast<double>(n);
  auto record = [&](const std::string& variant, std::vector<double> ms, double read_bytes) {
    results.push_back(summarize("dot", t, n, variant, std::move(ms), flops, read_bytes));
    print_row(results.back(), results);
  };

  record("matmul", time_calls(t, repeats, [&] { t.matmul(a, b, c); }), bytes);
  check_product(t, h, c);

  if (!t.device.is_cpu()) {
    float c_host = 0.0f;
    record("copies+matmul", time_calls(t, repeats, [&] {
             services.copy_from_host(a.raw_data(), h.a.raw_data(), h.a.nbytes());
             services.copy_from_host(b.raw_data(), h.b.raw_data(), h.b.nbytes());
             t.matmul(a, b, c);
             services.copy_to_host(&c_host, c.raw_data(), sizeof c_host);
           }), 0.0);
    check_product(t, h, c);
  }

  // Last: it overwrites a and b with numbers drawn on the device.
  record("generate+matmul", time_calls(t, repeats, [&] {
           raw::random_normal(a, 0.0f, 1.0f, derive_seed(seed, 2));
           raw::random_normal(b, 0.0f, 1.0f, derive_seed(seed, 3));
           t.matmul(a, b, c);
         }), 0.0);
}

std::vector<int64_t> dot_sizes(int64_t max_n) {
  std::vector<int64_t> sizes;
  for (int64_t n = 100; n <= max_n; n *= 10) sizes.push_back(n);
  return sizes;
}

void run_dot_sweep(const std::vector<Target>& targets, const SweepOptions& o,
                   std::vector<Result>& results) {
  for (const int64_t n : dot_sizes(o.max_n)) {
    const HostOperands h = host_operands(n, o.seed);
    for (const Target& t : targets) measure_dot(t, h, o.repeats, o.seed, results);
  }
}

// (n x n) @ (n x n) on each target, operands drawn on the device.
void run_square_sweep(const std::vector<Target>& targets, const SweepOptions& o,
                      std::vector<Result>& results) {
  for (int64_t n = 64; n <= o.max_square; n *= 2) {
    for (const Target& t : targets) {
      Tensor a = Tensor::empty({n, n}, DType::F32, t.device);
      Tensor b = Tensor::empty({n, n}, DType::F32, t.device);
      Tensor c = Tensor::empty({n, n}, DType::F32, t.device);
      raw::random_normal(a, 0.0f, 1.0f, derive_seed(o.seed, 4));
      raw::random_normal(b, 0.0f, 1.0f, derive_seed(o.seed, 5));
      const double flops = 2.0 * std::pow(static_cast<double>(n), 3.0);
      results.push_back(summarize("square", t, n, "matmul",
                                  time_calls(t, o.repeats, [&] { t.matmul(a, b, c); }), flops, 0.0));
      print_row(results.back(), results);
    }
  }
}

// ---- the table -----------------------------------------------------------------------------

void print_header(const std::vector<Target>& targets, const std::vector<std::string>& unavailable,
                  const SweepOptions& o) {
  std::printf("matmul_sweep (seed 002): c = a . b, a [1, n], b [n, 1]; median of %d calls after "
              "a warm-up\n", o.repeats);
  std::printf("CPU:  %s, %d threads (%d hardware)\n", cpu_model_name().c_str(), cpu::num_threads(),
              hardware_threads());
  std::printf("BLAS: %s\n", cpu::blas_config().c_str());
  for (const Target& t : targets) std::printf("%-5s %s\n", (t.name + ":").c_str(), t.description.c_str());
  for (const std::string& u : unavailable) std::printf("unavailable: %s\n", u.c_str());
  std::printf("Timing: CUDA events on the GPU, the wall clock on the CPU. cpu/this: the CPU's "
              "median over the row's (above 1: faster than the CPU); copies+matmul is GPU-only "
              "and compared with the CPU's matmul. GB/s: the 8n operand bytes read per call.\n\n");
  std::printf("%-6s %11s  %-16s %11s %11s %9s %9s\n", "device", "n", "variant", "median ms",
              "min ms", "cpu/this", "GB/s");
}

void print_row(const Result& r, const std::vector<Result>& results) {
  const Result* cpu = find_result(results, r.sweep, "cpu", r.n, cpu_counterpart(r.variant));
  char ratio[32] = "-";
  if (cpu && r.device != "cpu") std::snprintf(ratio, sizeof ratio, "%.2fx", cpu->median_ms / r.median_ms);
  char rate[32] = "-";
  if (r.sweep == "square") std::snprintf(rate, sizeof rate, "%.0f GF/s", r.gflops);
  if (r.sweep == "dot" && r.gbps > 0) std::snprintf(rate, sizeof rate, "%.1f", r.gbps);
  const std::string variant = r.sweep == "square" ? "square matmul" : r.variant;
  std::printf("%-6s %11lld  %-16s %11.4f %11.4f %9s %9s\n", r.device.c_str(),
              static_cast<long long>(r.n), variant.c_str(), r.median_ms, r.min_ms, ratio, rate);
  std::fflush(stdout);
}

// ---- crossovers ----------------------------------------------------------------------------

// Where a GPU target overtakes the CPU in one variant (time), or in the square sweep
// (GFLOP/s; the same comparison): apps/common/crossover_analysis.h.
struct Crossover {
  std::string sweep, device, variant;
  apps::Crossover x;
};

std::vector<int64_t> sizes_of(const std::vector<Result>& results, const std::string& sweep) {
  std::vector<int64_t> sizes;
  for (const Result& r : results) {
    if (r.sweep == sweep && std::find(sizes.begin(), sizes.end(), r.n) == sizes.end()) sizes.push_back(r.n);
  }
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

Crossover find_crossover(const std::vector<Result>& results, const std::string& sweep,
                         const std::string& device, const std::string& variant) {
  std::vector<apps::SizeTimes> points;
  for (const int64_t n : sizes_of(results, sweep)) {
    const Result* g = find_result(results, sweep, device, n, variant);
    const Result* c = find_result(results, sweep, "cpu", n, cpu_counterpart(variant));
    if (g && c) points.push_back({n, c->median_ms, g->median_ms});
  }
  return {sweep, device, variant, apps::find_crossover(points)};
}

std::vector<Crossover> all_crossovers(const std::vector<Result>& results,
                                      const std::vector<Target>& targets) {
  std::vector<Crossover> found;
  const bool have_cpu = std::any_of(targets.begin(), targets.end(),
                                    [](const Target& t) { return t.name == "cpu"; });
  if (!have_cpu) return found;
  for (const Target& t : targets) {
    if (t.name == "cpu") continue;
    for (const char* v : {"matmul", "generate+matmul", "copies+matmul"}) {
      found.push_back(find_crossover(results, "dot", t.name, v));
    }
    found.push_back(find_crossover(results, "square", t.name, "matmul"));
  }
  return found;
}

std::string describe(const Crossover& c) {
  const std::string what = c.sweep == "square" ? "square matmul" : c.variant;
  return c.device + " vs cpu, " + what + ": " + apps::describe(c.x, "n");
}

// ---- files ---------------------------------------------------------------------------------

void write_csv(const std::string& path, const std::vector<Result>& results) {
  std::ostringstream out;
  out << "sweep,device,n,variant,median_ms,min_ms,max_ms,calls,gflops,gbps\n";
  for (const Result& r : results) {
    out << r.sweep << ',' << r.device << ',' << r.n << ',' << r.variant << ',' << r.median_ms << ','
        << r.min_ms << ',' << r.max_ms << ',' << r.calls << ',' << r.gflops << ',' << r.gbps << '\n';
  }
  apps::write_text_file(path, out.str());
}

// A gnuplot datablock name for one curve, e.g. $gpu_generate_matmul.
std::string block_name(const std::string& sweep, const std::string& device, const std::string& variant) {
  std::string name = "$" + device + "_" + (sweep == "square" ? "square" : variant);
  std::replace(name.begin(), name.end(), '+', '_');
  return name;
}

// The curves, as datablocks inside the script: it plots anywhere, without the CSV.
void write_datablocks(std::ostream& gp, const std::vector<Result>& results,
                      const std::vector<Target>& targets) {
  const std::vector<std::pair<std::string, std::string>> curves = {
      {"dot", "matmul"}, {"dot", "generate+matmul"}, {"dot", "copies+matmul"}, {"square", "matmul"}};
  for (const auto& [sweep, variant] : curves) {
    for (const Target& t : targets) {
      std::ostringstream rows;
      for (const Result& r : results) {
        if (r.sweep == sweep && r.device == t.name && r.variant == variant) {
          rows << r.n << ' ' << (sweep == "square" ? r.gflops : r.median_ms) << '\n';
        }
      }
      if (rows.str().empty()) continue;
      gp << block_name(sweep, t.name, variant) << " << EOD\n" << rows.str() << "EOD\n";
    }
  }
}

bool has_curve(const std::vector<Result>& results, const std::string& sweep,
               const std::string& device, const std::string& variant) {
  return std::any_of(results.begin(), results.end(), [&](const Result& r) {
    return r.sweep == sweep && r.device == device && r.variant == variant;
  });
}

const char* device_color(const std::string& device) {
  if (device == "cpu") return "#1f77b4";
  if (device == "gpu") return "#d62728";
  return "#2ca02c";  // cudnn
}

// 10^{k} (gnuplot's enhanced text) for a power of ten, else the number.
std::string plot_number(int64_t n) {
  int k = 0;
  int64_t p = 1;
  while (p < n) {
    p *= 10;
    ++k;
  }
  return p == n && k >= 2 ? "10^{" + std::to_string(k) + "}" : std::to_string(n);
}

// One panel: a curve per device (the CPU's matmul in the copies panel), the crossovers marked.
void write_panel(std::ostream& gp, const std::vector<Result>& results,
                 const std::vector<Target>& targets, const std::vector<Crossover>& crossovers,
                 const std::string& sweep, const std::string& variant, const std::string& title) {
  gp << "set title '" << title << "'\n";
  int mark = 1;
  for (const Crossover& x : crossovers) {
    if (x.sweep != sweep || x.variant != variant || !x.x.ahead_from) continue;
    const int64_t n = *x.x.ahead_from;
    const Result* g = find_result(results, sweep, x.device, n, variant);
    const double y = sweep == "square" ? g->gflops : g->median_ms;
    // An arrow down (or up) to the point from which the GPU stays ahead; the label in a corner,
    // where it cannot run off the panel.
    gp << "set arrow " << mark << " from first " << n << ", graph " << (0.98 - 0.08 * mark)
       << " to first " << n << ", first " << y << " lw 1.5 lc rgb '" << device_color(x.device)
       << "'\n";
    gp << "set label " << mark << " '" << x.device << " beats cpu from n = " << plot_number(n)
       << "' at graph 0.97, graph " << (0.03 + 0.07 * mark) << " right tc rgb '"
       << device_color(x.device) << "'\n";
    ++mark;
  }
  std::string plots;
  for (const Target& t : targets) {
    const std::string curve_variant = t.name == "cpu" ? cpu_counterpart(variant) : variant;
    if (!has_curve(results, sweep, t.name, curve_variant)) continue;
    const std::string label = t.name == "cpu" && curve_variant != variant ? "cpu (no copies)" : t.name;
    if (!plots.empty()) plots += ", \\\n     ";
    plots += block_name(sweep, t.name, curve_variant) + " using 1:2 with linespoints lw 2 pt 7 lc rgb '" +
             device_color(t.name) + "' title '" + label + "'";
  }
  if (!plots.empty()) gp << "plot " << plots << "\n";
  gp << "unset arrow\nunset label\n";
}

// Whether a dot panel has something to draw beyond what the first panel shows: a curve of a GPU
// device (a CPU-only run has no generated operands and no copies: those panels stay out).
bool panel_has_gpu_curve(const std::vector<Result>& results, const std::vector<Target>& targets,
                         const std::string& variant) {
  return std::any_of(targets.begin(), targets.end(), [&](const Target& t) {
    return t.name != "cpu" && has_curve(results, "dot", t.name, variant);
  });
}

void write_figures(std::ostream& gp, const std::vector<Result>& results,
                   const std::vector<Target>& targets, const std::vector<Crossover>& crossovers,
                   const std::string& stem, const std::string& format) {
  const bool generate = panel_has_gpu_curve(results, targets, "generate+matmul");
  const bool copies = panel_has_gpu_curve(results, targets, "copies+matmul");
  const int panels = 1 + (generate ? 1 : 0) + (copies ? 1 : 0);
  gp << apps::gnuplot_terminal(format, std::to_string(550 * panels) + ",520") << "\n";
  gp << "set output '" << stem << "." << format << "'\n";
  gp << "set multiplot layout 1," << panels
     << " title 'c = a . b, a [1,n], b [n,1]: median time per call'\n";
  gp << "set xlabel 'n'\nset ylabel 'ms'\n";
  write_panel(gp, results, targets, crossovers, "dot", "matmul", "matmul only (data on the device)");
  if (generate) {
    write_panel(gp, results, targets, crossovers, "dot", "generate+matmul", "random normal a, b + matmul");
  }
  if (copies) {
    write_panel(gp, results, targets, crossovers, "dot", "copies+matmul", "with host <-> device copies");
  }
  gp << "unset multiplot\nset output\n";
  if (!has_curve(results, "square", targets.front().name, "matmul")) return;
  gp << apps::gnuplot_terminal(format, "800,560") << "\n";
  gp << "set output '" << stem << "_square." << format << "'\n";
  gp << "set logscale x 2\nset format x '%g'\n";
  gp << "set xlabel 'n (n x n @ n x n)'\nset ylabel 'GFLOP/s'\nset key top left\n";
  write_panel(gp, results, targets, crossovers, "square", "matmul", "square matmul, FP32");
  gp << "set output\nset logscale x 10\nset format x '10^{%L}'\n";
}

void write_gnuplot(const std::string& path, const std::vector<Result>& results,
                   const std::vector<Target>& targets, const std::vector<Crossover>& crossovers,
                   const std::vector<std::string>& machine) {
  std::ostringstream gp;
  const std::string stem = fs::path(path).stem().string();
  gp << "# Seed 002 (apps/matmul_sweep): CPU vs GPU time of c = a . b, and square-GEMM GFLOP/s.\n";
  for (const std::string& line : machine) gp << "# " << line << "\n";
  gp << "# Run in this folder: gnuplot " << fs::path(path).filename().string() << "  -> " << stem
     << ".png/.svg, " << stem << "_square.png/.svg\n\n";
  write_datablocks(gp, results, targets);
  // reset: `gnuplot *.gp` runs every script in one session, where another's settings linger.
  gp << "\nreset\nset logscale xy\nset format x '10^{%L}'\nset grid\nset key top left\n";
  gp << "set style data linespoints\n";
  write_figures(gp, results, targets, crossovers, stem, "png");
  write_figures(gp, results, targets, crossovers, stem, "svg");
  apps::write_text_file(path, gp.str());
}

nlohmann::json json_record(const SweepOptions& o, const apps::CommonOptions& common,
                           const std::vector<Target>& targets,
                           const std::vector<std::string>& unavailable,
                           const std::vector<Result>& results,
                           const std::vector<Crossover>& crossovers) {
  nlohmann::json record = apps::machine_record(common, Device::cpu());
  record["app"] = "matmul_sweep";
  std::string names;
  for (const Target& t : targets) names += (names.empty() ? "" : ",") + t.name;
  record["device"] = names;  // machine_record() names the CPU; this run has several devices
  record["repeats"] = o.repeats;
  record["max_n"] = o.max_n;
  record["max_square"] = o.max_square;
  for (const Target& t : targets) record["devices"][t.name] = t.description;
  record["unavailable"] = unavailable;
  nlohmann::json rows = nlohmann::json::array();
  for (const Result& r : results) {
    rows.push_back({{"sweep", r.sweep}, {"device", r.device}, {"n", r.n}, {"variant", r.variant},
                    {"median_ms", r.median_ms}, {"min_ms", r.min_ms}, {"max_ms", r.max_ms},
                    {"calls", r.calls}, {"gflops", r.gflops}, {"gbps", r.gbps}});
  }
  record["results"] = rows;
  nlohmann::json xs = nlohmann::json::array();
  for (const Crossover& c : crossovers) {
    nlohmann::json x = apps::to_json(c.x, "n");
    x["sweep"] = c.sweep;
    x["device"] = c.device;
    x["variant"] = c.variant;
    xs.push_back(x);
  }
  record["crossovers"] = xs;
  return record;
}

}  // namespace

int main(int argc, char** argv) {
  apps::Flags flags{"Seed 002: [1,n] x [n,1] matmul, n = 10^2 ... 10^8, CPU vs GPU",
                    "matmul_sweep"};
  SweepOptions o;
  add_flags(flags, o);

  return apps::run_app(flags, argc, argv, [&]() {
    const apps::CommonOptions common = apps::apply_sweep_options(o);
    std::vector<std::string> unavailable;
    const std::vector<Target> targets = select_targets(o, unavailable);
    apps::check_sweep_outputs(o.csv_path, o.json_path);
    print_header(targets, unavailable, o);

    std::vector<Result> results;
    run_dot_sweep(targets, o, results);
    run_square_sweep(targets, o, results);

    const std::vector<Crossover> crossovers = all_crossovers(results, targets);
    std::printf("\nWhere the GPU starts to win:\n");
    if (crossovers.empty()) std::printf("  (needs the cpu and a GPU device in the same run)\n");
    for (const Crossover& x : crossovers) std::printf("  %s\n", describe(x).c_str());

    write_csv(o.csv_path, results);
    std::printf("\nCSV: %s\n", o.csv_path.c_str());
    std::vector<std::string> machine = {"CPU: " + cpu_model_name() + ", " +
                                            std::to_string(cpu::num_threads()) + " threads",
                                        "BLAS: " + cpu::blas_config()};
    for (const Target& t : targets) machine.push_back(t.name + ": " + t.description);
    for (const std::string& u : unavailable) machine.push_back("unavailable: " + u);
    const std::string script = apps::with_extension(o.csv_path, ".gp");
    write_gnuplot(script, results, targets, crossovers, machine);
    if (apps::run_gnuplot(script, o.no_plot)) {
      const std::string stem = apps::with_extension(script, "");
      std::printf("Plot: %s.png and .svg (dot sweep), %s_square.png and .svg (square)\n",
                  stem.c_str(), stem.c_str());
    }
    if (!o.json_path.empty()) {
      apps::write_json(o.json_path, json_record(o, common, targets, unavailable, results, crossovers));
      std::printf("JSON: %s\n", o.json_path.c_str());
    }
    return 0;
  });
}
