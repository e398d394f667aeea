#include "apps/common/bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "apps/common/app_options.h"
#include "apps/common/sweep_files.h"

namespace fs = std::filesystem;

namespace engine::bench {
namespace {

constexpr const char* EPOCH_PLOT = "epoch_seconds";

// The series of the time-per-epoch plot, in the order of its bars, with their colours.
struct Series {
  const char* title;
  const char* device;           // the row's device
  Measure Row::*measure;        // which of the row's times
  const char* colour;
};
constexpr Series EPOCH_SERIES[] = {
    {"ours cpu", "cpu", &Row::ours, "#1f77b4"},
    {"ours gpu", "gpu", &Row::ours, "#d62728"},
    {"ours cudnn", "cudnn", &Row::ours, "#2ca02c"},
    {"PyTorch cpu", "cpu", &Row::pytorch, "#aec7e8"},
    {"PyTorch cuda", "gpu", &Row::pytorch, "#ff9896"},
    {"PyTorch cuda, graphed", "gpu", &Row::pytorch_best, "#9467bd"},
};

// A Markdown table cell: no line breaks, no column separators.
std::string cell(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::string out;
  for (const char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string printf_string(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// The value of a measure, or why there is none.
std::string show(const Measure& m) {
  return m.seconds ? format_seconds(*m.seconds) : m.detail.empty() ? "—" : m.detail;
}

// The published figures of a row in the table's metric, "320 s (i5-8250u); 36 s (i7-9700k)".
std::string show_article(const std::vector<Published>& figures) {
  if (figures.empty()) return "—";
  std::string out;
  for (const Published& p : figures) {
    if (!out.empty()) out += "; ";
    out += format_seconds(p.seconds) + " (" + p.hardware + ")";
  }
  return out;
}

// --quick times a few steps: an epoch estimated from them is no yardstick for an article's
// figure, so --quick shows none of those ratios.
std::string show_article_ratios(const Row& row, bool quick) {
  if (quick && !row.article.empty()) return "— (--quick)";
  if (row.article.empty() || !row.ours.seconds) return "—";
  std::string out;
  for (const Published& p : row.article) {
    if (!out.empty()) out += "; ";
    out += speed_ratio(*row.ours.seconds, p.seconds);
  }
  return out;
}

// Our CPU's time for the same case, the yardstick of the "vs our cpu" column.
const Measure* our_cpu(const Experiment& e, const Row& row) {
  for (const Row& r : e.rows) {
    if (r.label == row.label && r.device == "cpu") return &r.ours;
  }
  return nullptr;
}

bool has_labels(const Experiment& e) {
  return std::any_of(e.rows.begin(), e.rows.end(), [](const Row& r) { return !r.label.empty(); });
}

void write_table(std::ostream& md, const Experiment& e, bool quick) {
  const bool labels = has_labels(e);
  md << "| " << (labels ? "case | " : "") << "device | ours | vs our cpu | PyTorch eager | ours vs eager "
     << "| PyTorch at its best | ours vs best | article | ours vs article |\n|" << (labels ? "---|" : "")
     << "---|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const Row& r : e.rows) {
    const Measure* cpu = our_cpu(e, r);
    std::string vs_cpu = "—";
    if (r.device != "cpu" && cpu && cpu->seconds && r.ours.seconds) {
      vs_cpu = speed_ratio(*r.ours.seconds, *cpu->seconds);
    }
    const auto vs = [&r](const Measure& theirs) {
      return r.ours.seconds && theirs.seconds ? speed_ratio(*r.ours.seconds, *theirs.seconds) : "—";
    };
    md << "| " << (labels ? cell(r.label) + " | " : "") << r.device << " | " << cell(show(r.ours))
       << " | " << vs_cpu << " | " << cell(show(r.pytorch)) << " | " << vs(r.pytorch) << " | "
       << cell(show(r.pytorch_best)) << " | " << vs(r.pytorch_best) << " | "
       << cell(show_article(r.article)) << " | " << show_article_ratios(r, quick) << " |\n";
  }
}

// Under the table: how each time was measured, then where each published figure comes from.
void write_details(std::ostream& md, const Experiment& e) {
  std::vector<std::string> how, sources;  // sources: each published figure once, in table order
  for (const Row& r : e.rows) {
    const std::string what = (r.label.empty() ? "" : r.label + ", ") + r.device;
    if (r.ours.seconds && !r.ours.detail.empty()) how.push_back(what + ": " + r.ours.detail);
    if (r.pytorch.seconds && !r.pytorch.detail.empty()) {
      how.push_back(what + ", PyTorch: " + r.pytorch.detail);
    }
    if (r.pytorch_best.seconds && !r.pytorch_best.detail.empty()) {
      how.push_back(what + ", PyTorch at its best: " + r.pytorch_best.detail);
    }
    for (const Published& p : r.article) {
      const std::string line = p.quote + " on " + p.hardware + ": `" + p.source + "`";
      if (std::find(sources.begin(), sources.end(), line) == sources.end()) sources.push_back(line);
    }
  }
  if (!how.empty()) {
    md << "\nMeasured as:\n";
    for (const std::string& line : how) md << "- " << line << "\n";
  }
  if (!sources.empty()) {
    md << "\nThe article's figures (docs/SOURCES.md describes each article):\n";
    for (const std::string& line : sources) md << "- " << line << "\n";
  }
  if (!e.notes.empty()) md << "\n";
  for (const std::string& note : e.notes) md << "- " << note << "\n";
}

// The rows that go into the time-per-epoch plot: one line per case, a column per series.
struct EpochBar {
  std::string name;
  std::vector<std::optional<double>> seconds;  // one per EPOCH_SERIES
};

std::vector<EpochBar> epoch_bars(const Report& report) {
  std::vector<EpochBar> bars;
  for (const Experiment& e : report.experiments) {
    if (!e.in_epoch_plot) continue;
    for (const Row& r : e.rows) {
      // Two lines under the bars (gnuplot reads "\n" in a quoted data string as a line break):
      // one long line ran past the picture's right edge.
      const std::string name = e.title + (r.label.empty() ? "" : "\\n" + r.label);
      auto it = std::find_if(bars.begin(), bars.end(), [&](const EpochBar& b) { return b.name == name; });
      if (it == bars.end()) {
        bars.push_back({name, std::vector<std::optional<double>>(std::size(EPOCH_SERIES))});
        it = bars.end() - 1;
      }
      for (size_t s = 0; s < std::size(EPOCH_SERIES); ++s) {
        if (r.device != EPOCH_SERIES[s].device) continue;
        const Measure& m = r.*EPOCH_SERIES[s].measure;
        if (m.seconds) it->seconds[s] = m.seconds;
      }
    }
  }
  // A case with no time at all would leave a gap; with none anywhere, gnuplot refuses to plot.
  bars.erase(std::remove_if(bars.begin(), bars.end(), [](const EpochBar& b) {
               return std::none_of(b.seconds.begin(), b.seconds.end(), [](const auto& v) { return v.has_value(); });
             }),
             bars.end());
  return bars;
}

// epoch_seconds.dat (a header line, then a quoted name and a time or NaN per series) and the
// script that draws it as grouped bars on a log axis. Returns the plot, or none without bars.
std::optional<Plot> write_epoch_plot(const Report& report, const fs::path& dir) {
  const std::vector<EpochBar> bars = epoch_bars(report);
  if (bars.empty()) return std::nullopt;
  const std::string data = std::string(EPOCH_PLOT) + ".dat";
  std::ostringstream dat;
  dat << "\"case\"";
  for (const Series& s : EPOCH_SERIES) dat << " \"" << s.title << "\"";
  dat << "\n";
  for (const EpochBar& b : bars) {
    dat << '"' << b.name << '"';
    for (const std::optional<double>& v : b.seconds) dat << ' ' << (v ? printf_string("%.6g", *v) : "NaN");
    dat << "\n";
  }
  apps::write_text_file((dir / data).string(), dat.str());

  const std::string script = std::string(EPOCH_PLOT) + ".gp";
  std::ostringstream gp;
  gp << "# apps/bench: seconds per epoch of every training experiment by device (" << report.setting
     << ", " << report.date << ").\n# Run in this folder: gnuplot " << script << "\n";
  for (const auto& [key, value] : report.machine) gp << "# " << key << ": " << value << "\n";
  // reset: `gnuplot *.gp` runs every script in one session, where another's settings linger
  // (the crossover plot's log-scaled x breaks a histogram).
  gp << "reset\nset style data histograms\nset style histogram clustered gap 1\n"
     << "set style fill solid 0.85 border -1\nset logscale y\nset grid ytics\nset key top left\n"
     << "set ylabel 'seconds per epoch (log scale)'\nset xtics noenhanced rotate by -20\n"
     << "set title 'Time per epoch by device'\nset bmargin 6\n";
  // A series: its column of the data file (gnuplot refuses a histogram of one with no number).
  std::string plot;
  for (size_t s = 0; s < std::size(EPOCH_SERIES); ++s) {
    if (std::none_of(bars.begin(), bars.end(), [&](const EpochBar& b) { return b.seconds[s].has_value(); })) {
      continue;
    }
    const std::string column = std::to_string(s + 2);
    plot += (plot.empty() ? "plot '" + data + "' using " + column + ":xtic(1)" : ", \\\n     '' using " + column) +
            " title columnheader(" + column + ") lc rgb '" + EPOCH_SERIES[s].colour + "'";
  }
  for (const char* format : {"png", "svg"}) {
    gp << apps::gnuplot_terminal(format, "1100,560") << "\nset output '" << EPOCH_PLOT << "." << format
       << "'\n" << plot << "\nset output\n";
  }
  apps::write_text_file((dir / script).string(), gp.str());
  return Plot{"Time per epoch by device", script, {std::string(EPOCH_PLOT) + ".png"}};
}

// The images are linked drawn or not: where gnuplot is missing (the GPU machine), running the
// scripts elsewhere in the same folder makes the links good.
void write_plot_links(std::ostream& md, const Plot& plot, const fs::path& relative_dir, bool drawn) {
  md << "\n**" << plot.title << "** (`" << (relative_dir / plot.script).generic_string() << "`"
     << (drawn ? "" : "; not drawn here") << "):\n\n";
  for (const std::string& image : plot.images) {
    const std::string png = (relative_dir / image).generic_string();
    const std::string svg = (relative_dir / fs::path(image).replace_extension(".svg")).generic_string();
    md << "![" << plot.title << "](" << png << ") ([SVG](" << svg << "))\n";
  }
}

void write_children(std::ostream& md, const Report& report) {
  md << "\n## What was run\n\nEvery command, in order, with how it ended; its output is in the log.\n\n"
     << "| # | run | command | outcome | seconds | log |\n|---:|---|---|---|---:|---|\n";
  int n = 0;
  for (const ChildRecord& c : report.children) {
    md << "| " << ++n << " | " << cell(c.name) << " | `" << cell(c.command) << "` | "
       << cell(c.outcome) << " | " << printf_string("%.1f", c.seconds) << " | `" << cell(c.log)
       << "` |\n";
  }
}

}  // namespace

std::string format_seconds(double seconds) {
  const double a = std::fabs(seconds);
  if (a >= 100.0) return printf_string("%.0f s", seconds);
  if (a >= 1.0) return printf_string("%.3g s", seconds);
  if (a >= 1e-3) return printf_string("%.3g ms", seconds * 1e3);
  return printf_string("%.3g µs", seconds * 1e6);
}

std::string speed_ratio(double ours, double other) {
  if (!(ours > 0.0) || !(other > 0.0)) return "—";
  const double r = other / ours;
  if (r >= 0.95 && r <= 1.05) return "same";
  const double x = r > 1.0 ? r : 1.0 / r;
  return printf_string(x >= 100.0 ? "%.0f" : "%.3g", x) + "x " + (r > 1.0 ? "faster" : "slower");
}

ReportFiles write_report(const Report& report, const std::string& markdown_path,
                         const std::string& plots_dir, bool draw) {
  ReportFiles files;
  files.markdown = markdown_path;
  const fs::path dir = fs::absolute(plots_dir);
  fs::create_directories(dir);
  std::vector<Plot> plots;
  if (std::optional<Plot> epoch = write_epoch_plot(report, dir)) plots.push_back(*epoch);
  plots.insert(plots.end(), report.plots.begin(), report.plots.end());
  std::vector<bool> drawn;  // per plot: only the images gnuplot made are linked
  for (const Plot& p : plots) {
    files.scripts.push_back((dir / p.script).string());
    drawn.push_back(apps::run_gnuplot((dir / p.script).string(), !draw));
  }
  files.images_drawn = !plots.empty() && std::find(drawn.begin(), drawn.end(), false) == drawn.end();

  const fs::path md_dir = fs::absolute(markdown_path).parent_path();
  const fs::path relative = fs::relative(dir, md_dir);
  std::ostringstream md;
  md << "# Benchmark report\n\nWritten by `apps/bench` on " << report.date << ": " << report.setting
     << "; " << printf_string("%.0f", report.wall_seconds) << " s in all. Times are medians (how each "
     << "was measured is listed under its table); \"4x faster\" means the other took 4 times as long. "
     << "The articles ran on other, older hardware: their ratios say how far hardware and software "
     << "have come, not who wins on the same machine.\n";
  md << "\n## Machine\n\n| | |\n|---|---|\n";
  for (const auto& [key, value] : report.machine) md << "| " << cell(key) << " | " << cell(value) << " |\n";
  if (!report.not_measured.empty()) {
    md << "\nNot measured:\n";
    for (const std::string& line : report.not_measured) md << "- " << line << "\n";
  }
  md << "\n## Plots\n";
  if (!files.images_drawn) {
    md << "\nplots: run `gnuplot *.gp` in " << relative.generic_string()
       << " (the scripts hold or read their data there; not all of them were drawn here, and their "
       << "links below work once they are)\n";
  }
  for (size_t i = 0; i < plots.size(); ++i) write_plot_links(md, plots[i], relative, drawn[i]);
  for (const Experiment& e : report.experiments) {
    md << "\n## " << e.title << "\n\n" << e.metric << "; " << e.setting << "\n\n";
    if (!e.rows.empty()) write_table(md, e, report.setting.rfind("--quick", 0) == 0);
    write_details(md, e);
  }
  write_children(md, report);

  apps::make_folder_of(markdown_path);
  apps::write_text_file(markdown_path, md.str());
  return files;
}

void check_report_outputs(const std::string& markdown_path, const std::string& plots_dir) {
  const fs::path epoch_plot = fs::path(plots_dir) / EPOCH_PLOT;
  const std::vector<std::string> files = {markdown_path, epoch_plot.string() + ".dat",
                                          epoch_plot.string() + ".gp"};
  for (const std::string& file : files) apps::make_folder_of(file);
  apps::check_outputs(files);
}

}  // namespace engine::bench
