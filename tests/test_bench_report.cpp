// apps/common/bench_report.h on a result set made by hand: two experiments on cpu and gpu with
// PyTorch beside them and the articles' figures, one run that failed. Checks the Markdown (the
// fingerprint, each table's cells and ratios, the failure row, the list of commands, the plot
// links and how to draw them) and the time-per-epoch plot's data and script.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "apps/common/bench_report.h"

namespace fs = std::filesystem;
using namespace engine::bench;

namespace {

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A fresh folder for one test's files.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("test_bench_report_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

Report fake_report() {
  Report r;
  r.setting = "the default setting";
  r.date = "2026-11-23 12:00 UTC";
  r.wall_seconds = 123.0;
  r.machine = {{"CPU", "Fake CPU 16 cores"}, {"GPU", "Fake GPU 9000"}, {"BLAS", "OpenBLAS 0.3.26"}};
  r.not_measured = {"cudnn: not in this build"};

  Experiment mlp;
  mlp.title = "MNIST MLP (seed 000)";
  mlp.metric = "Seconds per epoch";
  mlp.setting = "3 epochs";
  mlp.in_epoch_plot = true;
  const Published article_cpu{10.0, "i5-6200U", "100 s for 10 epochs", "000_x.txt:73"};
  // cpu 2 s (PyTorch 3 s, article 10 s); gpu 0.5 s (PyTorch 1 s, article 0.25 s).
  mlp.rows.push_back({"small model", "cpu", {2.0, "epoch 2"}, {3.0, "epoch 2"}, {article_cpu}});
  mlp.rows.push_back({"small model", "gpu", {0.5, "epoch 2"}, {1.0, "epoch 2"},
                      {{0.25, "GTX 1080 Ti", "0.25 s", "000_x.txt:74"}}, {0.8, "epoch 2"}});
  // The wide model's GPU run failed: its row says so, with the log.
  mlp.rows.push_back({"wide model", "cpu", {4.0, "epoch 2"}, {std::nullopt, "not installed"}, {}});
  mlp.rows.push_back({"wide model", "gpu", {std::nullopt, "failed (exit 1): out of memory; log: /w/logs/wide_gpu.log"},
                      {std::nullopt, "not installed"}, {}});
  mlp.notes = {"Data (ours): fashion"};
  r.experiments.push_back(mlp);

  Experiment jac;
  jac.title = "Jacobian (seed 001)";
  jac.metric = "Seconds per J";
  jac.setting = "val = 100";
  jac.rows.push_back({"", "cpu", {0.002, ""}, {6.1, ""}, {}});
  jac.rows.push_back({"", "gpu", {2.5e-5, ""}, {0.0057, ""}, {}});
  r.experiments.push_back(jac);

  r.plots.push_back({"Matmul sweep", "matmul_sweep.gp", {"matmul_sweep.png"}});
  r.children = {{"mnist_mlp small model, cpu", "mnist_mlp --device cpu --json a.json", "ok", 4.2, "/w/logs/a.log"},
                {"mnist_mlp wide model, gpu", "mnist_mlp --device gpu --wide", "failed (exit 1): out of memory",
                 1.5, "/w/logs/wide_gpu.log"}};
  return r;
}

}  // namespace

TEST_CASE("format_seconds: three significant digits in a readable unit") {
  CHECK(format_seconds(526.0) == "526 s");
  CHECK(format_seconds(5.24) == "5.24 s");
  CHECK(format_seconds(0.0843) == "84.3 ms");
  CHECK(format_seconds(2.5e-5) == "25 µs");
}

TEST_CASE("speed_ratio: the other's time over ours, said as faster or slower") {
  CHECK(speed_ratio(1.0, 4.0) == "4x faster");
  CHECK(speed_ratio(2.0, 1.0) == "2x slower");
  CHECK(speed_ratio(1.0, 1.03) == "same");
  CHECK(speed_ratio(0.001, 0.5) == "500x faster");
  CHECK(speed_ratio(0.0, 1.0) == "—");
}

