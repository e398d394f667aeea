#include "apps/common/app_options.h"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "apps/common/rank_launcher.h"
#include "core/binary_file.h"
#include "core/device_services.h"
#include "core/logging.h"
#include "core/profiler.h"
#include "core/sync_check.h"
#include "core/system_info.h"
#include "cpu/cpu_device.h"

namespace engine::apps {

nn::LearningRateSchedule parse_lr_schedule(const std::string& text) {
  if (text.empty()) return {};
  std::vector<std::string> parts{""};
  for (const char c : text) {
    if (c == ':') {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  // A whole number or a finite real, the whole field.
  const auto real = [&](const std::string& field, double* value) {
    char* end = nullptr;
    *value = std::strtod(field.c_str(), &end);
    return !field.empty() && *end == '\0' && std::isfinite(*value);
  };
  double factor = 0.0, every = 0.0, min_rate = 0.0;
  if (parts[0] == "step" && parts.size() == 3 && real(parts[1], &factor) &&
      real(parts[2], &every) && factor > 0.0 && factor <= 1.0 && every >= 1.0 &&
      every == std::floor(every) && every <= 1e6) {
    return nn::LearningRateSchedule::step(factor, static_cast<int>(every));
  }
  if (parts[0] == "cosine" && parts.size() <= 2 &&
      (parts.size() == 1 || (real(parts[1], &min_rate) && min_rate >= 0.0))) {
    return nn::LearningRateSchedule::cosine(min_rate);
  }
  throw UsageError("'" + text + "' is not step:FACTOR:EVERY (FACTOR in (0, 1], EVERY epochs "
                   ">= 1) or cosine:MIN (MIN >= 0)");
}

bool nan_check_enabled(const CommonOptions& o, Device device) {
  return o.nan_check.value_or(device.is_cpu());
}

std::string backend_choice(const CommonOptions& o) {
  // --cpu / --gpu are shorthands that take precedence over --device.
  if (o.cpu) return "cpu";
  if (o.gpu) return "gpu";
  return o.device;
}

Device apply_common_options(const CommonOptions& o) {
  set_log_level(o.log_level);
  if (o.threads > 0) cpu::set_num_threads(o.threads);
  if (o.cpu && o.gpu) throw UsageError("--cpu and --gpu contradict each other");
  const std::string choice = backend_choice(o);
  const Device device = choice == "cpu" ? Device::cpu() : Device::cuda(0);
  std::string why;
  if (!device_available(device, &why)) throw UsageError("cannot use the GPU: " + why);
  if (o.tf32 && device.is_cpu()) throw UsageError("--tf32 needs the GPU (--gpu)");
  DeviceServices& services = device_services(device);
  services.set_tf32(o.tf32);
  // The GPU's services are one per process: switch the vendor libraries off as well as on.
  if (!device.is_cpu()) services.set_vendor_libraries(choice == "cudnn");
  // --sync-check's hook first: a hook added later runs outside the earlier ones
  // (core/dispatch.h), so the profiler times the checked ops.
  if (o.sync_check) enable_sync_check(device);
  if (o.profile) enable_profiling(device);
  check_outputs({o.json_path, o.save_path, o.save_model_path, o.checkpoint_path, o.log_csv,
                 o.save_best_path});
  return device;
}

void check_outputs(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    if (!path.empty()) check_writable(path);
  }
}

nlohmann::json machine_record(const CommonOptions& o, Device device) {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"date", date},
          {"device", to_string(device)},
          {"backend", backend_choice(o)},
          {"device_name", device_services(device).name()},
          {"cpu_model", cpu_model_name()},
          {"threads", cpu::num_threads()},
          {"hardware_threads", hardware_threads()},
          {"blas", cpu::blas_config()},
          {"seed", o.seed},
          {"tf32", o.tf32},
          {"sync_check", o.sync_check},
          {"batch_size", o.batch_size},
          {"epochs", o.epochs},
          {"steps_per_epoch", o.steps_per_epoch},
          // Data-parallel ranks (--gpus): batch_size is per rank, a step takes ranks times it.
          {"ranks", rank_communicator() ? rank_communicator()->world() : 1},
          {"kernels", kernel_families_json(device_services(device))}};
}

nlohmann::json kernel_families_json(const DeviceServices& services) {
  nlohmann::json families = nlohmann::json::object();
  for (const auto& [op, kernels] : services.kernel_families()) families[op] = kernels;
  return families;
}

void print_kernel_families(std::ostream& out, const DeviceServices& services) {
  for (const auto& [op, kernels] : services.kernel_families()) {
    out << "Kernels: " << op << ": " << kernels << "\n";
  }
}

void write_text_file(const std::string& path, const std::string& text) {
  write_file_atomically(path, text.data(), text.size());
}

namespace {
// `value` with every string and key made valid UTF-8 (valid_utf8): nlohmann's dump throws
// (type_error 316) on one that is not, which lost a whole run's record at its end.
nlohmann::json with_valid_utf8(const nlohmann::json& value) {
  if (value.is_string()) return valid_utf8(value.get_ref<const std::string&>());
  if (value.is_array()) {
    nlohmann::json array = nlohmann::json::array();
    for (const nlohmann::json& element : value) array.push_back(with_valid_utf8(element));
    return array;
  }
  if (value.is_object()) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& item : value.items()) {
      object[valid_utf8(item.key())] = with_valid_utf8(item.value());
    }
    return object;
  }
  return value;
}
}  // namespace

void write_json(const std::string& path, const nlohmann::json& record) {
  write_text_file(path, with_valid_utf8(record).dump(2) + "\n");
}

}  // namespace engine::apps
