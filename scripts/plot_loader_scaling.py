#!/usr/bin/env python3
"""Plot of apps/dogs_vs_cats --data-scaling-csv: the loader's images per second against its
worker count, one curve per CSV, with the ideal (one worker's rate times the count) dashed and
the rate one training epoch needs drawn flat.
Usage: scripts/plot_loader_scaling.py OUT_PREFIX NEEDED_IMAGES_PER_S LABEL=FILE.csv [LABEL=FILE.csv ...]
Writes OUT_PREFIX.gp (data inline, so it can be re-run anywhere) and, where gnuplot is on PATH,
OUT_PREFIX.png and OUT_PREFIX.svg."""
import csv
import shutil
import subprocess
import sys


def main():
    prefix, needed = sys.argv[1], float(sys.argv[2])
    curves = []
    for arg in sys.argv[3:]:
        label, path = arg.split("=", 1)
        rows = [(int(r["workers"]), float(r["images_per_second"])) for r in csv.DictReader(open(path))]
        curves.append((label, sorted(rows)))
    top = max(w for _, rows in curves for w, _ in rows)
    lines = [
        "set logscale xy 2",
        "set xlabel 'loader workers (threads)'",
        "set ylabel 'images per second (decode + augment + copy)'",
        "set key top left",
        "set grid",
        f"set xrange [0.8:{top * 1.25}]",
    ]
    plots, data = [], []
    for i, (label, rows) in enumerate(curves):
        plots.append(f"'-' using 1:2 with linespoints lw 2 pt 7 title '{label}'")
        data.append("\n".join(f"{w} {r}" for w, r in rows) + "\ne")
        one = rows[0][1] / rows[0][0]
        plots.append(f"{one} * x with lines dt 2 lc {i + 1} title '{label}: ideal'")
    plots.append(f"{needed} with lines lw 2 lc rgb 'black' title 'what one GPU epoch needs ({needed:.0f}/s)'")
    script = "\n".join(lines) + "\nplot " + ", \\\n     ".join(plots) + "\n" + "\n".join(data) + "\n"
    open(prefix + ".gp", "w").write(script)
    if shutil.which("gnuplot") is None:
        print(f"wrote {prefix}.gp (no gnuplot on PATH: no images)")
        return
    for term, ext in (("pngcairo size 800,520", "png"), ("svg size 800,520", "svg")):
        subprocess.run(["gnuplot", "-e", f"set terminal {term}; set output '{prefix}.{ext}'",
                        prefix + ".gp"], check=True)
    print(f"wrote {prefix}.gp, {prefix}.png, {prefix}.svg")


if __name__ == "__main__":
    main()
