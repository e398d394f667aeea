#include "apps/crossover/report.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "apps/common/app_options.h"
#include "apps/common/sweep_files.h"

namespace engine::crossover {
namespace {

// The row of `device` and `variant` among `rows` (const or not), or nullptr.
template <typename Rows>
auto find_row(Rows& rows, const std::string& device, Variant variant) -> decltype(&rows.front()) {
  for (auto& r : rows) {
    if (r.device == device && r.variant == variant) return &r;
  }
  return nullptr;
}

const Row* cpu_row_at(const std::vector<Row>& rows, int64_t size) {
  for (const Row& r : rows) {
    if (r.variant == Variant::Cpu && r.size == size) return &r;
  }
  return nullptr;
}

// The workloads in the order they were measured, each with its rows.
std::vector<std::pair<std::string, std::vector<Row>>> by_workload(const std::vector<Row>& rows) {
  std::vector<std::pair<std::string, std::vector<Row>>> groups;
  for (const Row& r : rows) {
    if (groups.empty() || groups.back().first != r.workload) groups.push_back({r.workload, {}});
    groups.back().second.push_back(r);
  }
  return groups;
}

// The devices other than the CPU among `rows`, in order of appearance.
std::vector<std::string> gpu_devices_of(const std::vector<Row>& rows) {
  std::vector<std::string> devices;
  for (const Row& r : rows) {
    if (r.device != "cpu" && std::find(devices.begin(), devices.end(), r.device) == devices.end()) {
      devices.push_back(r.device);
    }
  }
  return devices;
}

const char* variant_color(Variant variant) {
  switch (variant) {
    case Variant::Cpu: return "#1f77b4";
    case Variant::Copies: return "#ff7f0e";
    case Variant::Resident: return "#d62728";
    case Variant::Graph: return "#2ca02c";
  }
  return "#000000";
}

std::string curve_name(const std::string& device, Variant variant) {
  return variant == Variant::Cpu ? "cpu" : device + " " + to_string(variant);
}

std::string block_name(const std::string& workload, const std::string& device, Variant variant) {
  return "$" + workload + "_" + device + "_" + to_string(variant);
}

// One panel per workload and GPU device: the CPU's curve and that device's three (copies,
// resident, graph), and a dashed vertical line at each of its crossovers. Four curves, not
// seven: the cuDNN variant gets a panel of its own beside the engine's.
void write_panel(std::ostream& gp, const std::string& workload, const std::string& device,
                 const std::vector<Row>& rows, const std::vector<Found>& found) {
  // A run without a GPU has one panel per workload, the CPU's curve alone.
  const std::string title = device == "cpu" ? workload : workload + ": cpu vs " + device;
  gp << "set title '" << title << "'\nset xlabel '"
     << rows.front().size_name << "'\nset ylabel 'ms per step'\n";
  int mark = 1;
  for (const Found& f : found) {
    if (f.workload != workload || f.device != device || !f.x.last_behind) continue;
    const char* color = variant_color(f.variant);
    gp << "set arrow " << mark << " from " << f.x.estimate << ", graph 0 to " << f.x.estimate
       << ", graph 1 nohead dt 2 lw 1.5 lc rgb '" << color << "'\n";
    // The labels in the bottom-right corner, clear of the key and of each other.
    char text[96];
    std::snprintf(text, sizeof text, "%s overtakes cpu at ~%.3g", curve_name(f.device, f.variant).c_str(),
                  f.x.estimate);
    gp << "set label " << mark << " '" << text << "' at graph 0.98, graph " << 0.06 * mark
       << " right tc rgb '" << color << "'\n";
    ++mark;
  }
  std::vector<std::pair<std::string, Variant>> curves = {{"cpu", Variant::Cpu}};
  if (device != "cpu") {
    for (const Variant v : GPU_VARIANTS) curves.push_back({device, v});
  }
  std::string plots;
  for (const auto& [curve_device, variant] : curves) {
    if (!find_row(rows, curve_device, variant)) continue;
    if (!plots.empty()) plots += ", \\\n     ";
    plots += block_name(workload, curve_device, variant) +
             " using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '" + variant_color(variant) +
             "' title '" + curve_name(curve_device, variant) + "'";
  }
  gp << "plot " << plots << "\nunset arrow\nunset label\n";
}

}  // namespace

void classify(std::vector<Row>& rows, double launch_floor_seconds) {
  const Row* cpu = find_row(rows, "cpu", Variant::Cpu);
  for (const std::string& device : gpu_devices_of(rows)) {
    const Row* resident = find_row(rows, device, Variant::Resident);
    const Row* graph = find_row(rows, device, Variant::Graph);
    for (Row& r : rows) {
      if (r.device != device) continue;
      r.launches = graph ? graph->launches : 0;
      if (r.variant == Variant::Copies && resident) r.transfer_ms = std::max(0.0, r.ms.median - resident->ms.median);
      // What a replay saves on the op-by-op step (the copies' rest is the resident step).
      const double removable_ms = r.variant != Variant::Graph && resident && graph
                                      ? std::max(0.0, resident->ms.median - graph->ms.median)
                                      : 0.0;
      r.regime = apps::classify_regime(r.ms.median * 1e-3, r.transfer_ms * 1e-3, r.launches,
                                       launch_floor_seconds, removable_ms * 1e-3);
      if (cpu) r.cpu_over_this = cpu->ms.median / r.ms.median;
    }
  }
}

std::vector<Found> find_crossovers(const std::vector<Row>& rows) {
  std::vector<Found> found;
  for (const auto& [workload, group] : by_workload(rows)) {
    for (const std::string& device : gpu_devices_of(group)) {
      for (const Variant v : GPU_VARIANTS) {
        std::vector<apps::SizeTimes> points;
        std::vector<int64_t> sizes;
        std::vector<apps::Regime> regimes;
        for (const Row& r : group) {
          if (r.device != device || r.variant != v) continue;
          sizes.push_back(r.size);
          regimes.push_back(r.regime);
          if (const Row* cpu = cpu_row_at(group, r.size)) points.push_back({r.size, cpu->ms.median, r.ms.median});
        }
        if (points.empty()) continue;  // no CPU curve in this run: nothing to cross
        found.push_back({workload, group.front().size_name, device, v, apps::find_crossover(points),
                         apps::regime_runs(sizes, regimes)});
      }
    }
  }
  return found;
}

void print_table_header(const Workload& workload, const std::vector<std::string>& gpu_devices) {
  std::printf("\n== %s (%s): %s\n", workload.name().c_str(), workload.size_name().c_str(),
              workload.description().c_str());
  std::printf("%9s %11s", workload.size_name().c_str(), "cpu ms");
  if (!gpu_devices.empty()) {
    std::printf("  %-6s", "device");
    for (const Variant v : GPU_VARIANTS) {
      std::printf(" | %13s %7s %-8s", (std::string(to_string(v)) + " ms").c_str(), "cpu/it", "regime");
    }
  }
  std::printf("\n");
}

void print_size(const std::vector<Row>& rows, const std::vector<std::string>& gpu_devices) {
  const Row* cpu = find_row(rows, "cpu", Variant::Cpu);
  char cpu_ms[32] = "-";
  if (cpu) std::snprintf(cpu_ms, sizeof cpu_ms, "%.4g", cpu->ms.median);
  const int64_t size = rows.front().size;
  if (gpu_devices.empty()) std::printf("%9lld %11s\n", static_cast<long long>(size), cpu_ms);
  for (const std::string& device : gpu_devices) {
    std::printf("%9lld %11s  %-6s", static_cast<long long>(size), cpu_ms, device.c_str());
    for (const Variant v : GPU_VARIANTS) {
      const Row* r = find_row(rows, device, v);
      if (!r) {
        std::printf(" | %13s %7s %-8s", "-", "", "");
        continue;
      }
      char ratio[32] = "";
      if (r->cpu_over_this > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", r->cpu_over_this);
      std::printf(" | %13.4g %7s %-8s", r->ms.median, ratio, apps::to_string(r->regime));
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

void print_crossovers(const std::vector<Found>& found) {
  std::printf("\nWhere the GPU overtakes the CPU (and what bounds the GPU's time, by size):\n");
  if (found.empty()) std::printf("  (needs the cpu and a GPU device in the same run)\n");
  for (const Found& f : found) {
    const std::string what = f.workload + ", " + curve_name(f.device, f.variant);
    std::printf("  %-26s %s\n", (what + ":").c_str(), apps::describe(f.x, f.size_name).c_str());
    std::printf("  %-26s regimes: %s\n", "", f.regimes.c_str());
  }
}

void write_csv(const std::string& path, const std::vector<Row>& rows) {
  std::ostringstream out;
  out << "workload,size_name,size,device,variant,timer,median_ms,min_ms,max_ms,samples,"
         "steps_per_sample,launches,transfer_ms,cpu_over_this,regime\n";
  for (const Row& r : rows) {
    out << r.workload << ',' << r.size_name << ',' << r.size << ',' << r.device << ','
        << to_string(r.variant) << ',' << r.timer << ',' << r.ms.median << ',' << r.ms.min << ','
        << r.ms.max << ',' << r.ms.count << ',' << r.steps_per_sample << ',' << r.launches << ','
        << r.transfer_ms << ',' << r.cpu_over_this << ','
        << (r.variant == Variant::Cpu ? "" : apps::to_string(r.regime)) << '\n';
  }
  apps::write_text_file(path, out.str());
}

void write_gnuplot(const std::string& path, const std::vector<Row>& rows,
                   const std::vector<Found>& found, const std::vector<std::string>& comments) {
  std::ostringstream gp;
  const std::string stem = std::filesystem::path(path).stem().string();
  gp << "# apps/crossover: time per step of each workload, CPU and GPU variants, log-log; a\n"
        "# dashed line where a GPU curve crosses below the CPU's for good.\n";
  for (const std::string& line : comments) gp << "# " << line << "\n";
  gp << "# Run in this folder: gnuplot " << std::filesystem::path(path).filename().string() << "  -> "
     << stem << ".png, " << stem << ".svg\n\n";
  for (const auto& [workload, group] : by_workload(rows)) {
    std::map<std::string, std::ostringstream> blocks;
    for (const Row& r : group) {
      blocks[block_name(workload, r.device, r.variant)] << r.size << ' ' << r.ms.median << '\n';
    }
    for (const auto& [name, data] : blocks) gp << name << " << EOD\n" << data.str() << "EOD\n";
  }
  // A row of panels per workload, a column per GPU device.
  const auto groups = by_workload(rows);
  std::vector<std::string> devices = gpu_devices_of(rows);
  if (devices.empty()) devices = {"cpu"};
  const size_t columns = devices.size(), lines = groups.size();
  const std::string size = std::to_string(700 * columns) + "," + std::to_string(440 * lines);
  // reset: `gnuplot *.gp` runs every script in one session, where another's settings linger.
  gp << "\nreset\nset logscale x 2\nset logscale y 10\nset format x '%g'\nset format y '%g'\n"
        "set grid\nset key top left\n";
  for (const char* format : {"png", "svg"}) {
    gp << apps::gnuplot_terminal(format, size) << "\nset termoption noenhanced\n";
    gp << "set output '" << stem << "." << format << "'\n";
    gp << "set multiplot layout " << lines << "," << columns
       << " title 'CPU vs GPU, median time per step (log-log)'\n";
    for (const auto& [workload, group] : groups) {
      for (const std::string& device : devices) write_panel(gp, workload, device, group, found);
    }
    gp << "unset multiplot\nset output\n";
  }
  apps::write_text_file(path, gp.str());
}

nlohmann::json rows_json(const std::vector<Row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) {
    out.push_back({{"workload", r.workload}, {"size", r.size}, {"device", r.device},
                   {"variant", to_string(r.variant)}, {"timer", r.timer},
                   {"median_ms", r.ms.median}, {"min_ms", r.ms.min}, {"max_ms", r.ms.max},
                   {"samples", r.ms.count}, {"steps_per_sample", r.steps_per_sample},
                   {"launches", r.launches}, {"transfer_ms", r.transfer_ms},
                   {"cpu_over_this", r.cpu_over_this},
                   {"regime", r.variant == Variant::Cpu ? "" : apps::to_string(r.regime)}});
  }
  return out;
}

nlohmann::json crossovers_json(const std::vector<Found>& found) {
  nlohmann::json out = nlohmann::json::array();
  for (const Found& f : found) {
    nlohmann::json x = apps::to_json(f.x, f.size_name);
    x["workload"] = f.workload;
    x["device"] = f.device;
    x["variant"] = to_string(f.variant);
    x["regimes"] = f.regimes;
    out.push_back(x);
  }
  return out;
}

}  // namespace engine::crossover
