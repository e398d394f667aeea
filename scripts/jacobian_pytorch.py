#!/usr/bin/env python3
"""Seed 001 in PyTorch: the full Jacobian of the tanh MLP 1 -> 20 -> 20 -> 400 at an input of
shape (val, 1), by every method PyTorch offers, timed side by side with apps/jacobian_mlp.

Methods (each on every --devices, at every --vals):
  loop        torch.autograd.functional.jacobian(f, t): one backward pass per output element,
              what the article ran. Its total is estimated first from --estimate-passes passes
              of the same autograd.grad call it makes; it runs only when that estimate is at
              most --loop-cap seconds, else the estimate is reported ("estimated").
  vectorize   torch.autograd.functional.jacobian(f, t, vectorize=True): vmap over all
              val*400 one-hot cotangents at once.
  jacrev      torch.func.jacrev(f)(t): the same, through functorch.
  jacfwd      torch.func.jacfwd(f)(t): vmap over the val one-hot tangents of t.
  per_sample  torch.func.vmap(torch.func.jacfwd(row_f))(t): each row's (400, 1) block, then
              the dense (val, 400, val, 1) J assembled from them (zeros + diagonal), the same
              trick as the engine's per-sample mode; the time of the blocks alone is reported too.
A method whose one-hot basis alone would not fit in memory (jacrev and vectorize at
val=1000 need (val*400)^2 floats, 596 GiB) is still tried on the GPU, where it fails cleanly
with an out-of-memory error that is reported; on the CPU it is skipped with that number,
since the host would swap or be killed rather than fail.

Times are end to end (torch.cuda.synchronize() after each call), the median of --repeats
calls after one warm-up call (the loop: one call). Every computed J is checked against
per_sample's dense J (max |diff|). Prints a table and, with --json, writes every record.

Usage: scripts/jacobian_pytorch.py [--vals 100 1000] [--devices cpu cuda] [--threads N]
                                   [--loop-cap 120] [--repeats 3] [--json FILE]
"""
import argparse
import json
import os
import platform
import statistics
import time

import torch
import torch.nn as nn

METHODS = ["loop", "vectorize", "jacrev", "jacfwd", "per_sample"]


class NetX(nn.Module):  # the seed's network, verbatim
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1, 20)
        self.fc2 = nn.Linear(20, 20)
        self.out = nn.Linear(20, 400)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.out(x)


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def host_memory_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def timed(fn, device, repeats, warmup=True):
    """(result, first_seconds, median_seconds, all_seconds) of end-to-end calls."""
    seconds = []
    result = None
    for _ in range((1 if warmup else 0) + repeats):
        result = None
        sync(device)
        start = time.perf_counter()
        result = fn()
        sync(device)
        seconds.append(time.perf_counter() - start)
    timed_part = seconds[1:] if warmup and len(seconds) > 1 else seconds
    return result, seconds[0], statistics.median(timed_part), seconds


def per_sample_dense(net, t):
    """Blocks by vmap(jacfwd) of one row, then the dense J on a zero background."""
    def row(r):  # r: (1,) -> (400,)
        return net(r.unsqueeze(0)).squeeze(0)
    blocks = torch.func.vmap(torch.func.jacfwd(row))(t)  # (val, 400, 1)
    val = t.shape[0]
    dense = torch.zeros(val, 400, val, 1, device=t.device, dtype=t.dtype)
    idx = torch.arange(val, device=t.device)
    dense[idx, :, idx, :] = blocks
    return blocks, dense


def loop_estimate(net, t, passes):
    """Seconds per backward pass of the loop's own call: autograd.grad of one output element."""
    x = t.detach().requires_grad_(True)
    out = net(x).reshape(-1)
    n = min(passes, out.numel())
    torch.autograd.grad(out[0], x, retain_graph=True)  # warm-up
    sync(t.device.type)
    start = time.perf_counter()
    for j in range(1, n + 1):
        torch.autograd.grad(out[j % out.numel()], x, retain_graph=True)
    sync(t.device.type)
    return (time.perf_counter() - start) / n


