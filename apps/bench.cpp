// apps/bench: every seed experiment on every device this machine has (cpu, gpu, cudnn), beside
// PyTorch where it is installed and beside the numbers the articles published, in one report:
// docs/RESULTS.md (or --report), with the machine's fingerprint, a table per experiment with
// ratios, and gnuplot scripts for the plots (drawn where gnuplot is on PATH).
//
// It is a driver: each measurement is one of the other apps (or a PyTorch reference script)
// run as a child process with --json, a time limit and its output in a log (apps/bench/). A
// child that fails or runs out of time becomes a row that says so; the report is written all
// the same. Settings: the default is short (a few minutes on the GPU machine), --quick is
// seconds (CI), --full is the articles' own (epochs, sizes).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "apps/bench/experiment.h"
#include "apps/bench/fingerprint.h"
#include "apps/bench/runner.h"
#include "apps/common/app_flags.h"
#include "apps/common/app_options.h"
#include "apps/common/bench_report.h"
#include "apps/common/stop_signals.h"
#include "core/device_services.h"
#include "core/system_info.h"

using namespace engine;
using namespace engine::bench;
namespace fs = std::filesystem;

namespace {

// The default setting's time for all the runs: with the probes and the report, the bench ends
// within 5 minutes even on a machine slower than the one its estimates were made on.
constexpr double DEFAULT_BUDGET_SECONDS = 280.0;

struct Options {
  bool quick = false, full = false;
  std::vector<std::string> devices;  // empty: every one usable here
  std::string report = "docs/RESULTS.md";
  std::string plots_dir, work_dir, bin_dir, dogs_dir;
  std::string data_dir = "data";
  int threads = 0;
  std::string python = "python3";
  bool no_pytorch = false;
  std::string scripts_dir = ENGINE_SOURCE_DIR "/scripts";
  double child_timeout = 0.0;
  double budget = -1.0;  // < 0: the setting's
  bool no_plot = false, dry_run = false;
};

void add_flags(apps::Flags& flags, Options& o) {
  const apps::Flag quick = flags.flag(
      "--quick", o.quick,
      "seconds: a few steps of everything on tiny data, to check that every path runs (CI); its "
      "times mean nothing");
  flags.flag("--full", o.full,
             "the articles' settings: 10, 10, 12 and 50 epochs, n up to 10^8, the Jacobian's loop "
             "at val = 1000 (hours on the CPU)")
      .excludes(quick);
  flags.option("--devices", o.devices, "ours to run, of cpu, gpu, cudnn (default: every one usable here)")
      .delimiter(',')
      .one_of({"cpu", "gpu", "cudnn"})
      .default_text("every usable one");
  flags.option("--report", o.report, "the Markdown report to write");
  flags.option("--plots-dir", o.plots_dir,
               "the plots' scripts, data and images (default: results/bench beside the report)");
  flags.option("--work-dir", o.work_dir,
               "every run's --json record and log, and a generated Dogs-vs-Cats tree (default: a "
               "new folder under the temporary directory)");
  flags.option("--bin-dir", o.bin_dir, "where the apps are (default: beside this program)");
  flags.option("--data-dir", o.data_dir, "scripts/fetch_data.sh's folder (fashion, mnist, cifar10)");
  flags.option("--dogs-dir", o.dogs_dir,
               "a Dogs-vs-Cats tree (DIR/train/<class>, DIR/validation/<class>); default: a "
               "synthetic one that datasets/make_dogs_cats writes into the work folder");
  flags.option("--threads", o.threads, "CPU threads for our CPU runs and PyTorch's (0: all)")
      .check(apps::finite_in(0, 4096));
  flags.option("--python", o.python, "the Python that runs the PyTorch reference scripts");
  flags.flag("--no-pytorch", o.no_pytorch, "do not run the PyTorch reference scripts");
  flags.option("--scripts-dir", o.scripts_dir, "the source tree's scripts/ folder");
  flags.option("--child-timeout", o.child_timeout,
               "seconds any one run may take (default: the plan's, ~4x its expected time)")
      .check(apps::positive_number<double>())
      .default_text("the plan's");
  flags.option("--budget", o.budget,
               "seconds for all the runs: none is started that would end later, at the pace so far "
               "(default: 280 in the default setting, to end within 5 minutes; none with --quick "
               "and --full; 0: none)")
      .check(apps::non_negative_number<double>())
      .default_text("280; none with --quick, --full");
  flags.flag("--no-plot", o.no_plot, "write the gnuplot scripts but do not run gnuplot");
  flags.flag("--dry-run", o.dry_run, "print every command with its time limit and run nothing");
}

std::string setting_text(Setting s) {
  switch (s) {
    case Setting::Quick:
      return "--quick: a few steps of everything on tiny data, to check that every path runs; "
             "its times mean nothing";
    case Setting::Full:
      return "--full: the articles' settings (whole epochs, 10, 10, 12 and 50 of them; n up to "
             "10^8; the Jacobian's loop at val = 1000)";
    case Setting::Default: break;
  }
  return "the default setting: every experiment cut short (a few epochs; CPU epochs "
         "extrapolated from a few steps; the sweeps bounded) to finish in minutes";
}

// The MNIST-shaped set of the data folder: Fashion-MNIST (60,000 images, the articles' size),
// else the MNIST digits fetch_data.sh made, else synthetic images; --quick takes the smallest.
std::string find_digits(const std::string& data_dir, Setting setting) {
  const std::vector<const char*> order =
      setting == Setting::Quick ? std::vector<const char*>{"mnist", "fashion"} : std::vector<const char*>{"fashion", "mnist"};
  for (const char* name : order) {
    const fs::path images = fs::path(data_dir) / name / "train-images-idx3-ubyte";
    if (fs::exists(images) || fs::exists(images.string() + ".gz")) return name;
  }
  return "synthetic";
}

// Ours to run: those asked for (each must be usable) or every usable one; `left_out` says why a
// GPU device is not run.
std::vector<std::string> pick_devices(const Options& o, std::vector<std::string>& left_out) {
  std::string why;
  const bool gpu = device_available(Device::cuda(0), &why);
  if (!o.devices.empty()) {
    std::vector<std::string> picked;
    for (const char* d : {"cpu", "gpu", "cudnn"}) {
      if (std::find(o.devices.begin(), o.devices.end(), d) == o.devices.end()) continue;
      if (std::string(d) != "cpu" && !gpu) throw apps::UsageError("--devices " + std::string(d) + ": " + why);
      picked.emplace_back(d);
    }
    return picked;
  }
  if (gpu) return {"cpu", "gpu", "cudnn"};
  left_out.push_back("gpu and cudnn: " + why);
  return {"cpu"};
}

Config make_config(const Options& o, Setting setting, std::vector<std::string>& left_out) {
  Config c;
  c.setting = setting;
  c.devices = pick_devices(o, left_out);
  // Every path absolute: the runs start in the work folder.
  c.bin_dir = fs::absolute(o.bin_dir.empty() ? fs::read_symlink("/proc/self/exe").parent_path()
                                             : fs::path(o.bin_dir)).string();
  c.work_dir = o.work_dir;
  if (c.work_dir.empty() && o.dry_run) {
    // --dry-run runs nothing: the commands name the folder a run would make, and none is made.
    c.work_dir = (fs::temp_directory_path() / "engine-bench-XXXXXX").string();
  } else if (c.work_dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "engine-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw apps::UsageError("cannot make a work folder " + pattern);
    c.work_dir = pattern;
  }
  c.work_dir = fs::absolute(c.work_dir).string();
  if (!o.dry_run) fs::create_directories(fs::path(c.work_dir) / "json");  // the apps write their records there
  c.plots_dir = fs::absolute(o.plots_dir.empty() ? fs::path(o.report).parent_path() / "results" / "bench"
                                                 : fs::path(o.plots_dir)).string();
  c.data_dir = fs::absolute(o.data_dir).string();
  c.digits = find_digits(o.data_dir, setting);
  c.make_dogs = o.dogs_dir.empty();
  c.dogs_dir = c.make_dogs ? c.work_dir + "/dogs_vs_cats" : fs::absolute(o.dogs_dir).string();
  c.threads = o.threads > 0 ? o.threads : hardware_threads();
  c.python = o.python;
  c.scripts_dir = fs::absolute(o.scripts_dir).string();
  if (o.no_pytorch) {
    c.pytorch_why_not = "not run (--no-pytorch)";
    c.pytorch_about = c.pytorch_why_not;
  } else {
    const PyTorchProbe torch = probe_pytorch(o.python, c.work_dir + "/logs");
    c.pytorch = torch.installed;
    // PyTorch on cuda stands beside our GPU runs: only where one of them runs.
    c.pytorch_cuda = torch.cuda && std::any_of(c.devices.begin(), c.devices.end(),
                                               [](const std::string& d) { return d != "cpu"; });
    c.pytorch_about = torch.installed ? torch.description : torch.why_not;
    c.pytorch_why_not = "not installed";
  }
  return c;
}

// The vendor libraries a --device cudnn run loaded, from its record's device name
// ("NVIDIA H100 ... + cuBLAS 13.0, cuDNN 9.14").
std::string vendor_libraries(const std::vector<Planned>& plan) {
  for (const Planned& p : plan) {
    for (const Job& j : p.jobs) {
      std::string why;
      const std::optional<nlohmann::json> r = record_of(p.jobs, p.outcomes, j.name, why);
      if (!r || r->value("backend", "") != "cudnn") continue;
      const std::string name = r->value("device_name", "");
      const size_t plus = name.find(" + ");
      if (plus != std::string::npos) return name.substr(plus + 3);
    }
  }
  return "";
}

std::string utc_now() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return date;
}

}  // namespace

