// Seed 001: the full Jacobian of a small tanh MLP, torch.autograd.functional.jacobian's
// experiment.
//   Linear(1, 20) -> tanh -> Linear(20, 20) -> tanh -> Linear(20, 400), input t (val, 1)
//   J = d net(t) / d t, shape (val, 400, val, 1): 40 million floats at val=100, 400 million
//   (1.6 GB) at val=1000.
// The article's PyTorch loop ran one backward pass per output element (40,000 or 400,000):
// val=100 took 11.1 s on a CPU and 19.5 s on a GPU, val=1000 8 min 44 s and 3 min 12 s.
// Here every strategy of nn/jacobian.h can be timed (--mode), checked against another one or
// against central differences in double (--check), and recorded (--json).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

#include "apps/common/app_flags.h"
#include "apps/common/app_options.h"
#include "apps/common/spread.h"
#include "apps/common/training_report.h"
#include "core/device_services.h"
#include "core/error.h"
#include "core/rng.h"
#include "nn/jacobian.h"
#include "nn/layers.h"
#include "nn/progress.h"
#include "nn/sequential.h"

using namespace engine;

namespace {

constexpr int64_t HIDDEN = 20;
constexpr int64_t OUTPUTS = 400;
// A --check passes when max|J - reference| <= CHECK_TOLERANCE * max|reference|: float32
// arithmetic through five ops errs by ~1e-7 of the largest entry (tests/test_jacobian.cpp).
constexpr double CHECK_TOLERANCE = 1e-5;
// Host copies for the comparisons are made this many floats at a time (64 MiB).
constexpr int64_t COMPARE_CHUNK = int64_t{1} << 24;

struct Options {
  int64_t val = 100;
  std::string mode = "auto";
  bool dense = false;
  bool blocks = false;
  std::string check = "none";
  int repeats = 5;
  int64_t memory_limit_mib = 1024;
  double max_loop_seconds = 60.0;
  bool allow_slow = false;
};

nn::JacobianMode parse_mode(const std::string& name) {
  if (name == "loop") return nn::JacobianMode::Loop;
  if (name == "reverse") return nn::JacobianMode::Reverse;
  if (name == "forward") return nn::JacobianMode::Forward;
  return nn::JacobianMode::Auto;
}

std::string mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// "1 direction", "3 directions", "1 backward pass", "40000 backward passes".
std::string count(int64_t n, const char* noun) {
  const std::string word = noun;
  const auto ends_with = [&word](const char* tail) {
    const size_t k = std::char_traits<char>::length(tail);
    return word.size() >= k && word.compare(word.size() - k, k, tail) == 0;
  };
  const bool sibilant = ends_with("s") || ends_with("x") || ends_with("z") || ends_with("ch") ||
                        ends_with("sh");
  return std::to_string(n) + " " + word + (n == 1 ? "" : sibilant ? "es" : "s");
}

std::string milliseconds(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, seconds < 1.0 ? "%.2f ms" : "%.0f ms", seconds * 1e3);
  return buf;
}

// PyTorch's nn.Linear initialisation, so the Jacobian has the article's magnitudes: weight
// and bias uniform in +-1/sqrt(fan_in). The engine's Dense stores the kernel (in, out).
void init_like_pytorch(nn::Sequential& model, uint64_t seed) {
  Generator rng(derive_seed(seed, 1));
  std::vector<float> values;
  int64_t fan_in = 1;
  for (const nn::Parameter& p : model.parameters().params) {
    if (p.value.ndim() == 2) fan_in = p.value.dim(0);
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    for (int64_t i = 0; i < p.value.numel(); ++i) {
      values.push_back(static_cast<float>((2.0 * rng.uniform() - 1.0) * bound));
    }
  }
  model.parameters().values.copy_from(
      Tensor::from_vector(values, {static_cast<int64_t>(values.size())}));
}

// The network in double on the host, one row at a time: the reference for --check fd.
class HostMlp {
 public:
  explicit HostMlp(const nn::Sequential& model) {
    for (const nn::Parameter& p : model.parameters().params) {
      const std::vector<float> v = p.value.to_vector();
      params_.emplace_back(v.begin(), v.end());
    }
  }
  // net(t) for one input row (width 1): OUTPUTS values.
  std::vector<double> row(double t) const {
    std::vector<double> h1(HIDDEN), h2(HIDDEN), out(OUTPUTS);
    for (int64_t j = 0; j < HIDDEN; ++j) h1[j] = std::tanh(t * params_[0][j] + params_[1][j]);
    for (int64_t j = 0; j < HIDDEN; ++j) {
      double z = params_[3][j];
      for (int64_t k = 0; k < HIDDEN; ++k) z += h1[k] * params_[2][k * HIDDEN + j];
      h2[j] = std::tanh(z);
    }
    for (int64_t j = 0; j < OUTPUTS; ++j) {
      double z = params_[5][j];
      for (int64_t k = 0; k < HIDDEN; ++k) z += h2[k] * params_[4][k * OUTPUTS + j];
      out[j] = z;
    }
    return out;
  }

