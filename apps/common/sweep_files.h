// The files a sweep app writes (apps/matmul_sweep, apps/crossover): a CSV, a gnuplot script
// that holds its own data (it plots anywhere, without the CSV) and the images gnuplot makes
// from it, next to the script, when gnuplot is on PATH.
#pragma once
#include <fstream>
#include <string>

namespace engine::apps {

// Opens `path` for writing, creating its folder; throws engine::Error when it cannot.
std::ofstream create_file(const std::string& path);

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
