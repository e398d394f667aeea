#!/usr/bin/env python3
"""Plots of apps/kernel_bench --csv with gnuplot: the ladder's TFLOP/s at one square size
(bars, cuBLAS as reference lines) and every version's GFLOP/s over the square sizes.
Usage: scripts/plot_ladder.py kernel_bench.csv OUT_PREFIX [SIZE]
Writes OUT_PREFIX.gp (data inline, so it can be re-run anywhere) and, where gnuplot is on
PATH, OUT_PREFIX.png/.svg and OUT_PREFIX_sizes.png/.svg. Rows that failed the bench's
correctness check are left out."""
import csv
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict

# Versions whose own kernel runs only A B^T (kernels/matmul/versions.cu).
ABT_ONLY = ("v11_tf32_tma",)


def main():
    path, prefix = sys.argv[1], sys.argv[2]
    size = sys.argv[3] if len(sys.argv) > 3 else "4096"
    # A version whose result failed kernel_bench's check has no speed worth plotting.
    rows = [r for r in csv.DictReader(open(path)) if r["ok"] == "1"]
    at_size = [r for r in rows if r["shape"] == f"{size}^3"]
    cublas = {r["version"]: float(r["gflops"]) / 1000 for r in at_size if r["version"].startswith("cublas")}
    # A version that runs only A B^T itself (v11; its "N^3" rows, A B, are v9's kernel) is
    # plotted from kernel_bench's "N^3 A B^T" rows, labelled so.
    ladder = [dict(r) for r in at_size if r["version"].startswith("v") and r["version"] not in ABT_ONLY]
    ladder += [dict(r, version=r["version"] + " (A B^T)") for r in rows
               if r["shape"] == f"{size}^3 A B^T" and r["version"] in ABT_ONLY]
    curves = defaultdict(list)  # version -> [(n, GFLOP/s)]
    for r in rows:
        if r["shape"].endswith("^3") and r["version"] not in ABT_ONLY:
            curves[r["version"]].append((int(r["shape"][:-2]), float(r["gflops"])))
        elif r["shape"].endswith("^3 A B^T") and r["version"] in ABT_ONLY:
            curves[r["version"] + " (A B^T)"].append((int(r["shape"][:-8]), float(r["gflops"])))
    block = {v: "$" + re.sub(r"\W", "_", v) for v in curves}  # gnuplot datablock names
    base = os.path.basename(prefix)
    gp = [f"# From {path}: apps/kernel_bench at {size}^3 and over the square sizes.",
          "$ladder << EOD"]
    gp += [f"{i} \"{r['version']}\" {float(r['gflops']) / 1000:.2f}" for i, r in enumerate(ladder)]
    gp += ["EOD"]
    for v, pts in curves.items():
        gp += [f"{block[v]} << EOD"] + [f"{n} {g:.1f}" for n, g in sorted(pts)] + ["EOD"]
    for term, ext in (("pngcairo size 900,520", "png"), ("svg size 900,520", "svg")):
        gp += [f"set terminal {term}", f"set output '{base}.{ext}'", "reset",
               "set termoption noenhanced",
               f"set title 'SGEMM ladder at {size}^3 (TFLOP/s, higher is better)'",
               "set style fill solid 0.8", "set boxwidth 0.7", "set yrange [0:*]", "set grid ytics",
               "set xtics rotate by -30 nomirror", "set ylabel 'TFLOP/s'", "set key top left"]
        plots = ["$ladder using 1:3:xtic(2) with boxes lc rgb '#3a6ea5' title 'ours'",
                 "$ladder using 1:3:(sprintf('%.1f', $3)) with labels offset 0,0.7 notitle"]
        for name, tflops in cublas.items():
            plots.append(f"{tflops:.2f} with lines dt 2 lw 2 title '{name} ({tflops:.1f})'")
        gp += ["plot " + ", \\\n     ".join(plots)]
        gp += [f"set output '{base}_sizes.{ext}'", "reset",
               "set termoption noenhanced",
               "set title 'SGEMM GFLOP/s over square sizes M = N = K'", "set logscale xy",
               "set xlabel 'n'", "set ylabel 'GFLOP/s'", "set grid", "set key outside right",
               "plot " + ", \\\n     ".join(
                   f"{block[v]} with linespoints lw {3 if v.startswith('cublas') or v.startswith('engine') else 1} title '{v}'"
                   for v in curves)]
    with open(prefix + ".gp", "w") as f:
        f.write("\n".join(gp) + "\n")
    if shutil.which("gnuplot"):
        subprocess.run(["gnuplot", base + ".gp"], cwd=os.path.dirname(prefix) or ".", check=True)
        print(f"wrote {prefix}.png/.svg and {prefix}_sizes.png/.svg")
    else:
        print(f"gnuplot not found: run `gnuplot {base}.gp` where it is")


if __name__ == "__main__":
    main()
