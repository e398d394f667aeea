#!/usr/bin/env python3
"""A soak run's memory curve (scripts/soak.sh): from the --json records of mnist_mlp runs, the
host's resident set (RSS) and the device allocator's bytes in use and reserved after every epoch.

Usage: scripts/plot_soak.py OUT_DIR LABEL=RUN.json [LABEL=RUN.json ...]
       [--tolerance-mib 2] [--tolerance-percent 2]

Prints, per run, the memory after epochs 1, 2 and the last, and the largest growth after epoch 1
and after epoch 2; writes the same to OUT_DIR/summary.txt, the curves to OUT_DIR/soak.gp (data
inline, so it can be re-run anywhere) and, where gnuplot is on PATH, OUT_DIR/soak.png and .svg.

Exits 1 if, after epoch 2, a run's RSS rises above its epoch-2 value by more than the larger
of --tolerance-mib and --tolerance-percent of that value (epoch 1 allocates the run's buffers,
epoch 2 may still settle the C library's heap), or its allocator's reserved bytes rise at all
(a caching allocator that serves the same requests every epoch holds the same blocks).
No third-party Python modules: the plot is gnuplot's."""
import argparse
import json
import os
import shutil
import subprocess
import sys

MIB = 1 << 20
SERIES = (("host_rss_bytes", "host RSS"), ("allocator_in_use_bytes", "allocator in use"),
          ("allocator_reserved_bytes", "allocator reserved"))


def load(path):
    record = json.load(open(path))
    epochs = [e for e in record["epochs_run"] if "memory" in e]
    if len(epochs) < 3:
        sys.exit(f"{path}: {len(epochs)} epochs with memory figures; a soak needs 3 or more")
    return record, epochs


def growth_after(values, epoch_index):
    """The largest rise above values[epoch_index] in the epochs after it, in bytes (0 if none)."""
    base = values[epoch_index]
    return max(0, max(values[epoch_index + 1:]) - base)


def check(label, record, epochs, tolerance_mib, tolerance_percent):
    """The run's summary lines and whether it stayed within the tolerances."""
    rss = [e["memory"]["host_rss_bytes"] for e in epochs]
    reserved = [e["memory"]["allocator_reserved_bytes"] for e in epochs]
    allowed = max(tolerance_mib * MIB, tolerance_percent / 100 * rss[1])
    rss_ok = growth_after(rss, 1) <= allowed
    reserved_ok = growth_after(reserved, 1) == 0
    lines = [f"{label}: {len(epochs)} epochs of {epochs[0]['steps']} steps, {record['device_name']}, "
             f"{record.get('data', record.get('dataset', '?'))}"]
    for key, name in SERIES:
        values = [e["memory"][key] for e in epochs]
        lines.append(f"  {name:18s} after epoch 1 {values[0] / MIB:9.2f} MiB, 2 {values[1] / MIB:9.2f} MiB, "
                     f"last {values[-1] / MIB:9.2f} MiB; largest rise after epoch 1 "
                     f"{growth_after(values, 0) / MIB:+.3f} MiB, after epoch 2 "
                     f"{growth_after(values, 1) / MIB:+.3f} MiB")
    lines.append(f"  RSS after epoch 2 within {allowed / MIB:.2f} MiB (the larger of {tolerance_mib} MiB "
                 f"and {tolerance_percent}%): {'OK' if rss_ok else 'FAILED'}; allocator reserved flat "
                 f"after epoch 2: {'OK' if reserved_ok else 'FAILED'}")
    return lines, rss_ok and reserved_ok


def plot(out_dir, runs):
    """One panel per run: each curve's rise since epoch 1, in MiB against the epoch (a leak of a
    few KiB per epoch shows; the curves in absolute MiB would be flat lines hundreds apart), its
    epoch-1 value in the key."""
    panels = []
    for label, _, epochs in runs:
        plots, data = [], []
        for key, name in SERIES:
            base = epochs[0]["memory"][key]
            plots.append(f"'-' using 1:2 with linespoints pt 7 ps 0.5 lw 2 "
                         f"title '{name} ({base / MIB:.1f} MiB after epoch 1)'")
            data.append("\n".join(f"{e['epoch']} {(e['memory'][key] - base) / MIB:.6f}" for e in epochs)
                        + "\ne")
        panels.append(f"set title '{label}'\nplot " + ", \\\n     ".join(plots) + "\n" + "\n".join(data))
    script = "\n".join([
        f"set multiplot layout 1,{len(runs)}",
        "set xlabel 'epoch'",
        "set ylabel 'MiB more than after epoch 1'",
        "set key bmargin left Left reverse maxrows 3",
        "set bmargin 8",
        "set grid",
        "set offsets 0, 0, graph 0.1, graph 0.1",
    ] + panels + ["unset multiplot"]) + "\n"
    path = os.path.join(out_dir, "soak.gp")
    open(path, "w").write(script)
    if shutil.which("gnuplot") is None:
        return f"wrote {path} (no gnuplot on PATH: run `gnuplot soak.gp` where it is)"
    width = 600 * len(runs)
    for term, ext in ((f"pngcairo size {width},480", "png"), (f"svg size {width},480", "svg")):
        subprocess.run(["gnuplot", "-e", f"set terminal {term}; set output 'soak.{ext}'", "soak.gp"],
                       cwd=out_dir, check=True)
    return f"wrote {path}, soak.png and soak.svg"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("runs", nargs="+", metavar="LABEL=RUN.json")
    parser.add_argument("--tolerance-mib", type=float, default=2.0)
    parser.add_argument("--tolerance-percent", type=float, default=2.0)
    args = parser.parse_args()
    runs = []
    for arg in args.runs:
        label, path = arg.split("=", 1)
        runs.append((label, *load(path)))
    lines, ok = [], True
    for label, record, epochs in runs:
        run_lines, run_ok = check(label, record, epochs, args.tolerance_mib, args.tolerance_percent)
        lines += run_lines
        ok = ok and run_ok
    summary = "\n".join(lines) + "\n"
    open(os.path.join(args.out_dir, "summary.txt"), "w").write(summary)
    print(summary + plot(args.out_dir, runs))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
