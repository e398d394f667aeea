// The files a sweep app writes (apps/matmul_sweep, apps/crossover): a CSV, a gnuplot script
// that holds its own data (it plots anywhere, without the CSV) and the images gnuplot makes
// from it, next to the script, when gnuplot is on PATH.
// The CSV and the script are written whole, atomically (apps/common/app_options.h,
// write_text_file).
#pragma once
#include <string>

namespace engine::apps {

// Makes the folder `path` goes in, and the folders above it, where missing; throws
// engine::Error naming the folder and the system's reason.
void make_folder_of(const std::string& path);

// Before a sweep measures anything: makes the CSV's folder and checks (check_outputs) that the
// CSV, the gnuplot script beside it (with_extension ".gp") and `json_path`, when not empty, can
// be written.
void check_sweep_outputs(const std::string& csv_path, const std::string& json_path);

// `path` with its extension replaced: ("out/x.csv", ".gp") -> "out/x.gp".
std::string with_extension(const std::string& path, const std::string& extension);

// The gnuplot line that selects an output format: "png" (pngcairo where gnuplot has it, its
// plain png terminal otherwise) or "svg", at `size` pixels ("1200,800").
std::string gnuplot_terminal(const std::string& format, const std::string& size);

// Runs gnuplot on `script` in the script's folder, so that the images land next to it.
// Returns true when the images were made; otherwise prints one "Plot: ..." line saying why not
// (--no-plot, gnuplot not on PATH, gnuplot failed) and how to make them.
bool run_gnuplot(const std::string& script, bool no_plot);

}  // namespace engine::apps
