// apps/kernel_bench: every version of the SGEMM ladder (kernels/matmul/) next to cuBLAS, at
// square sizes and at the shapes the seed models use. Each result is checked against cuBLAS
// FP32 before it is timed; times are CUDA-event medians after a warm-up, on fresh random
// data (never zeros). Prints GFLOP/s, % of cuBLAS (FP32 versions against cuBLAS FP32, TF32
// ones against cuBLAS TF32) and % of the device's measured FP32 peak.
// Then every convolution layer of seeds 003 and 004 at their batch sizes, each pass (forward,
// backward-data, backward-filter): the engine's implicit GEMMs (kernels/conv/) next to cuDNN
// (kernels/vendor/cudnn_conv.h), FP32 and TF32, each checked against the CPU's result first.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common/app_flags.h"
#include "apps/common/app_options.h"
#include "core/conv_geometry.h"
#include "core/device_services.h"
#include "core/error.h"
#include "core/ops/conv2d.h"
#include "core/ops/matmul.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "kernels/cuda_check.h"
#include "kernels/device_probe.h"
#include "kernels/launch.h"
#include "kernels/matmul/gemm.h"
#include "kernels/vendor/cublas_gemm.h"
#include "kernels/vendor/cudnn_conv.h"

using namespace engine;
namespace mm = engine::cuda::gemm;