int main(int argc, char** argv) {
  apps::Flags flags{"Every seed experiment on every device, beside PyTorch and the articles: one report",
                    "bench"};
  Options o;
  add_flags(flags, o);

  return apps::run_app(flags, argc, argv, [&]() {
    const Setting setting = o.quick ? Setting::Quick : o.full ? Setting::Full : Setting::Default;
    Report report;
    report.setting = setting_text(setting);
    report.date = utc_now();
    const Config config = make_config(o, setting, report.not_measured);
    if (!config.pytorch) report.not_measured.push_back("PyTorch: " + config.pytorch_about);

    std::vector<std::unique_ptr<BenchExperiment>> experiments = training_experiments();
    experiments.push_back(jacobian_experiment());
    experiments.push_back(matmul_experiment());
    experiments.push_back(crossover_experiment());
    std::vector<Planned> plan;
    for (const auto& e : experiments) {
      plan.push_back({e.get(), e->jobs(config), {}});
      if (o.child_timeout > 0.0) {
        for (Job& j : plan.back().jobs) j.timeout = o.child_timeout;
      }
    }
    if (o.dry_run) {
      print_plan(plan, setting);
      return 0;
    }

    // Before the runs, which take minutes: a report that could not be written would lose them.
    check_report_outputs(o.report, config.plots_dir);
    report.machine = machine_fingerprint(config.threads, config.work_dir + "/logs");
    const auto start = std::chrono::steady_clock::now();
    const apps::StopSignals signals;
    const double budget = o.budget >= 0.0 ? o.budget : setting == Setting::Default ? DEFAULT_BUDGET_SECONDS : 0.0;
    report.children = run_all(plan, config, budget, signals.received());
    report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    const std::string vendor = vendor_libraries(plan);
    if (!vendor.empty()) report.machine.emplace_back("cuBLAS / cuDNN (as --device cudnn loaded them)", vendor);
    report.machine.emplace_back("PyTorch", config.pytorch_about);
    for (const Planned& p : plan) {
      report.experiments.push_back(p.experiment->collect(config, p.jobs, p.outcomes));
      const std::vector<Plot> plots = p.experiment->plots(config, p.jobs, p.outcomes);
      report.plots.insert(report.plots.end(), plots.begin(), plots.end());
    }
    const ReportFiles files = write_report(report, o.report, config.plots_dir, !o.no_plot);
    std::printf("Report: %s (plots: %s%s)\n", files.markdown.c_str(), config.plots_dir.c_str(),
                files.images_drawn ? "" : "; run `gnuplot *.gp` there to draw them");
    const int signal = signals.received().load();
    return signal != 0 ? 128 + signal : 0;
  });
}
