#include "apps/common/app_flags.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "apps/common/rank_launcher.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/profiler.h"

namespace engine::apps {

namespace {

// strtoll/strtoull in base 0, as CLI11 converts; false where CLI11 would saturate, wrap a
// negative into an unsigned, or stop before the text's end.
template <typename T>
bool parse_integer(const std::string& text, T* value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  if constexpr (std::is_unsigned_v<T>) {
    if (text[0] == '-') return false;
    const unsigned long long parsed = std::strtoull(text.c_str(), &end, 0);
    if (errno == ERANGE || parsed > std::numeric_limits<T>::max()) return false;
    *value = static_cast<T>(parsed);
  } else {
    const long long parsed = std::strtoll(text.c_str(), &end, 0);
    if (errno == ERANGE || parsed < std::numeric_limits<T>::lowest() ||
        parsed > std::numeric_limits<T>::max()) {
      return false;
    }
    *value = static_cast<T>(parsed);
  }
  return *end == '\0';
}

// strtold then a cast to T, as CLI11 converts; false for NaN and for anything T holds only as
// infinity (1e39 as a float).
template <typename T>
bool parse_real(const std::string& text, T* value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  const long double parsed = std::strtold(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(parsed) ||
      std::fabs(parsed) > static_cast<long double>(std::numeric_limits<T>::max())) {
    return false;
  }
  *value = static_cast<T>(parsed);
  return std::isfinite(*value);
}

template <typename T>
bool parse_number(const std::string& text, T* value) {
  if constexpr (std::is_floating_point_v<T>) {
    return parse_real(text, value);
  } else {
    return parse_integer(text, value);
  }
}

template <typename T>
std::string number_string(T value) {
  std::ostringstream out;
  out << +value;
  return out.str();
}

// The CLI11 check of a NumberCheck: the text converted to T as CLI11 converts it, refusing what
// CLI11 lets through (trailing text, saturation, a value T does not hold, NaN, infinity).
template <typename T>
CLI::Validator validator(const NumberCheck<T>& c) {
  using Shown = typename NumberCheck<T>::Shown;
  std::string description;
  switch (c.shown) {
    case Shown::Range:
      description = std::string(CLI::detail::type_name<T>()) + " in [" + number_string(c.lo) +
                    " - " + number_string(c.hi) + "]";
      break;
    case Shown::Positive: description = "POSITIVE"; break;
    case Shown::NonNegative: description = "NONNEGATIVE"; break;
    case Shown::Nothing: break;
  }
  std::string range =
      (c.lo_open ? "(" : "[") + number_string(c.lo) + " to " + number_string(c.hi) + "]";
  if (std::is_floating_point_v<T>) {
    range += std::is_same_v<T, float> ? " of a finite float" : " of a finite double";
  }
  return CLI::Validator(
      [c, range](std::string& text) -> std::string {
        T value{};
        if (!parse_number(text, &value) || value < c.lo || value > c.hi ||
            (c.lo_open && value == c.lo)) {
          return "Value " + text + " not in range " + range;
        }
        return {};
      },
      std::move(description));
}

// capture_default_str() is in CLI11 2.0 and later (Ubuntu 22.04 has 2.1.2, Debian 12 2.3.1);
// flags show no default, options without a value (empty strings, empty lists) neither.
void show_defaults_in_help(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (!option->get_default_str().empty()) continue;  // named in words: keep them
    option->capture_default_str();
    if (option->get_default_str() == "[]") option->default_str("");
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) show_defaults_in_help(*sub);
}

}  // namespace

void add_device_flags(Flags& flags, CommonOptions& o) {
  flags.option("--device", o.device,
               "cpu (OpenBLAS + OpenMP), gpu (hand-written CUDA) or cudnn (the GPU with cuBLAS "
               "matmuls and cuDNN convolutions and pooling)")
      .one_of({"cpu", "gpu", "cudnn"});
  flags.flag("--cpu", o.cpu, "same as --device cpu");
  flags.flag("--gpu", o.gpu, "same as --device gpu");
  flags.flag("--tf32", o.tf32,
             "GPU matmuls (and cuDNN convolutions) on TF32 tensor cores: faster, ~1e-3 "
             "relative error (default FP32, as the articles)");
  flags.option("--seed", o.seed, "seed for initial weights, shuffling and dropout")
      .check(any_number<uint64_t>());
  flags.option("--threads", o.threads, "CPU threads for OpenMP and OpenBLAS (0: all cores)")
      .check(finite_in(0, 4096));
  flags.option("--json", o.json_path, "write a machine-readable record of the run here");
  flags.flag("--profile", o.profile,
             "time every op on the device (CUDA events; no CUDA graph) and print a table at "
             "the end: time, FLOPs, bytes, % of the measured peak, what bounds it");
  flags.flag("--sync-check", o.sync_check,
             "wait for the device after every op, so that a GPU fault (illegal address, launch "
             "failure) names the op and the kernel it happened in; no CUDA graph: a few times "
             "slower, for finding a fault, not for timing (free on the CPU)");
  flags.option("--log-level", o.log_level, "trace, debug, info, warn, error, critical, off")
      .one_of({"trace", "debug", "info", "warn", "error", "critical", "off"});
}