namespace {

struct Shape3 {
  std::string label;  // where the shape comes from
  int M, N, K;
  bool ta = false, tb = false;
};

// The seed models' GEMMs (batch 32 and 100), forward and backward, as the engine calls them.
std::vector<Shape3> seed_shapes() {
  return {
      {"mlp fwd 32x784 @ 784x128", 32, 128, 784},
      {"mlp fwd 32x128 @ 128x10", 32, 10, 128},
      {"mlp dW1 784x32 @ 32x128", 784, 128, 32, true, false},
      {"mlp dX2 32x10 @ 10x128", 32, 128, 10, false, true},
      {"wide fwd 32x1000 @ 1000x1000", 32, 1000, 1000},
      {"wide dW 1000x32 @ 32x1000", 1000, 1000, 32, true, false},
      {"cifar dense 100x8192 @ 8192x128", 100, 128, 8192},
      {"cifar dX 100x128 @ 128x8192 (B^T)", 100, 8192, 128, false, true},
      {"cifar dW 8192x100 @ 100x128 (A^T)", 8192, 128, 100, true, false},
      {"mnist dense 128x9216 @ 9216x128", 128, 128, 9216},
      {"mnist dX 128x128 @ 128x9216 (B^T)", 128, 9216, 128, false, true},
      {"mnist dW 9216x128 @ 128x128 (A^T)", 9216, 128, 128, true, false},
  };
}

struct Timing {
  double seconds = 0.0;
  double error = 0.0;  // ||C - C_cublas|| / ||C_cublas||
};

std::vector<float> random_values(size_t n, uint64_t seed) {
  Generator rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = 2.0f * rng.uniform() - 1.0f;
  return v;
}

double relative_error(const std::vector<float>& got, const std::vector<float>& ref) {
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(got[i]) - ref[i];
    diff += d * d;
    norm += static_cast<double>(ref[i]) * ref[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// Median seconds of `launch` timed between two events, with enough repeats for ~50 ms of
// work (at least 3, at most 50).
template <typename Launch>
double median_between_events(Launch&& launch) {
  cudaStream_t s = cuda::stream();
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<double> times;
  double total = 0.0;
  while (times.size() < 3 || (total < 0.05 && times.size() < 50)) {
    CHECK_CUDA(cudaEventRecord(start, s));
    launch();
    CHECK_CUDA(cudaEventRecord(stop, s));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms * 1e-3);
    total += ms * 1e-3;
  }
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Seconds per call of `launch`. A call between two events on an idle GPU also times the
// launch itself (~5-10 us, more than the kernel at the seed MLPs' shapes), so short calls
// are timed the way training runs them: GRAPH_CALLS of them captured in one CUDA graph
// (DeviceServices::capture, as a training step is), the graph replayed, the median divided.
constexpr int GRAPH_CALLS = 20;
constexpr double SHORT_CALL_SECONDS = 100e-6;
template <typename Launch>
double seconds_per_call(DeviceServices& gpu, Launch&& launch) {
  const double one = median_between_events(launch);
  if (one >= SHORT_CALL_SECONDS) return one;
  const std::unique_ptr<StepGraph> graph = gpu.capture([&] {
    for (int i = 0; i < GRAPH_CALLS; ++i) launch();
  });
  ENGINE_CHECK(graph != nullptr, "kernel_bench: the GPU could not capture a graph");
  graph->replay();  // upload and warm up
  return median_between_events([&] { graph->replay(); }) / GRAPH_CALLS;
}

struct Row {
  std::string shape, version;
  bool tf32;
  double seconds, gflops, pct_cublas, pct_peak, error;
  bool ok;
};

class Bench {
 public:
  Bench(double peak_flops, bool include_slow, std::vector<std::string> only)
      : peak_(peak_flops), include_slow_(include_slow), only_(std::move(only)) {}

  void run_shape(const Shape3& s, std::vector<Row>& rows) {
    const Device gpu = Device::cuda();
    DeviceServices& services = device_services(gpu);
    const int64_t a_rows = s.ta ? s.K : s.M, a_cols = s.ta ? s.M : s.K;
    const int64_t b_rows = s.tb ? s.N : s.K, b_cols = s.tb ? s.K : s.N;
    const Tensor a = Tensor::from_vector(random_values(static_cast<size_t>(a_rows * a_cols), 1), {a_rows, a_cols}, gpu);
    const Tensor b = Tensor::from_vector(random_values(static_cast<size_t>(b_rows * b_cols), 2), {b_rows, b_cols}, gpu);
    Tensor c = Tensor::empty({s.M, s.N}, DType::F32, gpu);
    mm::Gemm g;
    g.M = s.M; g.N = s.N; g.K = s.K;
    g.A = a.data<float>(); g.lda = static_cast<int>(a_cols); g.transpose_a = s.ta;
    g.B = b.data<float>(); g.ldb = static_cast<int>(b_cols); g.transpose_b = s.tb;
    g.C = c.data<float>(); g.ldc = s.N;
    const double flops = 2.0 * s.M * s.N * static_cast<double>(s.K);

    cuda::vendor::cublas_sgemm(g, false, cuda::stream());
    const std::vector<float> reference = c.to_vector();
    double cublas_seconds[2];
    for (int tf32 = 0; tf32 < 2; ++tf32) {
      cublas_seconds[tf32] = seconds_per_call(services, [&] { cuda::vendor::cublas_sgemm(g, tf32 == 1, cuda::stream()); });
      const double err = relative_error(c.to_vector(), reference);
      rows.push_back({s.label, tf32 ? "cublas_tf32" : "cublas_fp32", tf32 == 1, cublas_seconds[tf32],
                      flops / cublas_seconds[tf32] * 1e-9, 100.0, 100.0 * flops / cublas_seconds[tf32] / peak_,
                      err, true});
    }
    // The engine's own path (the kernel it picks for the shape, split-K, the dot path), as
    // training calls it: FP32 by default, and with --tf32.
    for (const bool tf32 : {false, true}) {
      services.set_tf32(tf32);
      const double t = seconds_per_call(services, [&] { raw::matmul(a, s.ta, b, s.tb, c, 1.0f, 0.0f); });
      const double err = relative_error(c.to_vector(), reference);
      const double base = cublas_seconds[tf32 ? 1 : 0];
      rows.push_back({s.label, tf32 ? "engine_tf32" : "engine", tf32, t, flops / t * 1e-9, 100.0 * base / t,
                      100.0 * flops / t / peak_, err, err < (tf32 ? 5e-3 : 1e-5)});
    }
    services.set_tf32(false);
    int count = 0;
    const mm::Version* versions = mm::versions(&count);
    for (int i = 0; i < count; ++i) {
      const mm::Version& v = versions[i];
      // The first rungs take seconds at 4096^3 and beyond: skip them there unless asked.
      const bool slow = i < 2 && flops > 2.0 * 2048.0 * 2048.0 * 2048.0;  // v1, v2
      if (slow && !include_slow_) continue;
      if (!only_.empty() && std::find(only_.begin(), only_.end(), v.name) == only_.end()) continue;
      if (v.available != nullptr && !v.available()) continue;  // said once, in main
      CHECK_CUDA(cudaMemsetAsync(g.C, 0xff, sizeof(float) * static_cast<size_t>(s.M) * s.N, cuda::stream()));  // NaN
      v.launch(g, cuda::stream());
      const double err = relative_error(c.to_vector(), reference);
      const double t = seconds_per_call(services, [&] { v.launch(g, cuda::stream()); });
      const double base = cublas_seconds[v.tf32 ? 1 : 0];
      // FP32 lands far under 1e-5 relative; TF32 (10-bit mantissa) near 3e-4.
      const bool ok = err < (v.tf32 ? 5e-3 : 1e-5);
      rows.push_back({s.label, v.name, v.tf32, t, flops / t * 1e-9, 100.0 * base / t,
                      100.0 * flops / t / peak_, err, ok});
    }
  }

 private:
  double peak_;
  bool include_slow_;
  std::vector<std::string> only_;  // versions to run; empty: all
};

void print_row(const Row& r) {
  std::printf("%-32s %-20s %10.1f %10.0f %8.1f%% %7.1f%% %9.1e %s\n", r.shape.c_str(), r.version.c_str(),
              r.seconds * 1e6, r.gflops, r.pct_cublas, r.pct_peak, r.error, r.ok ? "ok" : "WRONG");
}

void write_csv(const std::string& path, const std::vector<Row>& rows, size_t first) {
  std::ostringstream csv;
  csv << "shape,version,tf32,microseconds,gflops,pct_cublas,pct_peak,rel_error,ok\n";
  for (size_t i = first; i < rows.size(); ++i) {
    const Row& r = rows[i];
    csv << '"' << r.shape << "\"," << r.version << ',' << r.tf32 << ',' << r.seconds * 1e6 << ','
        << r.gflops << ',' << r.pct_cublas << ',' << r.pct_peak << ',' << r.error << ',' << r.ok << "\n";
  }
  apps::write_text_file(path, csv.str());
  std::printf("Wrote %s\n", path.c_str());
}

// ---- convolutions: the seed models' layers, ours vs cuDNN ---------------------------------

struct ConvLayer {
  std::string label;
  int64_t batch, size, in_c, out_c;
  Padding padding;
};

// Seed 003's CIFAR-10 CNN (batch 100, 3x3, same) and seed 004's MNIST CNN (batch 128, 3x3,
// valid). The first layers' backward-data is never needed in training, but timed all the same.
std::vector<ConvLayer> conv_layers() {
  return {{"cifar 32x32x3->32", 100, 32, 3, 32, Padding::Same},
          {"cifar 32x32x32->32", 100, 32, 32, 32, Padding::Same},
          {"cifar 16x16x32->64", 100, 16, 32, 64, Padding::Same},
          {"cifar 16x16x64->64", 100, 16, 64, 64, Padding::Same},
          {"cifar 8x8x64->128", 100, 8, 64, 128, Padding::Same},
          {"cifar 8x8x128->128", 100, 8, 128, 128, Padding::Same},
          {"mnist 28x28x1->32", 128, 28, 1, 32, Padding::Valid},
          {"mnist 26x26x32->64", 128, 26, 32, 64, Padding::Valid}};
}

enum class ConvPass { Forward, BackwardData, BackwardFilter };

// One pass of one layer, its operands on the GPU and the CPU's result as the reference (empty
// when the CPU cannot compute it: the rows then say "unchecked").
class ConvCase {
 public:
  ConvCase(const ConvLayer& l, ConvPass pass) : pass_(pass) {
    g_ = conv2d_geometry({l.batch, l.size, l.size, l.in_c}, {3, 3, l.in_c, l.out_c}, 1, 1, l.padding);
    const Device gpu = Device::cuda();
    x_ = Tensor::from_vector(random_values(static_cast<size_t>(numel(g_.x_shape())), 3), g_.x_shape(), gpu);
    w_ = Tensor::from_vector(random_values(static_cast<size_t>(numel(g_.w_shape())), 4), g_.w_shape(), gpu);
    dy_ = Tensor::from_vector(random_values(static_cast<size_t>(numel(g_.y_shape())), 5), g_.y_shape(), gpu);
    const Shape out = pass == ConvPass::Forward ? g_.y_shape() : pass == ConvPass::BackwardData ? g_.x_shape()
                                                                                                 : g_.w_shape();
    out_ = Tensor::empty(out, DType::F32, gpu);
    try {
      Tensor ref = Tensor::empty(out, DType::F32, Device::cpu());
      call(x_.to(Device::cpu()), w_.to(Device::cpu()), dy_.to(Device::cpu()), ref);  // on the CPU
      reference_ = ref.to_vector();
    } catch (const Error& e) {
      std::printf("(no CPU reference for %s: %s)\n", l.label.c_str(), e.what());
    }
    label_ = l.label + (pass == ConvPass::Forward ? " fwd" : pass == ConvPass::BackwardData ? " bwd-data" : " bwd-filter");
  }
  const std::string& label() const { return label_; }
  // 2 M N K of the pass's GEMM: the same for all three passes.
  double flops() const { return 2.0 * static_cast<double>(g_.gemm_m() * g_.gemm_n() * g_.gemm_k()); }

  void run_engine() { call(x_, w_, dy_, out_); }
  // Through the engine's layout (Keras filters, transposed around cuDNN): checkable.
  void run_cudnn(bool tf32) {
    namespace v = cuda::vendor;
    if (pass_ == ConvPass::Forward) v::cudnn_conv2d_forward(g_, x_, w_, out_, tf32);
    else if (pass_ == ConvPass::BackwardData) v::cudnn_conv2d_backward_data(g_, dy_, w_, out_, tf32);
    else v::cudnn_conv2d_backward_filter(g_, x_, dy_, out_, tf32);
  }
  // cuDNN's own work, filters already in its KRSC layout: what the yardstick times. The
  // backward-filter result stays in KRSC (out_krsc_), unchecked here: run_cudnn checks it.
  void run_cudnn_krsc(bool tf32) {
    namespace v = cuda::vendor;
    if (!w_krsc_.defined()) {
      w_krsc_ = v::krsc_filters(g_, w_);
      out_krsc_ = Tensor::empty(v::krsc_shape(g_), DType::F32, w_.device());
    }
    if (pass_ == ConvPass::Forward) v::cudnn_conv2d_forward_krsc(g_, x_, w_krsc_, out_, tf32);
    else if (pass_ == ConvPass::BackwardData) v::cudnn_conv2d_backward_data_krsc(g_, dy_, w_krsc_, out_, tf32);
    else v::cudnn_conv2d_backward_filter_krsc(g_, x_, dy_, out_krsc_, tf32);
  }
  // ||out - reference|| / ||reference||, or NaN without a reference.
  double error() const { return reference_.empty() ? NAN : relative_error(out_.to_vector(), reference_); }

 private:
  // The pass at its dispatch point, on the device of `out` (raw::conv2d_*).
  void call(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor& out) const {
    if (pass_ == ConvPass::Forward) raw::conv2d_forward(g_, x, w, out);
    else if (pass_ == ConvPass::BackwardData) raw::conv2d_backward_data(g_, dy, w, out);
    else raw::conv2d_backward_filter(g_, x, dy, out);
  }
  ConvPass pass_;
  Conv2dGeometry g_;
  Tensor x_, w_, dy_, out_;
  Tensor w_krsc_, out_krsc_;  // made on the first run_cudnn_krsc
  std::vector<float> reference_;
  std::string label_;
};

// Rows for one pass: cuDNN FP32 and TF32 (when available), then ours. Each is checked on a
// first call (for cuDNN also its algorithm search), then timed; % of cuDNN compares equal
// precisions. FP32 lands near 1e-6 of the CPU's result, TF32 near 1e-3. cuDNN is checked
// through the engine's filter layout and timed on its own KRSC layout, so its time holds none
// of the engine's filter transposes.
void run_conv_case(DeviceServices& gpu, ConvCase& c, bool cudnn, double peak, std::vector<Row>& rows) {
  double cudnn_seconds[2] = {NAN, NAN};
  // cuDNN's own rows are the yardstick (100%); ours without cuDNN have no percentage (NaN).
  auto measure = [&](const std::string& version, bool tf32, const std::function<void()>& check,
                     const std::function<void()>& timed) {
    check();
    const double err = c.error();
    timed();  // the first call of a timed path that differs from the checked one
    const double t = seconds_per_call(gpu, timed);
    const bool checked = !std::isnan(err);
    const bool yardstick = version.rfind("cudnn", 0) == 0;
    const double base = yardstick ? t : cudnn_seconds[tf32 ? 1 : 0];
    rows.push_back({c.label(), checked ? version : version + " (unchecked)", tf32, t, c.flops() / t * 1e-9,
                    100.0 * base / t, 100.0 * c.flops() / t / peak, err,
                    !checked || err < (tf32 ? 5e-3 : 1e-5)});
    return t;
  };
  for (const bool tf32 : {false, true}) {
    if (cudnn)
      cudnn_seconds[tf32 ? 1 : 0] = measure(tf32 ? "cudnn_tf32" : "cudnn_fp32", tf32,
                                            [&] { c.run_cudnn(tf32); }, [&] { c.run_cudnn_krsc(tf32); });
  }
  for (const bool tf32 : {false, true}) {
    gpu.set_tf32(tf32);
    const auto ours = [&] { c.run_engine(); };
    measure(tf32 ? "engine_tf32" : "engine_fp32", tf32, ours, ours);
  }
  gpu.set_tf32(false);
}

// Every pass of every seed layer; the rows are appended to `rows` and printed, and written to
// csv_path when it is not empty.
void run_conv_bench(DeviceServices& gpu, double peak, const std::string& csv_path, std::vector<Row>& rows) {
  std::string why;
  const bool cudnn = cuda::vendor::cudnn_available(&why);
  if (cudnn)
    std::printf("\nConvolutions, ours vs %s (%%cuDNN: same precision)\n", cuda::vendor::cudnn_version().c_str());
  else
    std::printf("\nConvolutions: cuDNN NOT AVAILABLE (%s): our kernels only, no %%cuDNN\n", why.c_str());
  std::printf("%-32s %-20s %10s %10s %9s %8s %9s %s\n", "layer pass", "version", "us", "GFLOP/s", "%cuDNN",
              "%peak", "rel.err", "check");
  const size_t first = rows.size();
  for (const ConvLayer& l : conv_layers()) {
    for (const ConvPass pass : {ConvPass::Forward, ConvPass::BackwardData, ConvPass::BackwardFilter}) {
      ConvCase c(l, pass);
      const size_t before = rows.size();
      run_conv_case(gpu, c, cudnn, peak, rows);
      for (size_t i = before; i < rows.size(); ++i) print_row(rows[i]);
      std::fflush(stdout);
    }
  }
  if (!csv_path.empty()) write_csv(csv_path, rows, first);
}

}  // namespace

int main(int argc, char** argv) {
  apps::Flags flags{"SGEMM ladder vs cuBLAS at square sizes and the seed models' shapes; their convolutions vs cuDNN",
              "kernel_bench"};
  std::vector<int> sizes = {128, 256, 512, 1024, 2048, 4096, 8192};
  // Also as A B^T (B stored (N, K)): the layout v11 runs natively (A B runs v9 there).
  std::vector<int> abt_sizes = {4096};
  std::string csv_path, conv_csv_path, log_level = "warn";
  bool no_seed_shapes = false, include_slow = false, no_conv = false, conv_only = false;
  std::vector<std::string> only;
  flags.option("--sizes", sizes, "square sizes M = N = K").check(apps::finite_in(1, 16384));
  flags.option("--abt-sizes", abt_sizes, "square sizes also run as A B^T (v11's native layout)")
      .check(apps::finite_in(1, 16384));
  flags.flag("--no-seed-shapes", no_seed_shapes, "skip the seed models' shapes");
  flags.flag("--include-slow", include_slow, "also time v1/v2 above 2048^3 (seconds each)");
  flags.option("--csv", csv_path, "also write the table as CSV here");
  flags.flag("--no-conv", no_conv, "skip the seed models' convolution layers");
  flags.flag("--conv-only", conv_only, "time only the convolution layers (ours vs cuDNN)");
  flags.option("--conv-csv", conv_csv_path, "also write the convolutions' table as CSV here");
  flags.option("--versions", only, "run only these ladder versions (cuBLAS and the engine always run)")
      .delimiter(',');
  return apps::run_app(flags, argc, argv, [&]() {
    std::string why;
    if (!device_available(Device::cuda(), &why)) throw apps::UsageError("cannot use the GPU: " + why);
    apps::check_outputs({csv_path, conv_csv_path});
    DeviceServices& gpu = device_services(Device::cuda());
    const cuda::DevicePeaks peaks = cuda::measure_device_peaks(cuda::stream());
    std::printf("Device: %s\nMeasured peaks: FP32 FMA %.1f TFLOP/s, device copy %.0f GB/s (read + write)\n",
                gpu.name().c_str(), peaks.fp32_flops * 1e-12, peaks.copy_bytes_per_s * 1e-9);
    std::printf("Times are medians per call; calls under %.0f us are timed inside a CUDA graph of %d "
                "calls (no launch overhead, as in a captured training step)\n",
                SHORT_CALL_SECONDS * 1e6, GRAPH_CALLS);
    std::vector<Shape3> shapes;
    for (int n : sizes) shapes.push_back({std::to_string(n) + "^3", n, n, n});
    for (int n : abt_sizes) shapes.push_back({std::to_string(n) + "^3 A B^T", n, n, n, false, true});
    if (!no_seed_shapes) {
      for (const Shape3& s : seed_shapes()) shapes.push_back(s);
    }
    if (conv_only) shapes.clear();
    int count = 0;
    const mm::Version* all = mm::versions(&count);
    for (const std::string& name : only) {
      const bool known = std::any_of(all, all + count, [&](const mm::Version& v) { return name == v.name; });
      if (!known) throw apps::UsageError("--versions: no version named " + name);
    }
    for (const mm::Version* v = all; v != all + count; ++v) {
      if (v->available != nullptr && !v->available())
        std::printf("%s: not available on this build or GPU, skipped\n", v->name);
    }
    Bench bench(peaks.fp32_flops, include_slow, only);
    std::vector<Row> rows;
    std::printf("%-32s %-20s %10s %10s %9s %8s %9s %s\n", "shape", "version", "us", "GFLOP/s",
                "%cuBLAS", "%peak", "rel.err", "check");
    for (const Shape3& s : shapes) {
      const size_t first = rows.size();
      bench.run_shape(s, rows);
      for (size_t i = first; i < rows.size(); ++i) print_row(rows[i]);
      std::fflush(stdout);
    }
    if (!csv_path.empty() && !rows.empty()) write_csv(csv_path, rows, 0);
    if (!no_conv) run_conv_bench(gpu, peaks.fp32_flops, conv_csv_path, rows);
    const bool all_ok = std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.ok; });
    if (!all_ok) std::printf("SOME RESULTS ARE WRONG (see the check column)\n");
    return all_ok ? 0 : 1;
  });
}
