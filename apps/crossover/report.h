// What apps/crossover makes of its measurements: each GPU time's regime, the crossovers, the
// table on stdout, the CSV, the gnuplot script and the --json record's rows.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "apps/common/crossover_analysis.h"
#include "apps/crossover/workload.h"

namespace engine::crossover {

// One measurement: a workload at one size on one device ("cpu", "gpu", "cudnn") in one variant.
struct Row {
  std::string workload, size_name;
  int64_t size = 0;
  std::string device;
  Variant variant = Variant::Cpu;
  std::string timer;
  apps::Spread ms;  // per step
  int64_t steps_per_sample = 0;
  int64_t launches = 0;  // kernels per step (the graph's count, for every GPU variant)
  // Filled by classify(): the part of the step the copies add (Copies: its time minus
  // Resident's), the CPU's time over this one, and the regime.
  double transfer_ms = 0.0;
  double cpu_over_this = 0.0;
  apps::Regime regime = apps::Regime::Unknown;
};

// Classifies the GPU rows of one workload at one size (apps::classify_regime) against the
// measured launch floor: the copies' share from Copies minus Resident, the launch count from
// the recorded graph, what a replay saves from Resident minus Graph; fills cpu_over_this
// where the CPU was measured.
void classify(std::vector<Row>& rows_of_size, double launch_floor_seconds);

// A GPU curve's crossover with the CPU curve of the same workload.
struct Found {
  std::string workload, size_name, device;
  Variant variant;
  apps::Crossover x;
  std::string regimes;  // the curve's regimes by size (apps::regime_runs)
};
std::vector<Found> find_crossovers(const std::vector<Row>& rows);

// The table: a header per workload, then one line per size and GPU device (ms per step, the
// CPU's time over each variant's, each variant's regime), printed as each size completes.
void print_table_header(const Workload& workload, const std::vector<std::string>& gpu_devices);
void print_size(const std::vector<Row>& rows_of_size, const std::vector<std::string>& gpu_devices);
void print_crossovers(const std::vector<Found>& found);

void write_csv(const std::string& path, const std::vector<Row>& rows);
// A script that holds the curves and draws one log-log panel per workload with the crossovers
// marked; `comments` (the machine) go at its top.
void write_gnuplot(const std::string& path, const std::vector<Row>& rows,
                   const std::vector<Found>& found, const std::vector<std::string>& comments);
nlohmann::json rows_json(const std::vector<Row>& rows);
nlohmann::json crossovers_json(const std::vector<Found>& found);

}  // namespace engine::crossover