void add_common_flags(Flags& flags, CommonOptions& o, const std::vector<std::string>& datasets) {
  add_device_flags(flags, o);
  flags.option("--epochs", o.epochs, "training epochs (0: evaluate only, with --load)")
      .check(finite_in(0, 100000));
  flags.option("--batch-size", o.batch_size,
               "samples per training step (per GPU with --gpus: a step takes N times as many)")
      .check(finite_in(int64_t{1}, int64_t{1} << 20));
  flags.option("--gpus", o.gpus,
               "train data-parallel on this many GPUs of this host, one process each, the "
               "gradients averaged through NCCL (apps/common/rank_launcher.h)")
      .check(finite_in(1, 1024));
  flags.option("--bucket-mb", o.bucket_mb,
               "with --gpus: all-reduce the gradients in buckets of this many MiB as backward "
               "writes them (a bucket larger than the model: one all-reduce after backward)")
      .check(finite_in(0.001, 1e6));
  flags.option("--steps-per-epoch", o.steps_per_epoch,
               "cut every epoch short after this many steps (0: the whole set)")
      .check(finite_in(int64_t{0}, int64_t{1} << 40));
  flags.option("--dataset", o.dataset, "which data to train on").one_of(datasets);
  flags.option("--data-dir", o.data_dir, "where scripts/fetch_data.sh put the data");
  flags.option("--save", o.save_path, "save the trained weights to this file");
  flags.option("--save-model", o.save_model_path,
               "save the trained model, its layers and weights, to this file (for "
               "nn::load_model)");
  const Flag load =
      flags.option("--load", o.load_path, "load weights from this file before training")
          .existing_file();
  flags.option("--learning-rate,--lr", o.learning_rate,
               "the optimizer's learning rate (default: the article's, Keras' default)")
      .check(positive_number<float>())
      .default_text("the article's");

  o.app_name = flags.name();
  const Flag checkpoint = flags.option(
      "--checkpoint", o.checkpoint_path,
      "save a checkpoint here (weights, optimizer state, shuffling state, epoch) every "
      "--checkpoint-every epochs and after the last, atomically; Ctrl-C saves one too");
  flags.option("--checkpoint-every", o.checkpoint_every,
               "epochs between checkpoints (default 1; needs --checkpoint)")
      .check(finite_in(1, 100000))
      .needs(checkpoint);
  flags.option("--resume", o.resume_path,
               "go on from this checkpoint to --epochs, as if never stopped (same --seed, "
               "--batch-size, --steps-per-epoch and data)")
      .existing_file()
      .excludes(load);
  const Flag nan_check = flags.flag(
      "--nan-check", [&o] { o.nan_check = true; },
      "stop at the first NaN or Inf in the loss or the gradients, naming the epoch, the step and "
      "the layer (default on the CPU; on the GPU it costs a synchronisation per step)");
  flags.flag("--no-nan-check", [&o] { o.nan_check = false; },
             "do not check for NaN and Inf (the default on the GPU)")
      .excludes(nan_check);
  flags.flag("--breakdown", o.breakdown,
             "measure where each epoch's time went (data wait, host->device input, GPU or CPU "
             "compute, device->host reads, validation, the rest) with device timers read after "
             "each epoch, print it per epoch with a bar and add it to --json")
      .excludes(flags.find("--profile"));

  // Keras' habits (nn/callbacks.h).
  flags.option("--log-csv", o.log_csv,
               "write a row per epoch to this CSV file, as Keras' CSVLogger: epoch,loss,"
               "accuracy,val_loss,val_accuracy (mae for a regression loss, lr with "
               "--lr-schedule); on --resume, appended to");
  const Flag early = flags.option("--early-stopping", o.early_stopping,
                                  "stop once --monitor has not improved for this many epochs "
                                  "(0: never)")
                         .check(finite_in(0, 100000));
  flags.option("--monitor", o.monitor,
               "what --early-stopping and --save-best watch: val_loss, loss, val_accuracy, "
               "accuracy, val_mae or mae (lower is better, but for accuracy)")
      .one_of({"val_loss", "loss", "val_accuracy", "accuracy", "val_mae", "mae"})
      .default_text("val_loss, or loss without validation data");
  flags.flag("--restore-best-weights", o.restore_best_weights,
             "with --early-stopping: end with the weights of the epoch --monitor was best at")
      .needs(early);
  flags.option("--save-best", o.save_best_path,
               "save the model (a name ending in .weights: the weights) to this file whenever "
               "--monitor improves");
  flags.option("--lr-schedule", o.lr_schedule,
               "set the learning rate at each epoch's start: step:FACTOR:EVERY (times FACTOR "
               "every EVERY epochs) or cosine:MIN (from the rate down to MIN over --epochs)")
      .check_with([](const std::string& text) {
        try {
          parse_lr_schedule(text);
          return std::string();
        } catch (const UsageError& e) {
          return std::string(e.what());
        }
      })
      .default_text("none");
}