def run(args):
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    records = []
    for device in args.devices:
        if device == "cuda" and not torch.cuda.is_available():
            print(f"cuda: not available, skipped")
            continue
        for val in args.vals:
            torch.manual_seed(args.seed)
            net = NetX().to(device)
            t = torch.reshape(torch.rand(val), (val, 1)).to(device)
            f = lambda t_: net(t_)  # noqa: E731 (as in the article)
            M = val * 400
            basis_bytes = M * M * 4  # the one-hot cotangents that vmap over outputs builds
            reference = None
            for method in args.methods:
                rec = {"device": device, "val": val, "method": method, "status": "ok"}
                try:
                    if method == "per_sample":
                        (blocks, dense), first, med, secs = timed(lambda: per_sample_dense(net, t), device, args.repeats)
                        _, b_first, b_med, _ = timed(lambda: torch.func.vmap(torch.func.jacfwd(
                            lambda r: net(r.unsqueeze(0)).squeeze(0)))(t), device, args.repeats)
                        rec["blocks_only_median_seconds"] = b_med
                        J = dense
                    elif method == "loop":
                        per_pass = loop_estimate(net, t, args.estimate_passes)
                        rec["seconds_per_pass"] = per_pass
                        rec["estimated_seconds"] = per_pass * M
                        if per_pass * M > args.loop_cap:
                            rec["status"] = "estimated"
                            records.append(rec)
                            continue
                        J, first, med, secs = timed(lambda: torch.autograd.functional.jacobian(f, t),
                                                    device, 1, warmup=False)
                    elif method in ("vectorize", "jacrev") and device == "cpu" and \
                            basis_bytes > 0.5 * host_memory_bytes():
                        rec["status"] = "skipped"
                        rec["note"] = f"one-hot basis alone needs {basis_bytes / 2**30:.0f} GiB"
                        records.append(rec)
                        continue
                    elif method == "vectorize":
                        J, first, med, secs = timed(
                            lambda: torch.autograd.functional.jacobian(f, t, vectorize=True), device, args.repeats)
                    elif method == "jacrev":
                        J, first, med, secs = timed(lambda: torch.func.jacrev(f)(t), device, args.repeats)
                    elif method == "jacfwd":
                        J, first, med, secs = timed(lambda: torch.func.jacfwd(f)(t), device, args.repeats)
                    else:
                        raise ValueError(method)
                except (torch.cuda.OutOfMemoryError, RuntimeError, MemoryError) as e:
                    rec["status"] = "out of memory" if "memory" in str(e).lower() else "error"
                    rec["note"] = str(e).splitlines()[0][:200]
                    records.append(rec)
                    if device == "cuda":
                        torch.cuda.empty_cache()
                    continue
                rec.update({"first_seconds": first, "median_seconds": med, "seconds": secs,
                            "shape": list(J.shape)})
                if device == "cuda":
                    rec["peak_gpu_bytes"] = torch.cuda.max_memory_allocated()
                    torch.cuda.reset_peak_memory_stats()
                if method == "per_sample":
                    reference = J
                elif reference is not None:
                    rec["max_abs_diff_vs_per_sample"] = (J - reference).abs().max().item()
                records.append(rec)
                del J
            del reference
            if device == "cuda":
                torch.cuda.empty_cache()
    return records


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vals", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--devices", nargs="+", default=["cpu", "cuda"], choices=["cpu", "cuda"])
    p.add_argument("--methods", nargs="+", default=["per_sample"] + [m for m in METHODS if m != "per_sample"],
                   choices=METHODS, help="per_sample first: it is every other method's reference")
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: PyTorch's default)")
    p.add_argument("--loop-cap", type=float, default=120.0,
                   help="run the loop only when its estimate is at most this many seconds")
    p.add_argument("--estimate-passes", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="write every record here")
    args = p.parse_args()

    header = {"torch": torch.__version__, "python": platform.python_version(),
              "cpu_threads": torch.get_num_threads(), "cpu": platform.processor() or platform.machine(),
              "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    print("PyTorch %(torch)s, %(cpu_threads)s CPU threads, GPU: %(gpu)s" % header)
    records = run(args)
    print("%-5s %5s %-11s %-14s %12s %12s  %s" % ("dev", "val", "method", "status", "median", "first", "note"))
    for r in records:
        med = r.get("median_seconds", r.get("estimated_seconds"))
        note = r.get("note", "")
        if "blocks_only_median_seconds" in r:
            note = "blocks alone %.4f s" % r["blocks_only_median_seconds"]
        if "max_abs_diff_vs_per_sample" in r:
            note = "max |diff| %.2e %s" % (r["max_abs_diff_vs_per_sample"], note)
        if r["status"] == "estimated":
            note = "%d passes at %.3f ms: not run (--loop-cap)" % (r["val"] * 400, r["seconds_per_pass"] * 1e3)
        print("%-5s %5d %-11s %-14s %12s %12s  %s" % (
            r["device"], r["val"], r["method"], r["status"],
            "%.4f s" % med if med is not None else "-",
            "%.4f s" % r["first_seconds"] if "first_seconds" in r else "-", note))
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump({"header": header, "records": records}, f, indent=2)
        os.replace(args.json + ".tmp", args.json)
        print("Wrote", args.json)


if __name__ == "__main__":
    main()