TEST_CASE("write_report: fingerprint, tables with ratios, the failed run, commands and plots") {
  const fs::path dir = scratch("report");
  const ReportFiles files = write_report(fake_report(), (dir / "RESULTS.md").string(),
                                         (dir / "results" / "bench").string(), /*draw=*/false);
  CHECK_FALSE(files.images_drawn);
  const std::string md = read(dir / "RESULTS.md");

  // The fingerprint block, and what was not measured.
  CHECK(contains(md, "## Machine\n\n| | |\n|---|---|\n| CPU | Fake CPU 16 cores |\n| GPU | Fake GPU 9000 |\n"));
  CHECK(contains(md, "- cudnn: not in this build"));

  // One table per experiment; the MLP's has a case column (it has two cases), the Jacobian's not.
  CHECK(contains(md, "## MNIST MLP (seed 000)\n\nSeconds per epoch; 3 epochs\n\n| case | device | ours | vs our cpu |"));
  // cpu: PyTorch 3 s / ours 2 s, article 10 s / 2 s; gpu: our cpu 2 s / 0.5 s, PyTorch 1 / 0.5,
  // the article's 0.25 s against our 0.5 s.
  // PyTorch at its best (a CUDA graph) only on the GPU: 0.8 s against our 0.5 s.
  CHECK(contains(md, "| case | device | ours | vs our cpu | PyTorch eager | ours vs eager | PyTorch at its best | ours vs best |"));
  CHECK(contains(md, "| small model | cpu | 2 s | — | 3 s | 1.5x faster | — | — | 10 s (i5-6200U) | 5x faster |"));
  CHECK(contains(md, "| small model | gpu | 500 ms | 4x faster | 1 s | 2x faster | 800 ms | 1.6x faster | 250 ms (GTX 1080 Ti) | 2x slower |"));
  CHECK(contains(md, "- small model, gpu, PyTorch at its best: epoch 2\n"));
  // The failed run: a row that says so, with its log; no ratio.
  CHECK(contains(md, "| wide model | gpu | failed (exit 1): out of memory; log: /w/logs/wide_gpu.log | — | not installed | — | — | — | — | — |"));
  CHECK(contains(md, "| cpu | 2 ms | — | 6.1 s | 3050x faster |"));  // whole numbers from 100 on
  CHECK(contains(md, "| gpu | 25 µs | 80x faster | 5.7 ms | 228x faster |"));
  // How each time was measured, where each article figure comes from, the notes.
  CHECK(contains(md, "- small model, cpu: epoch 2\n"));
  CHECK(contains(md, "- 100 s for 10 epochs on i5-6200U: `000_x.txt:73`"));
  CHECK(contains(md, "- Data (ours): fashion"));

  // Every command with its outcome and log.
  CHECK(contains(md, "| 2 | mnist_mlp wide model, gpu | `mnist_mlp --device gpu --wide` | failed (exit 1): out of memory | 1.5 | `/w/logs/wide_gpu.log` |"));

  // Plots: not drawn here, so the report says how; each script and its images are linked.
  CHECK(contains(md, "plots: run `gnuplot *.gp` in results/bench"));
  CHECK(contains(md, "**Time per epoch by device** (`results/bench/epoch_seconds.gp`; not drawn here):\n\n"
                     "![Time per epoch by device](results/bench/epoch_seconds.png) ([SVG](results/bench/epoch_seconds.svg))\n"));
  CHECK(contains(md, "**Matmul sweep** (`results/bench/matmul_sweep.gp`; not drawn here)"));
  fs::remove_all(dir);
}

TEST_CASE("write_report: the time-per-epoch plot's data and script") {
  const fs::path dir = scratch("plot");
  const fs::path plots = dir / "plots";
  const ReportFiles files = write_report(fake_report(), (dir / "report.md").string(), plots.string(), false);
  REQUIRE(files.scripts.size() == 2);  // the epoch plot and the matmul sweep's
  CHECK(files.scripts[0] == (fs::absolute(plots) / "epoch_seconds.gp").string());
  REQUIRE(fs::exists(plots / "epoch_seconds.gp"));
  REQUIRE(fs::exists(plots / "epoch_seconds.dat"));
  // Only the experiments in the epoch plot, a column per series, NaN where a run has no time.
  const std::string dat = read(plots / "epoch_seconds.dat");
  CHECK(dat ==
        "\"case\" \"ours cpu\" \"ours gpu\" \"ours cudnn\" \"PyTorch cpu\" \"PyTorch cuda\" \"PyTorch cuda, graphed\"\n"
        "\"MNIST MLP (seed 000)\\nsmall model\" 2 0.5 NaN 3 1 0.8\n"
        "\"MNIST MLP (seed 000)\\nwide model\" 4 NaN NaN NaN NaN NaN\n");
  // The script draws PNG and SVG from the data, leaving out the series with no time (cudnn).
  const std::string gp = read(plots / "epoch_seconds.gp");
  CHECK(contains(gp, "set output 'epoch_seconds.png'"));
  CHECK(contains(gp, "set output 'epoch_seconds.svg'"));
  CHECK(contains(gp, "plot 'epoch_seconds.dat' using 2:xtic(1)"));
  CHECK(contains(gp, "'' using 6 title columnheader(6)"));
  CHECK_FALSE(contains(gp, "using 4 "));
  CHECK(contains(gp, "# GPU: Fake GPU 9000"));
  fs::remove_all(dir);
}