template <typename T>
Flag& Flag::check(const NumberCheck<T>& range) {
  option_->check(validator(range));
  return *this;
}
template Flag& Flag::check(const NumberCheck<int>&);
template Flag& Flag::check(const NumberCheck<long>&);
template Flag& Flag::check(const NumberCheck<unsigned long>&);
template Flag& Flag::check(const NumberCheck<float>&);
template Flag& Flag::check(const NumberCheck<double>&);

Flag& Flag::one_of(const std::vector<std::string>& choices) {
  option_->check(CLI::IsMember(choices));
  return *this;
}

Flag& Flag::check_with(const std::function<std::string(const std::string&)>& check) {
  option_->check([check](const std::string& text) { return check(text); });
  return *this;
}

Flag& Flag::existing_file() {
  option_->check(CLI::ExistingFile);
  return *this;
}

Flag& Flag::delimiter(char separator) {
  option_->delimiter(separator);
  return *this;
}

Flag& Flag::default_text(const std::string& text) {
  option_->default_str(text);
  return *this;
}

Flag& Flag::excludes(const Flag& other) {
  option_->excludes(other.option_);
  return *this;
}

Flag& Flag::needs(const Flag& other) {
  option_->needs(other.option_);
  return *this;
}

Flag& Flag::required() {
  option_->required();
  return *this;
}

Flag& Flag::exponent_notation() {
  option_->transform([](std::string text) {
    if (text.find_first_of("eE.") == std::string::npos) return text;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    // Not a number, or not a whole one that an int64 holds: left as it is, for the check to refuse.
    if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value != std::floor(value) ||
        std::fabs(value) > 9.0e18) {
      return text;
    }
    return std::to_string(static_cast<long long>(value));
  });
  return *this;
}

Flags::Flags(const std::string& description, const std::string& name)
    : app_(std::make_unique<CLI::App>(description, name)) {}

Flags::~Flags() = default;

Flag Flags::flag(const std::string& name, bool& value, const std::string& help) {
  return Flag(app_->add_flag(name, value, help));
}

Flag Flags::flag(const std::string& name, std::function<void()> set, const std::string& help) {
  return Flag(app_->add_flag_callback(name, std::move(set), help));
}

template <typename T>
Flag Flags::option(const std::string& name, T& value, const std::string& help) {
  return Flag(app_->add_option(name, value, help));
}
template Flag Flags::option(const std::string&, int&, const std::string&);
template Flag Flags::option(const std::string&, long&, const std::string&);
template Flag Flags::option(const std::string&, unsigned long&, const std::string&);
template Flag Flags::option(const std::string&, float&, const std::string&);
template Flag Flags::option(const std::string&, double&, const std::string&);
template Flag Flags::option(const std::string&, std::string&, const std::string&);
template Flag Flags::option(const std::string&, std::vector<int>&, const std::string&);
template Flag Flags::option(const std::string&, std::vector<std::string>&, const std::string&);

void Flags::describe(const std::string& name, const std::string& help) {
  app_->get_option(name)->description(help);
}

void Flags::footer(const std::string& text) { app_->footer(text); }

bool Flags::given(const std::string& name) const { return app_->count(name) > 0; }

Flag Flags::find(const std::string& name) { return Flag(app_->get_option(name)); }

const std::string& Flags::name() const { return app_->get_name(); }

namespace {
// The one line an app ends with on an error: its name, then the message made printable (a
// path in it may hold a newline or an escape code).
void print_error_line(const CLI::App& app, const char* label, const char* message) {
  std::cerr << app.get_name() << ": " << label << printable(message) << "\n";
}
}  // namespace

int run_app(Flags& flags, int argc, char** argv, const std::function<int()>& body) {
  CLI::App& app = flags.cli();
  print_log_messages_printable();
  show_defaults_in_help(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error_line(app, "", e.what());
    return 2;
  }
  try {
    const int status = body();
    for (const Device device : profiled_devices()) print_profile(std::cout, collect_profile(device));
    return status;
  } catch (const RanksFinished& ranks) {  // this process launched --gpus' ranks; they ended
    return ranks.status;
  } catch (const Interrupted& e) {
    print_error_line(app, "", e.what());
    return 128 + e.signal();
  } catch (const UsageError& e) {
    print_error_line(app, "", e.what());
    return 2;
  } catch (const DeviceError& e) {
    print_error_line(app, "", e.what());
    return 2;
  } catch (const std::exception& e) {
    print_error_line(app, "error: ", e.what());
    return 1;
  }
}

}  // namespace engine::apps
