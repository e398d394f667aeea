// The options every app shares (docs/USING.md) and the small things every app does with
// them: pick the device, set threads and log level, check and write the output files, the
// --json record among them. The flags that fill CommonOptions, run_app (one line and an exit
// status for an error) and the numeric range checks are in app_flags.h.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/device.h"
#include "nn/callbacks.h"

namespace engine {
class DeviceServices;
}

namespace engine::apps {

struct CommonOptions {
  std::string device = "cpu";
  bool cpu = false;
  bool gpu = false;
  bool tf32 = false;
  int epochs = 10;
  int64_t batch_size = 32;  // per GPU with --gpus
  int gpus = 0;  // --gpus N: data-parallel on N GPUs (0: one process, no NCCL)
  double bucket_mb = 4.0;  // --bucket-mb: the gradients' all-reduce buckets, in MiB
  int64_t steps_per_epoch = 0;
  std::string dataset;
  std::string data_dir = "data";
  uint64_t seed = 42;
  int threads = 0;  // 0: OpenMP's default (all cores)
  std::string json_path;
  std::string save_path;
  std::string save_model_path;  // --save-model: the architecture with the weights (nn/model_file.h)
  std::string load_path;
  std::string log_level = "info";
  bool profile = false;  // --profile: time every op on the device, print the table at the end
  bool sync_check = false;  // --sync-check: wait after every op, name the op a GPU fault is in
  // Training apps only (add_common_flags):
  std::string app_name;         // names the default checkpoint file, "<app>.ckpt"
  float learning_rate = 0.0f;   // 0: the optimizer's own (the article's)
  std::string checkpoint_path;  // --checkpoint
  int checkpoint_every = 1;     // --checkpoint-every, in epochs
  std::string resume_path;      // --resume
  std::optional<bool> nan_check;  // --nan-check / --no-nan-check; unset: on on the CPU only
  bool breakdown = false;  // --breakdown: where each epoch's time went (nn/epoch_breakdown.h)
  // Keras' habits (nn/callbacks.h):
  std::string log_csv;         // --log-csv: a row per epoch
  int early_stopping = 0;      // --early-stopping PATIENCE (0: off)
  std::string monitor;         // --monitor; empty: val_loss, or loss where the app validates on nothing
  bool restore_best_weights = false;  // --restore-best-weights
  std::string save_best_path;  // --save-best
  std::string lr_schedule;     // --lr-schedule step:FACTOR:EVERY | cosine[:MIN]; empty: none
};

// --lr-schedule's text: "step:FACTOR:EVERY" (the rate times FACTOR every EVERY epochs) or
// "cosine:MIN" ("cosine": MIN 0); empty: none. Throws UsageError for anything else.
nn::LearningRateSchedule parse_lr_schedule(const std::string& text);

// Whether fit checks every step for NaN and Inf: --nan-check / --no-nan-check, else on the
// CPU only (on the GPU the check synchronises every step).
bool nan_check_enabled(const CommonOptions& options, Device device);

// Which backend the flags ask for: "cpu", "gpu" (our kernels) or "cudnn" (the GPU with cuBLAS
// and cuDNN); --cpu and --gpu take precedence over --device.
std::string backend_choice(const CommonOptions& options);

// Applies --threads and --log-level and resolves --device/--cpu/--gpu to a usable device;
// --device cudnn switches the GPU's vendor libraries on (DeviceServices::set_vendor_libraries).
// Throws UsageError (exit status 2) when the device cannot be used, DeviceError (also status 2)
// when cuDNN cannot. Then checks the files the run writes (--json, --save, --save-model,
// --checkpoint, --log-csv, --save-best) with check_outputs: engine::Error, status 1.
Device apply_common_options(const CommonOptions& options);

// Checks, before any work, that the run can write each of `paths` (core/binary_file.h,
// check_writable; an empty path, an output not asked for, is skipped): a path that cannot be
// written stops the run now, with one line naming it and why (status 1), not after an hour of
// training. Every app calls it on all its output flags before it trains or measures.
void check_outputs(const std::vector<std::string>& paths);

// A bad flag value or an unusable device: the app exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Training stopped by SIGINT or SIGTERM after saving a checkpoint (train_and_report): the app
// exits with 128 + the signal (130, 143), the status a shell gives a process the signal
// killed, after one line that says how to resume.
class Interrupted : public std::runtime_error {
 public:
  Interrupted(int signal, const std::string& message)
      : std::runtime_error(message), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// What every --json record holds about the machine and the run's settings.
nlohmann::json machine_record(const CommonOptions& options, Device device);

// The kernels each op family runs on this device (DeviceServices::kernel_families): an object
// for --json, and a "Kernels: matmul: ..." line each for the run header (none on the CPU).
nlohmann::json kernel_families_json(const DeviceServices& services);
void print_kernel_families(std::ostream& out, const DeviceServices& services);

// Writes `text` to `path` atomically (core/binary_file.h, write_file_atomically): a failed
// write, flush or close (a full disk) throws one line naming the path and the system's reason,
// leaves no temporary and the previous file whole; a "Wrote" line after it is true. Every text
// file an app writes (CSV, JSON, plot data and scripts, reports) goes through it.
void write_text_file(const std::string& path, const std::string& text);

// Writes `record` to `path` with write_text_file. Never throws for the record's text: a string
// that is not UTF-8 (a path: a Linux file name is any bytes) is written with each such byte as
// the text \xNN (core/logging.h, valid_utf8), escaped, not replaced, so the record keeps it.
void write_json(const std::string& path, const nlohmann::json& record);

}  // namespace engine::apps