 private:
  std::vector<std::vector<double>> params_;  // kernel1, bias1, kernel2, bias2, kernel3, bias3
};

struct Comparison {
  double max_abs_diff = 0.0;
  double max_abs_reference = 0.0;
  double normwise() const { return max_abs_reference > 0 ? max_abs_diff / max_abs_reference : max_abs_diff; }
  bool ok() const { return std::isfinite(max_abs_diff) && normwise() <= CHECK_TOLERANCE; }
};

// Walks J through the host in chunks; reference(flat index) gives the expected value.
template <typename Reference>
void compare(const Tensor& J, Reference&& reference, Comparison& c) {
  const Tensor flat = J.view({J.numel()});
  for (int64_t start = 0; start < J.numel(); start += COMPARE_CHUNK) {
    const int64_t n = std::min(COMPARE_CHUNK, J.numel() - start);
    const std::vector<float> got = flat.slice(start, {n}).to_vector();
    for (int64_t i = 0; i < n; ++i) {
      const double want = reference(start + i);
      const double d = std::fabs(static_cast<double>(got[static_cast<size_t>(i)]) - want);
      c.max_abs_diff = std::isfinite(d) ? std::max(c.max_abs_diff, d) : INFINITY;
      c.max_abs_reference = std::max(c.max_abs_reference, std::fabs(want));
    }
  }
}

// Central differences of the host network in double, row by row (the network maps row n
// of t to row n of the output and nothing else, by construction), compared with every
// element of J: the diagonal blocks, and exact zeros elsewhere.
Comparison check_finite_differences(const Tensor& J, const std::vector<float>& t, const HostMlp& net,
                                    bool blocks) {
  const int64_t N = static_cast<int64_t>(t.size());
  std::vector<double> block(static_cast<size_t>(N * OUTPUTS));
  for (int64_t n = 0; n < N; ++n) {
    const double x = t[static_cast<size_t>(n)], h = 1e-4 * std::max(1.0, std::fabs(x));
    const std::vector<double> plus = net.row(x + h), minus = net.row(x - h);
    for (int64_t o = 0; o < OUTPUTS; ++o) {
      block[static_cast<size_t>(n * OUTPUTS + o)] = (plus[o] - minus[o]) / (2.0 * h);
    }
  }
  Comparison c;
  if (blocks) {
    compare(J, [&](int64_t i) { return block[static_cast<size_t>(i)]; }, c);
  } else {  // J (N, OUTPUTS, N, 1): flat index (n * OUTPUTS + o) * N + m
    compare(J, [&](int64_t i) {
      const int64_t m = i % N, no = i / N, n = no / OUTPUTS;
      return m == n ? block[static_cast<size_t>(no)] : 0.0;
    }, c);
  }
  return c;
}

Comparison check_against(const Tensor& J, const Tensor& other) {
  Comparison c;
  const Tensor flat = other.view({other.numel()});
  std::vector<float> cache;
  int64_t cache_start = -1;
  compare(J, [&](int64_t i) {
    if (cache_start < 0 || i < cache_start || i >= cache_start + static_cast<int64_t>(cache.size())) {
      cache_start = i;
      cache = flat.slice(i, {std::min(COMPARE_CHUNK, other.numel() - i)}).to_vector();
    }
    return static_cast<double>(cache[static_cast<size_t>(i - cache_start)]);
  }, c);
  return c;
}

