// The training experiments: seed 000's MNIST MLP (small and wide), seed 003's CIFAR-10 CNN and
// seed 004's MNIST CNN and Dogs vs Cats. Each runs on every device of ours and, where PyTorch
// is installed, as its reference script on cpu and cuda; the report compares seconds per epoch.
#include <algorithm>
#include <filesystem>
#include <functional>

#include "apps/bench/experiment.h"
#include "apps/bench/published.h"
#include "apps/common/spread.h"
#include "core/device_jpeg.h"

namespace fs = std::filesystem;

namespace engine::bench {
namespace {

using Args = std::vector<std::string>;

struct Case {
  std::string key;    // the published figures' case ("" for the only one)
  std::string label;  // in the report ("" for the only one)
  Args args;          // the app's and the script's flags for it
  int64_t cpu_steps;  // default setting: steps per CPU epoch (0: whole epochs)
  // Seconds each job takes in the default setting on the GPU machine: ours on a GPU, ours on
  // the CPU, PyTorch on cuda, PyTorch on the CPU (start-up and data included).
  double gpu, cpu, torch_gpu, torch_cpu;
  // TF32 tensor cores (ours with --tf32, PyTorch with its TF32 default): on GPUs only.
  bool tf32 = false;
  // Flags for ours only, after `args` (the PyTorch script has no such option).
  Args ours_only = {};
};

struct Spec {
  std::string app, title;
  int article_epochs;
  std::vector<Case> cases;
  // The data flags of a run: ours or the PyTorch script's, on the CPU or not.
  std::function<Args(const Config&, bool pytorch, bool cpu)> data;
  // Optional: jobs that prepare the data first, and what the report says about the data.
  std::function<std::vector<Job>(const Config&)> setup;
  std::function<std::string(const Config&)> data_note;
  // Whether its PyTorch script has --graphed (PyTorch at its best), run beside the eager one
  // on cuda.
  bool graphed = false;
  // The script's flags for FP32 where its own default is TF32 (PyTorch's cuDNN convolutions).
  Args torch_fp32 = {};
};

// How many epochs a run trains and how many steps each (0: whole epochs).
struct Run {
  int epochs;
  int64_t steps;
};

Run run_for(const Config& config, const Spec& spec, const Case& c, bool cpu, bool pytorch) {
  switch (config.setting) {
    case Setting::Quick: return {2, 3};
    case Setting::Full: return {spec.article_epochs, 0};
    case Setting::Default: break;
  }
  // Two epochs or more: the first pays for warm-up and is left out. A GPU epoch of ours costs
  // well under a second, so three; PyTorch's take seconds, so two.
  if (cpu) return {2, c.cpu_steps};
  return {pytorch ? 2 : 3, 0};
}

std::string describe(const Run& run) {
  return std::to_string(run.epochs) + " epochs" +
         (run.steps > 0 ? " of " + std::to_string(run.steps) + " steps" : " (whole)");
}

Args run_args(const Config& config, const Run& run, bool cpu) {
  Args args = {"--epochs", std::to_string(run.epochs)};
  if (run.steps > 0) args.insert(args.end(), {"--steps-per-epoch", std::to_string(run.steps)});
  if (cpu) args.insert(args.end(), {"--threads", std::to_string(config.threads)});
  return args;
}

Args concat(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string case_name(const Spec& spec, const Case& c) {
  return spec.app + (c.label.empty() ? "" : " " + c.label);
}
std::string our_job(const Spec& spec, const Case& c, const std::string& device) {
  return case_name(spec, c) + ", " + device;
}
std::string torch_job(const Spec& spec, const Case& c, const std::string& device) {
  return "PyTorch " + case_name(spec, c) + ", " + device;
}
std::string torch_best_job(const Spec& spec, const Case& c) {
  return "PyTorch " + case_name(spec, c) + ", cuda, graphed";
}

// Seconds per whole epoch from a record's epochs_run (seconds, steps), batch_size and
// train_samples: the median over the epochs after the first (which pays for warm-up: memory,
// the graph's recording, cuDNN's plans), or the first alone; an epoch cut short by
// --steps-per-epoch counts as its median step time times the steps of a whole epoch.
Measure epoch_time(const nlohmann::json& record) {
  const nlohmann::json& epochs = record.value("epochs_run", nlohmann::json::array());
  const int64_t batch = record.value("batch_size", int64_t{0});
  const int64_t samples = record.value("train_samples", int64_t{0});
  if (epochs.empty() || batch <= 0 || samples <= 0) {
    return {std::nullopt, "its record has no epochs, batch_size or train_samples"};
  }
  const size_t first = epochs.size() > 1 ? 1 : 0;
  const int64_t whole = (samples + batch - 1) / batch;
  const int64_t steps = epochs.back().value("steps", int64_t{0});
  std::vector<double> values;
  for (size_t i = first; i < epochs.size(); ++i) {
    const double seconds = epochs[i].value("seconds", 0.0);
    values.push_back(steps < whole ? seconds / static_cast<double>(std::max<int64_t>(steps, 1)) : seconds);
  }
  const double median = apps::spread_of(values).median;
  const std::string which = first == 0            ? "epoch 1 (the only one, warm-up included)"
                            : epochs.size() == 2 ? "epoch 2"
                                                 : "the median of epochs 2-" + std::to_string(epochs.size());
  const std::string whole_steps = std::to_string(whole) + (whole == 1 ? " step" : " steps");
  if (steps >= whole) return {median, which + ", " + whole_steps};
  return {median * static_cast<double>(whole), "the median step of " + which + " (" + std::to_string(steps) +
                                                   " of " + whole_steps + ") x " + whole_steps};
}

Measure measure(const std::vector<Job>& jobs, const std::vector<Outcome>& outcomes,
                const std::string& name, std::string* data = nullptr) {
  std::string why;
  const std::optional<nlohmann::json> record = record_of(jobs, outcomes, name, why);
  if (!record) return {std::nullopt, why};
  if (data && data->empty()) *data = record->value("data", "");
  return epoch_time(*record);
}

class TrainingExperiment final : public BenchExperiment {
 public:
  explicit TrainingExperiment(Spec spec) : spec_(std::move(spec)) {}

  std::vector<Job> jobs(const Config& config) const override {
    std::vector<Job> jobs = spec_.setup ? spec_.setup(config) : std::vector<Job>{};
    for (const Case& c : spec_.cases) {
      for (const std::string& d : config.devices) {
        const bool cpu = d == "cpu";
        if (cpu && c.tf32) continue;
        const Args args = concat(concat(concat(concat({"--device", d}, c.args), c.ours_only),
                                        spec_.data(config, false, cpu)),
                                 concat(run_args(config, run_for(config, spec_, c, cpu, false), cpu),
                                        c.tf32 ? Args{"--tf32"} : Args{}));
        jobs.push_back(app_job(config, our_job(spec_, c, d), spec_.app, args, cpu ? c.cpu : c.gpu));
      }
      for (const std::string& t : torch_devices(config)) {
        const bool cpu = t == "cpu";
        if (cpu && c.tf32) continue;
        const Args args = concat(concat(concat({"--device", t}, c.args), spec_.data(config, true, cpu)),
                                 concat(run_args(config, run_for(config, spec_, c, cpu, true), cpu),
                                        c.tf32 ? Args{} : spec_.torch_fp32));
        jobs.push_back(script_job(config, torch_job(spec_, c, t), "pytorch/" + spec_.app + ".py", args,
                                  cpu ? c.torch_cpu : c.torch_gpu));
        if (!cpu && spec_.graphed) {
          jobs.push_back(script_job(config, torch_best_job(spec_, c), "pytorch/" + spec_.app + ".py",
                                    concat(args, {"--graphed"}), c.torch_gpu));
        }
      }
    }
    return jobs;
  }

  // The runs on one kind of device in words: "2 epochs of 20 steps", or per case where the
  // cases differ ("2 epochs (whole) for the small model, 2 epochs of 300 steps for the wide").
  // Only the cases that run there (a TF32 case: not on the CPU).
  std::string runs_text(const Config& config, bool cpu, bool pytorch) const {
    const std::string first = describe(run_for(config, spec_, spec_.cases.front(), cpu, pytorch));
    std::string per_case;
    bool differ = false;
    for (const Case& c : spec_.cases) {
      if (cpu && c.tf32) continue;
      const std::string text = describe(run_for(config, spec_, c, cpu, pytorch));
      differ = differ || text != first;
      per_case += (per_case.empty() ? "" : ", ") + text + " for the " + c.label;
    }
    return (differ ? per_case : first) + (cpu ? " on the CPU" : pytorch ? " on cuda" : " on a GPU");
  }

  // What ran, in words: "ours: 3 epochs (whole) on a GPU; 2 epochs of 20 steps on the CPU; ...".
  std::string setting_text(const Config& config) const {
    const bool gpu = config.devices.back() != "cpu", cpu = config.devices.front() == "cpu";
    std::string text = "ours: " + (gpu ? runs_text(config, false, false) + (cpu ? "; " : "") : "") +
                       (cpu ? runs_text(config, true, false) : "");
    if (config.pytorch) {
      text += "; PyTorch: " + (config.pytorch_cuda ? runs_text(config, false, true) + (cpu ? "; " : "") : "") +
              (cpu ? runs_text(config, true, true) : "") + "; the same model, optimizer, batch and data" +
              (spec_.graphed && config.pytorch_cuda
                   ? "; at its best (`--graphed`): the whole step as one CUDA graph, the fused or "
                     "foreach capturable optimizer, cudnn.benchmark, channels_last"
                   : "");
    }
    const bool tf32 = std::any_of(spec_.cases.begin(), spec_.cases.end(), [](const Case& c) { return c.tf32; });
    return text +
           (tf32 ? "; FP32 but for the TF32 rows (ours `--tf32`, PyTorch's TF32 default), on GPUs only"
                 : "; FP32 throughout") +
           "; the first of two or more epochs is left out (warm-up).";
  }

  Experiment collect(const Config& config, const std::vector<Job>& jobs,
                     const std::vector<Outcome>& outcomes) const override {
    Experiment e;
    e.title = spec_.title;
    e.metric = "Seconds per epoch (training steps only)";
    e.in_epoch_plot = true;
    std::string data, torch_data;
    for (const Case& c : spec_.cases) {
      for (const std::string& d : config.devices) {
        if (d == "cpu" && c.tf32) continue;
        // Member by member: GCC 12 sees an uninitialised string in the aggregate's temporaries.
        Row row;
        row.label = c.label;
        row.device = d;
        row.ours = measure(jobs, outcomes, our_job(spec_, c, d), &data);
        row.pytorch = torch_runs_on(config, d)
                          ? measure(jobs, outcomes, torch_job(spec_, c, torch_device(d)), &torch_data)
                          : Measure{std::nullopt, torch_why_not(config, d)};
        row.article = published(spec_.app, c.key, d);
        if (d != "cpu") {  // PyTorch has no graphed mode on the CPU: "—" there
          row.pytorch_best = !spec_.graphed ? Measure{std::nullopt, "no graphed mode in its script"}
                             : torch_runs_on(config, d)
                                 ? measure(jobs, outcomes, torch_best_job(spec_, c))
                                 : Measure{std::nullopt, torch_why_not(config, d)};
        }
        e.rows.push_back(row);
      }
    }
    e.setting = setting_text(config);
    if (spec_.data_note) {
      e.notes.push_back(spec_.data_note(config));
    } else if (!data.empty()) {
      e.notes.push_back("Data (ours): " + data);
    }
    if (!torch_data.empty()) e.notes.push_back("Data (PyTorch): " + torch_data);
    return e;
  }

 private:
  Spec spec_;
};

Args digits_data(const Config& config, bool, bool) {
  return {"--dataset", config.digits, "--data-dir", config.data_dir};
}

// A validation or test set cut short, except in --full: what the report measures is training.
// `count` in the default setting, a tenth of it in --quick.
Args fewer_test_images(const Config& config, const char* flag, int count) {
  if (config.setting == Setting::Full) return {};
  return {flag, std::to_string(config.setting == Setting::Quick ? std::max(1, count / 10) : count)};
}

// The CNNs' flags after their data's: our test set cut to 1,000 images.
Args cnn_flags(const Config& config, bool pytorch, const Args& data) {
  return concat(data, pytorch ? Args{} : fewer_test_images(config, "--test-images", 1000));
}

// Without --dogs-dir, a synthetic tree in the work folder: the article's 2,000 + 800 images
// (32 + 16 in --quick), as datasets/make_dogs_cats writes them.
std::vector<Job> make_dogs_tree(const Config& config) {
  if (!config.make_dogs) return {};
  const std::string tool = (fs::path(config.bin_dir).parent_path() / "datasets" / "make_dogs_cats").string();
  Args argv = {tool, "--out", config.dogs_dir, "--force"};
  if (config.setting == Setting::Quick) {
    argv.insert(argv.end(), {"--train-per-class", "16", "--validation-per-class", "8"});
  }
  return {command_job(config, "make_dogs_cats (the Dogs vs Cats tree)", argv, 8)};
}

std::string describe_dogs_tree(const Config& config) {
  if (!config.make_dogs) return "Images: the tree in " + config.dogs_dir + " (--dogs-dir)";
  return "Images: a synthetic tree that make_dogs_cats wrote into " + config.dogs_dir +
         " (Kaggle's photographs cannot be fetched here; the JPEGs are decoded and augmented "
         "every epoch all the same); PyTorch's --mode compute trains on random images already on "
         "the device, so its times leave decoding out";
}

// Dogs vs Cats in TF32 on a GPU: ours augmenting on the GPU and, where the build has nvJPEG,
// decoding 40% of the JPEGs there too (--decode-on gpu, its default share), as fast as the
// loader goes.
Case dogs_tf32_case() {
  const bool nvjpeg = DeviceJpegDecoder::built();
  Case c{"tf32", nvjpeg ? "TF32, CPU+GPU decoding" : "TF32, GPU augmenting", {}, 0, 4, 0, 7, 0,
         true};
  c.ours_only = nvjpeg ? Args{"--augment-on", "gpu", "--decode-on", "gpu"} : Args{"--augment-on", "gpu"};
  return c;
}

std::vector<Spec> specs() {
  return {
      {"mnist_mlp", "MNIST MLP (seed 000)", 10,
       {{"small", "small model", {}, 0, 3, 4, 9, 7}, {"wide", "wide model", {"--wide"}, 300, 3, 4, 11, 7}},
       digits_data, nullptr, nullptr, true},
      {"cifar10_cnn", "CIFAR-10 CNN (seed 003)", 10,
       {{"", "FP32", {}, 20, 7, 12, 10, 12}, {"tf32", "TF32", {}, 0, 7, 0, 10, 0, true}},
       [](const Config& config, bool pytorch, bool) {
         return cnn_flags(config, pytorch, {"--dataset", "auto", "--data-dir", config.data_dir});
       },
       nullptr, nullptr, true, {"--no-tf32"}},
      {"mnist_cnn", "MNIST CNN (seed 004)", 12,
       {{"", "FP32", {}, 20, 5, 8, 8, 8}, {"tf32", "TF32", {}, 0, 5, 0, 8, 0, true}},
       [](const Config& config, bool pytorch, bool cpu) {
         return cnn_flags(config, pytorch, digits_data(config, pytorch, cpu));
       },
       nullptr, nullptr, true, {"--no-tf32"}},
      {"dogs_vs_cats", "Dogs vs Cats (seed 004)", 50,
       {{"", "FP32", {}, 10, 4, 6, 7, 7}, dogs_tf32_case()},
       [](const Config& config, bool pytorch, bool cpu) {
         // PyTorch's --mode compute trains on tensors already on the device (random images:
         // decoding is not timed there); ours reads, decodes and augments the JPEGs every epoch.
         const Args validation = cpu ? fewer_test_images(config, "--validation-steps", 5) : Args{};
         const Args data = pytorch ? Args{"--dataset", "synthetic", "--mode", "compute"}
                                   : Args{"--data-dir", config.dogs_dir};
         return concat(data, validation);
       },
       make_dogs_tree, describe_dogs_tree, true, {"--no-tf32"}},
  };
}

}  // namespace

std::vector<std::unique_ptr<BenchExperiment>> training_experiments() {
  std::vector<std::unique_ptr<BenchExperiment>> experiments;
  for (Spec& spec : specs()) experiments.push_back(std::make_unique<TrainingExperiment>(std::move(spec)));
  return experiments;
}

}  // namespace engine::bench
