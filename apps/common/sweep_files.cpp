#include "apps/common/sweep_files.h"

#include <unistd.h>  // access

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "apps/common/app_options.h"
#include "core/error.h"

namespace fs = std::filesystem;

namespace engine::apps {
namespace {

// The full path of `program` if an executable of that name is on PATH.
std::optional<fs::path> find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

}  // namespace

void make_folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  std::error_code error;
  if (!parent.empty()) fs::create_directories(parent, error);
  ENGINE_CHECK(!error, path, ": cannot make its folder ", parent.string(), " (", error.message(),
               ")");
}

void check_sweep_outputs(const std::string& csv_path, const std::string& json_path) {
  make_folder_of(csv_path);
  check_outputs({csv_path, with_extension(csv_path, ".gp"), json_path});
}

std::string with_extension(const std::string& path, const std::string& extension) {
  return fs::path(path).replace_extension(extension).string();
}

std::string gnuplot_terminal(const std::string& format, const std::string& size) {
  if (format == "svg") return "set terminal svg size " + size + " dynamic font ',10'";
  return "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size " + size +
         " font ',10' } else { set terminal png size " + size + " }";
}

bool run_gnuplot(const std::string& script, bool no_plot) {
  const fs::path dir = fs::absolute(script).parent_path();
  const std::string name = fs::path(script).filename().string();
  if (no_plot) {
    std::printf("Plot: --no-plot; the script is %s (run: cd %s && gnuplot %s)\n", script.c_str(),
                dir.c_str(), name.c_str());
    return false;
  }
  const std::optional<fs::path> gnuplot = find_on_path("gnuplot");
  if (!gnuplot) {
    std::printf("Plot: gnuplot is not on PATH, so no images were made; the script %s holds the "
                "data: run `gnuplot %s` in %s on a machine that has gnuplot\n",
                script.c_str(), name.c_str(), dir.c_str());
    return false;
  }
  // gnuplot's warnings (a font it lacks, an empty range) go to a log beside the script, not
  // into the app's output; a line says where when there are any.
  const fs::path log = fs::path(with_extension((dir / name).string(), ".gnuplot.log"));
  const std::string command = "cd '" + dir.string() + "' && '" + gnuplot->string() + "' '" + name +
                              "' 2> '" + log.filename().string() + "'";
  const int status = std::system(command.c_str());
  std::error_code error;
  const bool said_something = fs::exists(log, error) && fs::file_size(log, error) > 0;
  if (status != 0) {
    std::printf("Plot: gnuplot failed (status %d) on %s; its messages: %s\n", status,
                script.c_str(), log.c_str());
    return false;
  }
  if (said_something) {
    std::printf("Plot: gnuplot's warnings are in %s\n", log.c_str());
  } else {
    fs::remove(log, error);
  }
  return true;
}

}  // namespace engine::apps