// The loop's confirmation: print the estimate; go on if it is small, --allow-slow was given,
// or the user says yes at a terminal.
bool confirm_loop(const nn::LoopEstimate& e, const Options& o) {
  std::printf("Loop: %lld backward passes (one per output element), %.3f ms each over %lld timed "
              "passes: about %s in all\n",
              static_cast<long long>(e.passes), e.seconds_per_pass * 1e3,
              static_cast<long long>(e.timed_passes),
              nn::ProgressBar::format_duration(e.total_seconds).c_str());
  std::fflush(stdout);
  if (o.allow_slow || e.total_seconds <= o.max_loop_seconds) return true;
  if (isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1) {
    std::printf("That is more than --max-loop-seconds %.0f. Run it? [y/N] ", o.max_loop_seconds);
    std::fflush(stdout);
    std::string answer;
    std::getline(std::cin, answer);
    return !answer.empty() && (answer[0] == 'y' || answer[0] == 'Y');
  }
  std::printf("Not running it: more than --max-loop-seconds %.0f (add --allow-slow to run it).\n",
              o.max_loop_seconds);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  apps::Flags flags{"Seed 001: the full Jacobian of a tanh MLP (1 -> 20 -> 20 -> 400) at an "
                    "input of shape (val, 1), by the loop, reverse or forward mode",
                    "jacobian_mlp"};
  apps::CommonOptions common;
  Options o;
  apps::add_device_flags(flags, common);
  flags.option("--val", o.val, "rows of the input t: 100 and 1000 in the article")
      .check(apps::finite_in(int64_t{1}, int64_t{1} << 20));
  flags.option("--mode", o.mode,
               "loop: one backward pass per output element (PyTorch's default); reverse: "
               "batched vector-Jacobian products; forward: batched Jacobian-vector products; "
               "auto: forward or reverse, whichever needs fewer directions")
      .one_of({"auto", "loop", "reverse", "forward"});
  flags.flag("--dense", o.dense,
             "do not tell jacobian() that the net maps each row on its own: reverse/forward "
             "then push one-hot vectors of the whole input or output, as torch.func.jacrev/"
             "jacfwd do (default: per-sample, exploiting the block-diagonal J)");
  flags.flag("--blocks", o.blocks,
             "return only the diagonal blocks, (val, 400, 1), instead of the dense J");
  flags.option("--check", o.check,
               "compare J with central differences in double (fd) or another mode; prints the "
               "max difference")
      .one_of({"none", "fd", "loop", "reverse", "forward", "auto"});
  flags.option("--repeats", o.repeats,
               "timed calls after the first, whose median is reported (0: the first call only)")
      .check(apps::finite_in(0, 1000));
  flags.option("--memory-limit", o.memory_limit_mib,
               "MiB for one chunk of directions (seeds, tangents); J itself is not counted")
      .check(apps::finite_in(int64_t{1}, int64_t{1} << 30));
  flags.option("--max-loop-seconds", o.max_loop_seconds,
               "the loop runs when its estimate is at most this; else it asks at a terminal, "
               "or stops")
      .check(apps::non_negative_number<double>());
  flags.flag("--allow-slow", o.allow_slow, "run the loop whatever its estimate");

  return apps::run_app(flags, argc, argv, [&]() {
    const Device device = apps::apply_common_options(common);
    if (o.blocks && o.dense) throw apps::UsageError("--blocks needs the per-sample view (drop --dense)");
    DeviceServices& services = device_services(device);
    std::cout << "Device: " << services.name() << "\n";

    nn::JacobianOptions jo;
    jo.mode = parse_mode(o.mode);
    jo.rowwise = !o.dense;
    jo.blocks = o.blocks;
    jo.memory_limit = static_cast<size_t>(o.memory_limit_mib) << 20;
    jo.progress = &std::cout;
    jo.confirm_loop = [&](const nn::LoopEstimate& e) { return confirm_loop(e, o); };
    // Pre-flight: J for --val rows must fit before anything sized by --val is made (the input,
    // the recorded forward pass: at --val 1048576, seconds and gigabytes before J's 1.56 PiB
    // were refused).
    nn::check_jacobian_memory({o.val, 1}, {o.val, OUTPUTS}, jo, device);

    nn::Sequential model{nn::dense(HIDDEN, Activation::Tanh), nn::dense(HIDDEN, Activation::Tanh),
                         nn::dense(OUTPUTS)};
    model.build({1}, device, common.seed);
    init_like_pytorch(model, common.seed);
    Generator rng(derive_seed(common.seed, 2));
    std::vector<float> t_host(static_cast<size_t>(o.val));
    for (float& v : t_host) v = rng.uniform();  // torch.rand: U(0, 1)
    const Tensor t = Tensor::from_vector(t_host, {o.val, 1}, device);
    auto net = [&](const Tensor& input) {
      nn::ForwardContext ctx;
      return model.forward(input, ctx);
    };
    std::printf("Model: Linear(1, 20) -> tanh -> Linear(20, 20) -> tanh -> Linear(20, 400), %lld "
                "parameters (PyTorch's init); input t (%lld, 1) ~ U(0, 1)\n",
                static_cast<long long>(model.parameter_count()), static_cast<long long>(o.val));

    // The first call pays for allocations (the caching allocator keeps them); the loop runs
    // once. Each call is timed from its start to the end of the device's work.
    const bool loop = jo.mode == nn::JacobianMode::Loop;
    const int calls = loop ? 1 : 1 + o.repeats;
    std::vector<double> seconds;
    nn::JacobianStats stats;
    Tensor J;
    for (int call = 0; call < calls; ++call) {
      J = Tensor();  // the previous J goes back to the cache first
      services.synchronize();
      const auto start = std::chrono::steady_clock::now();
      J = nn::jacobian(net, t, jo, &stats);
      services.synchronize();
      seconds.push_back(apps::seconds_since(start));
      if (!stats.completed) break;
    }

    nlohmann::json record = apps::machine_record(common, device);
    for (const char* unused : {"batch_size", "epochs", "steps_per_epoch"}) record.erase(unused);
    record["app"] = "jacobian_mlp";
    record["val"] = o.val;
    record["mode"] = o.mode;
    record["view"] = o.dense ? "dense" : "per-sample";
    record["blocks"] = o.blocks;
    record["strategy"] = stats.strategy;
    record["completed"] = stats.completed;
    record["parameters"] = model.parameter_count();
    record["memory_limit_bytes"] = jo.memory_limit;
    if (loop) {
      record["loop_passes"] = stats.loop.passes;
      record["loop_seconds_per_pass"] = stats.loop.seconds_per_pass;
      record["loop_estimated_seconds"] = stats.loop.total_seconds;
    }
    int status = 0;
    if (!stats.completed) {
      std::printf("Jacobian: not computed (the loop was not run); estimate %s\n",
                  nn::ProgressBar::format_duration(stats.loop.total_seconds).c_str());
    } else {
      std::printf("Jacobian: shape %s, %lld floats (%s); mode %s -> %s: %s in %s (at most %lld "
                  "per chunk)\n",
                  to_string(J.shape()).c_str(), static_cast<long long>(J.numel()),
                  mib(J.nbytes()).c_str(), o.mode.c_str(), stats.strategy.c_str(),
                  count(stats.directions, loop ? "backward pass" : "direction").c_str(),
                  count(stats.chunks, "chunk").c_str(),
                  static_cast<long long>(stats.directions_per_chunk));
      const std::vector<double> timed(seconds.begin() + (calls > 1 ? 1 : 0), seconds.end());
      const double mid = apps::spread_of(timed).median;
      if (calls > 1) {
        std::printf("Time on %s: first call %s, then median %s of %zu calls (min %s, max %s)\n",
                    to_string(device).c_str(), milliseconds(seconds[0]).c_str(),
                    milliseconds(mid).c_str(), timed.size(),
                    milliseconds(*std::min_element(timed.begin(), timed.end())).c_str(),
                    milliseconds(*std::max_element(timed.begin(), timed.end())).c_str());
      } else {
        std::printf("Time on %s: %s\n", to_string(device).c_str(), milliseconds(seconds[0]).c_str());
      }
      std::printf("Memory: peak %s above the model and input (J %s, largest chunk's working set "
                  "%s; limit %s)\n",
                  mib(stats.peak_bytes).c_str(), mib(stats.result_bytes).c_str(),
                  mib(stats.working_set_bytes).c_str(), mib(jo.memory_limit).c_str());
      record["jacobian_shape"] = J.shape();
      record["result_bytes"] = stats.result_bytes;
      record["directions"] = stats.directions;
      record["chunks"] = stats.chunks;
      record["directions_per_chunk"] = stats.directions_per_chunk;
      record["peak_bytes"] = stats.peak_bytes;
      record["working_set_bytes"] = stats.working_set_bytes;
      record["seconds"] = seconds;
      record["first_call_seconds"] = seconds[0];
      record["median_seconds"] = mid;

      if (o.check != "none") {
        Comparison c;
        std::string against;
        if (o.check == "fd") {
          against = "central differences in double";
          c = check_finite_differences(J, t_host, HostMlp(model), o.blocks);
        } else {
          nn::JacobianOptions other = jo;
          other.mode = parse_mode(o.check);
          other.progress = nullptr;
          nn::JacobianStats other_stats;
          const Tensor J2 = nn::jacobian(net, t, other, &other_stats);
          against = "mode " + o.check + " (" + other_stats.strategy + ")";
          if (!J2.defined()) throw apps::UsageError("--check " + o.check + ": the loop was not run");
          c = check_against(J, J2);
        }
        std::printf("Check against %s: max |diff| %.3g, normwise %.3g (tolerance %.0e): %s\n",
                    against.c_str(), c.max_abs_diff, c.normwise(), CHECK_TOLERANCE,
                    c.ok() ? "OK" : "MISMATCH");
        record["check"] = {{"against", against}, {"max_abs_diff", c.max_abs_diff},
                           {"normwise", c.normwise()}, {"ok", c.ok()}};
        if (!c.ok()) status = 1;
      }
    }
    if (!common.json_path.empty()) {
      apps::write_json(common.json_path, record);
      std::cout << "Wrote " << common.json_path << "\n";
    }
    return status;
  });
}
