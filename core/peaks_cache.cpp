#include "core/peaks_cache.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/binary_file.h"

namespace engine {
namespace {

struct Entry {
  std::string key;
  MeasuredPeaks peaks;
  std::string measured_at;
};

// Names hold no tabs or newlines in practice; replacing them keeps a line one record.
std::string clean_key(std::string key) {
  for (char& c : key)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return key;
}

bool parse_line(const std::string& line, Entry& entry) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, '\t');) fields.push_back(field);
  if (fields.size() != 7 || fields[0].empty()) return false;
  double values[5];
  for (int i = 0; i < 5; ++i) {
    char* end = nullptr;
    values[i] = std::strtod(fields[1 + i].c_str(), &end);
    if (end == fields[1 + i].c_str() || *end != '\0' || !(values[i] >= 0.0)) return false;
  }
  // A cached zero where the probe always measures something would divide by zero later.
  if (values[0] <= 0.0 || values[1] <= 0.0 || values[2] <= 0.0) return false;
  entry = {fields[0], {values[0], values[1], values[2], values[3], values[4]}, fields[6]};
  return true;
}

std::string format_line(const Entry& e) {
  char numbers[160];
  // %.17g: the doubles come back bit for bit, so a cached run divides by exactly the peaks
  // the measuring run used.
  std::snprintf(numbers, sizeof numbers, "%.17g\t%.17g\t%.17g\t%.17g\t%.17g", e.peaks.flops_per_s,
                e.peaks.bytes_per_s, e.peaks.launch_seconds, e.peaks.host_to_device_bytes_per_s,
                e.peaks.device_to_host_bytes_per_s);
  return e.key + "\t" + numbers + "\t" + e.measured_at + "\n";
}

std::string utc_now() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

// Every well-formed line of the cache; `dropped` counts the others.
std::vector<Entry> read_cache(const std::string& path, int& dropped) {
  std::vector<Entry> entries;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    Entry e;
    if (parse_line(line, e))
      entries.push_back(e);
    else
      ++dropped;
  }
  return entries;
}

}  // namespace

std::string peaks_cache_path() {
  namespace fs = std::filesystem;
  fs::path dir;
  if (const char* d = std::getenv("ENGINE_CACHE_DIR"); d && *d) {
    dir = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = fs::path(x) / "engine";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = fs::path(h) / ".cache" / "engine";
  } else {
    return "";
  }
  return (dir / "device_peaks.tsv").string();
}

MeasuredPeaks cached_peaks(const std::string& raw_key, const std::function<MeasuredPeaks()>& measure,
                           const std::string& path) {
  if (path.empty()) return measure();
  const std::string key = clean_key(raw_key);
  const char* again = std::getenv("ENGINE_REMEASURE_PEAKS");
  const bool remeasure = again && *again && std::string(again) != "0";
  int dropped = 0;
  std::vector<Entry> entries = read_cache(path, dropped);
  if (dropped > 0)
    spdlog::warn("{}: {} malformed line(s) dropped; their devices are measured again", path, dropped);
  if (!remeasure) {
    for (const Entry& e : entries)
      if (e.key == key) {
        spdlog::debug("peaks of '{}' from {} (measured {})", key, path, e.measured_at);
        return e.peaks;
      }
  }
  const MeasuredPeaks peaks = measure();
  std::string text = "# device peaks measured by the engine (core/peaks_cache.h); delete a line to measure again\n";
  for (const Entry& e : entries)
    if (e.key != key) text += format_line(e);
  text += format_line({key, peaks, utc_now()});
  try {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    write_file_atomically(path, text.data(), text.size());
  } catch (const std::exception& e) {  // a read-only home, a full disk: the peaks still stand
    spdlog::warn("could not cache the device peaks in {}: {}", path, e.what());
  }
  return peaks;
}

MeasuredPeaks cached_peaks(DeviceServices& device) {
  return cached_peaks(device.name(), [&] { return device.measure_peaks(); }, peaks_cache_path());
}

}  // namespace engine
