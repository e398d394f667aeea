// The benchmark report of apps/bench: plain data in (what was measured, on what machine, what
// the articles published, which commands ran), Markdown, gnuplot scripts and their data out.
// Kept apart from the driver that runs the apps, so that a test can write a report from a
// result set made by hand.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace engine::bench {

// A time in the report, or why there is none. `detail` says how the time was measured
// ("median of epochs 2-3", "median step x 469 steps") or, without a time, why there is none
// ("failed (exit 1): ...; log: work/logs/x.log", "not installed").
struct Measure {
  std::optional<double> seconds;
  std::string detail;
};

// A time an article published, where it came from, and on what.
struct Published {
  double seconds = 0.0;  // in the experiment's metric (a total over 10 epochs becomes per epoch)
  std::string hardware;  // "i5-6200U"; "not stated"
  std::string quote;     // what the article says: "52.4 s for 10 epochs + evaluate"
  std::string source;    // the article it comes from: "docs/SOURCES.md, article 000"
};

// One line of an experiment's table: one case (a model, a size) on one of our devices.
struct Row {
  std::string label;   // the case: "small model", "n = 10^6"; empty when there is one case
  std::string device;  // cpu, gpu (our kernels) or cudnn (cuBLAS + cuDNN)
  Measure ours;
  Measure pytorch;     // PyTorch on the same kind of device: cpu, or cuda for gpu and cudnn
  std::vector<Published> article;  // the article's figures for this kind of device; none: "—"
  // PyTorch at its best on cuda: the whole step captured as one CUDA graph and replayed, the
  // fused (or foreach) capturable optimizer, cudnn.benchmark, channels_last (the scripts'
  // --graphed). None on the CPU, where there is no such mode.
  Measure pytorch_best{};
};

struct Experiment {
  std::string title;    // "MNIST MLP (seed 000)"
  std::string metric;   // "seconds per epoch"
  std::string setting;  // what was run, in words
  std::vector<Row> rows;
  std::vector<std::string> notes;  // bullets under the table (data used, crossovers found)
  bool in_epoch_plot = false;      // its rows go into the time-per-epoch plot
};

// One command the bench ran, and how it ended.
struct ChildRecord {
  std::string name;     // "mnist_mlp small, cpu"
  std::string command;  // the whole command line
  std::string outcome;  // "ok", "failed (exit 1)", "timed out after 60 s", "not run: ..."
  double seconds = 0.0;
  std::string log;      // its stdout and stderr
};

// A gnuplot script in the plots folder and the images it draws there (file names).
struct Plot {
  std::string title;
  std::string script;
  std::vector<std::string> images;  // the PNGs; each has an SVG beside it
};

struct Report {
  std::string setting;      // "default", "--full", "--quick", and what it means
  std::string date;         // UTC, ISO 8601
  double wall_seconds = 0.0;
  std::vector<std::pair<std::string, std::string>> machine;  // the hardware fingerprint
  std::vector<std::string> not_measured;  // whole devices or tools left out, and why
  std::vector<Experiment> experiments;
  std::vector<Plot> plots;  // the apps' own plot scripts (the time-per-epoch plot is added)
  std::vector<ChildRecord> children;
};

// "0.0843 s", "1.23 ms", "526 s": three significant digits in a readable unit.
std::string format_seconds(double seconds);

// How `ours` compares with `other` (their time over ours): "4.6x faster", "2.1x slower",
// "same" within 5%.
std::string speed_ratio(double ours, double other);

// Where the report's files went and whether the images were drawn.
struct ReportFiles {
  std::string markdown;
  std::vector<std::string> scripts;  // every .gp in the plots folder the report links
  bool images_drawn = false;
};

// Writes the time-per-epoch plot's data and script into `plots_dir`, runs gnuplot there on it
// and on `report.plots` (when `draw` and gnuplot is on PATH), then writes the Markdown to
// `markdown_path`, linking the images relative to it; without images it says how to draw them.
ReportFiles write_report(const Report& report, const std::string& markdown_path,
                         const std::string& plots_dir, bool draw);

// Before the bench runs anything: makes the folders of the report and of the plots and checks
// (apps::check_outputs) that write_report could write the report and its time-per-epoch plot's
// files there; throws engine::Error naming the path and why.
void check_report_outputs(const std::string& markdown_path, const std::string& plots_dir);

}  // namespace engine::bench
