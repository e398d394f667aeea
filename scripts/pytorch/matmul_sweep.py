#!/usr/bin/env python3
"""PyTorch reference for apps/matmul_sweep (seed 002): c = a @ b with a [1, n] and b [n, 1],
n = 10^2 ... --max-n, on each of --devices.

Two variants per n and device, as the app names them:
  matmul           the product alone, a and b already on the device;
  generate+matmul  torch.randn for a and b on the device, then the product (the article's
                   timing: tf.random.normal inside every timed call).
Each is the median of --repeats calls after one warm-up call: CUDA events on the GPU (the
device's own clock), the wall clock on the CPU. Prints a table; --json writes every result
(apps/bench reads "results").
"""
import argparse
import json
import statistics
import time

import torch


def time_calls(fn, device, repeats):
    """Milliseconds of `repeats` calls of fn after one warm-up call."""
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ms = []
        for _ in range(repeats):
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            ms.append(start.elapsed_time(stop))
        return ms
    ms = []
    for _ in range(repeats):
        begin = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - begin) * 1e3)
    return ms


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--devices", nargs="+", default=["cpu", "cuda"], choices=["cpu", "cuda"])
    p.add_argument("--max-n", type=int, default=100_000_000)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: PyTorch's default)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--json")
    a = p.parse_args()
    if a.max_n < 100 or a.repeats < 1 or a.threads < 0:
        p.error("--max-n must be at least 100, --repeats at least 1, --threads not negative")
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    results = []
    print(f"{'device':6} {'n':>11}  {'variant':16} {'median ms':>11} {'min ms':>11}")
    for name in a.devices:
        if name == "cuda" and not torch.cuda.is_available():
            print("cuda: not available, skipped")
            continue
        device = torch.device(name)
        n = 100
        while n <= a.max_n:
            x = torch.randn(1, n, device=device)
            y = torch.randn(n, 1, device=device)
            variants = {"matmul": lambda: x @ y,
                        "generate+matmul": lambda: torch.randn(1, n, device=device) @ torch.randn(n, 1, device=device)}
            for variant, fn in variants.items():
                ms = time_calls(fn, device, a.repeats)
                results.append({"device": name, "n": n, "variant": variant, "median_ms": statistics.median(ms),
                                "min_ms": min(ms), "max_ms": max(ms), "calls": len(ms)})
                print(f"{name:6} {n:>11}  {variant:16} {results[-1]['median_ms']:11.4f} {min(ms):11.4f}", flush=True)
            del x, y
            n *= 10
    if a.json:
        record = {"framework": f"pytorch {torch.__version__}", "app": "matmul_sweep",
                  "threads": torch.get_num_threads(),
                  "device_name": torch.cuda.get_device_name() if torch.cuda.is_available() else "",
                  "repeats": a.repeats, "results": results}
        with open(a.json, "w") as f:
            json.dump(record, f, indent=2)
        print("Wrote", a.json)


if __name__ == "__main__":
    main()
