#!/usr/bin/env python3
"""Where a training step's GPU time goes, from Nsight Compute's per-kernel durations.

Reads the CSV of

  ncu --nvtx --nvtx-include "engine@train_step/" --metrics gpu__time_duration.sum --csv \\
      APP --no-graph --epochs 1 --steps-per-epoch STEPS ... > step.csv

(scripts/gpu/diagnose_cnn.sh runs it for the CNNs) and prints two tables, in microseconds a
step: the step's kernels grouped by what they do (the convolutions, their copies, the
reductions, the optimizer, ...), then the largest kernels one by one with their grids.

ncu runs each kernel alone, its caches flushed before it by default: every kernel costs at least
~2 us there, and the sum exceeds a replayed CUDA graph's step (on an H200, 741 us against 498
for CIFAR-10 --tf32). The shares say where to look; the graph's step says what a change gained.

Usage: scripts/ncu_step_table.py STEP_CSV [--steps 3] [--top 24]
"""
import argparse
import collections
import csv
import re
import sys

# What each kernel does, by its name: the first pattern that matches names the group.
GROUPS = [
    ("Hopper convolutions (forward, backward-data)", r"conv_tma_wgmma_kernel"),
    ("Hopper filter gradients", r"filter_gradient_kernel"),
    ("their copies of dy (dyT)", r"transpose_dy_kernel"),
    ("mma.sync / FMA implicit-GEMM convolutions", r"implicit_gemm"),
    ("first layers (few channels)", r"few_channels"),
    ("matmuls", r"small_splitk|_tf32_|blocktile|warptile|bigtile|naive|coalesced|sgemm|gemm_kernel"),
    ("split-K reductions", r"split_k_reduce"),
    ("bias gradients and activations' backward", r"activation_backward"),
    ("bias + activation forward", r"bias_activation_kernel|activation_kernel"),
    ("copies and transposes", r"strided_copy|transpose"),
    ("pooling", r"max_pool"),
    ("dropout", r"dropout"),
    ("optimizer", r"adam|sgd|rmsprop|adadelta"),
    ("loss and accuracy", r"softmax|sigmoid_ce|cross_entropy|count_correct|count_binary|sum_kernel"),
]


def kernels(path):
    """(name, grid, block, ns) for every kernel launch in ncu's CSV."""
    rows = list(csv.reader(open(path, newline="")))
    head = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if head is None:
        sys.exit(f"{path}: no ncu table (did ncu run? see its stderr)")
    h = rows[head]
    name, value, grid, block = (h.index(c) for c in ("Kernel Name", "Metric Value", "Grid Size", "Block Size"))
    for r in rows[head + 1:]:
        if len(r) == len(h):  # the app's own output lines are not table rows
            yield re.sub(r"\(.*", "", r[name]).replace("void ", ""), r[grid], r[block], float(r[value].replace(",", ""))


def group_of(kernel_name):
    for label, pattern in GROUPS:
        if re.search(pattern, kernel_name):
            return label
    return "the rest"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv")
    parser.add_argument("--steps", type=int, default=3, help="steps ncu profiled (--steps-per-epoch)")
    parser.add_argument("--top", type=int, default=24, help="kernels listed one by one")
    args = parser.parse_args()

    launches = list(kernels(args.csv))
    if not launches:
        sys.exit(f"{args.csv}: no kernels")
    total = sum(ns for *_, ns in launches) / 1000 / args.steps
    print(f"{len(launches)} kernel launches in {args.steps} steps, {total:.1f} us a step under ncu")

    by_group = collections.defaultdict(lambda: [0.0, 0])
    for name, _, _, ns in launches:
        g = by_group[group_of(name)]
        g[0] += ns / 1000 / args.steps
        g[1] += 1
    print(f"\n{'us a step':>10} {'share':>6} {'launches':>9}  group")
    for label, (us, count) in sorted(by_group.items(), key=lambda kv: -kv[1][0]):
        print(f"{us:10.1f} {100 * us / total:5.1f}% {count / args.steps:9.0f}  {label}")

    per_kernel = collections.defaultdict(lambda: [0.0, 0])
    for name, grid, block, ns in launches:
        k = per_kernel[(name[:80], grid, block)]
        k[0] += ns / 1000 / args.steps
        k[1] += 1
    print(f"\nthe {args.top} largest, us a step (x launches a step, grid, block):")
    for (name, grid, block), (us, count) in sorted(per_kernel.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"{us:10.1f} x{count / args.steps:<3.0f} {grid:14s} {block:12s} {name}")


if __name__ == "__main__":
    main()
