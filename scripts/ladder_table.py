#!/usr/bin/env python3
"""Markdown tables from apps/kernel_bench --csv: the ladder at one square size, and every
version at the seed models' shapes. Usage: scripts/ladder_table.py kernel_bench.csv [SIZE]"""
import csv
import sys
from collections import defaultdict


def main():
    path = sys.argv[1]
    size = sys.argv[2] if len(sys.argv) > 2 else "4096"
    rows = list(csv.DictReader(open(path)))
    square = [r for r in rows if r["shape"] == f"{size}^3"]
    print(f"| version ({size}³) | µs | GFLOP/s | % of cuBLAS | % of FP32 peak | rel. error |")
    print("|---|---|---|---|---|---|")
    for r in square:
        print(f"| {r['version']} | {float(r['microseconds']):.0f} | {float(r['gflops']):.0f} | "
              f"{float(r['pct_cublas']):.1f}% | {float(r['pct_peak']):.1f}% | {float(r['rel_error']):.1e} |")
    print()
    by_shape = defaultdict(dict)
    for r in rows:
        if not r["shape"].endswith("^3"):
            by_shape[r["shape"]][r["version"]] = r
    versions = [v for v in dict.fromkeys(r["version"] for r in rows)]
    print("| shape | " + " | ".join(versions) + " |")
    print("|---|" + "---|" * len(versions))
    for shape, vs in by_shape.items():
        cells = [f"{float(vs[v]['microseconds']):.1f}" if v in vs else "–" for v in versions]
        print(f"| {shape} | " + " | ".join(cells) + " |")
    print("\n(µs per call; lower is better)")


if __name__ == "__main__":
    main()
