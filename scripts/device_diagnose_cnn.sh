#!/usr/bin/env bash
# Where the CIFAR-10 CNN's step goes on the GPU machine, and why (issue 6: the --tf32 epoch is
# 0.593 s against a target of <= 0.49-0.54 s). One call, ~6 minutes, after which the numbers
# to act on are all in OUT_DIR/diagnose_cnn.tgz:
#   1. the epoch: ours gpu --tf32 and FP32, PyTorch with its TF32 default and without, the
#      same synthetic CIFAR-shaped data, 3 epochs each (the targets are ratios to PyTorch's);
#   2. ncu's time for every kernel of 3 op-by-op steps of ours --tf32 (which kernels hold the
#      step);
#   3. ncu's sections (speed of light, occupancy, warp stalls, memory) for the implicit-GEMM
#      convolutions of one step: what limits each (latency, issue, shared or global memory);
#   4. kernel_bench --conv-only: every conv layer pass, ours vs cuDNN, FP32 and TF32, cuDNN
#      timed on its own KRSC filters (the table in docs/results/cnn.md is stale there);
# each --tf32 figure (1 and 4) with the two-stage TF32 kernel and with the cp.async pipeline of
# 3 and 4 stages (ENGINE_CONV_TF32_STAGES, kernels/conv/implicit_gemm.cuh).
# Usage: scripts/device_diagnose_cnn.sh OUT_DIR   (builds build-gpu when its apps are missing)
set -uo pipefail
out=${1:?out dir}
logs=$out/diagnose_cnn; mkdir -p "$logs"
trap 'tar czf "$out/diagnose_cnn.tgz" -C "$out" diagnose_cnn' EXIT
threads=$(nproc)
echo "== host"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 2>/dev/null
if [ ! -x build-gpu/apps/cifar10_cnn ] || [ ! -x build-gpu/apps/kernel_bench ]; then
  cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCUDNN_ROOT=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn > "$logs/configure.log" 2>&1 ||
    { tail -30 "$logs/configure.log"; exit 1; }
  timeout 240 cmake --build build-gpu -j "$threads" --target cifar10_cnn kernel_bench > "$logs/build.log" 2>&1 ||
    { grep -E "error" -A5 "$logs/build.log" | head -40; exit 1; }
fi
cifar=(build-gpu/apps/cifar10_cnn --gpu --dataset synthetic)

echo "== 1. the epoch, ours and PyTorch (median of epochs 2-3)"
run() {  # run NAME COMMAND...: the command under a limit; its --json into NAME.json
  local name=$1; shift
  timeout 120 "$@" --json "$logs/$name.json" > "$logs/$name.txt" 2>&1 || echo "$name failed: rc $?"
}
run ours_tf32 "${cifar[@]}" --epochs 3 --tf32
run ours_tf32_s3 env ENGINE_CONV_TF32_STAGES=3 "${cifar[@]}" --epochs 3 --tf32
run ours_tf32_s4 env ENGINE_CONV_TF32_STAGES=4 "${cifar[@]}" --epochs 3 --tf32
run ours_fp32 "${cifar[@]}" --epochs 3
run torch_tf32 python3 scripts/pytorch/cifar10_cnn.py --dataset synthetic --epochs 3 --device cuda
run torch_fp32 python3 scripts/pytorch/cifar10_cnn.py --dataset synthetic --epochs 3 --device cuda --no-tf32
python3 - "$logs" <<'PY'
import json, statistics, sys, os
for name in ("ours_tf32", "ours_tf32_s3", "ours_tf32_s4", "ours_fp32", "torch_tf32", "torch_fp32"):
    path = os.path.join(sys.argv[1], name + ".json")
    if not os.path.exists(path):
        print(f"{name:12s}: no record"); continue
    r = json.load(open(path))
    epochs = r.get("epochs_run") or r.get("epochs") or []
    secs = [e["seconds"] for e in epochs if isinstance(e, dict) and "seconds" in e][1:]
    print(f"{name:12s}: epochs 2+ {', '.join(f'{s:.3f}' for s in secs)} s; median {statistics.median(secs):.3f} s" if secs else f"{name:12s}: {sorted(r)[:12]}")
PY

echo "== 2. ncu: every kernel of 3 op-by-op --tf32 steps"
timeout 150 ncu --nvtx --nvtx-include "engine@train_step/" --metrics gpu__time_duration.sum --csv \
  "${cifar[@]}" --tf32 --no-graph --epochs 1 --steps-per-epoch 3 --test-images 100 \
  > "$logs/ncu_step_kernels.csv" 2> "$logs/ncu_step_kernels.err"; echo "rc $?"
python3 - "$logs/ncu_step_kernels.csv" <<'PY'
import csv, re, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
head = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
if head is None: sys.exit("no ncu table")
h = rows[head]; data = rows[head + 1:]
name_i, value_i, grid_i = h.index("Kernel Name"), h.index("Metric Value"), h.index("Grid Size")
per = collections.defaultdict(float); total = 0.0
for r in data:
    us = float(r[value_i].replace(",", "")) / 1000 / 3
    per[(re.sub(r"\(.*", "", r[name_i])[:70], r[grid_i])] += us; total += us
print(f"{len(data) // 3} kernels a step, {total:.1f} us a step under ncu; the largest:")
for (name, grid), us in sorted(per.items(), key=lambda kv: -kv[1])[:14]:
    print(f"  {us:8.1f} us  {grid:14s} {name}")
PY

echo "== 3. ncu sections: the implicit-GEMM convolutions of one --tf32 step"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
timeout 200 ncu $sections --nvtx --nvtx-include "engine@train_step/" -k "regex:implicit_gemm|few_channels" \
  --launch-skip 12 --launch-count 12 "${cifar[@]}" --tf32 --no-graph --epochs 1 --steps-per-epoch 3 \
  --test-images 100 > "$logs/ncu_conv_sections.txt" 2>&1; echo "rc $?"
grep -E "implicit_gemm_kernel|few_channels|Duration|Achieved Occupancy|Registers Per|Compute \(SM\) Throughput|Memory Throughput|Stall|One or More Eligible|L1/TEX Hit|L2 Hit" \
  "$logs/ncu_conv_sections.txt" | head -120

echo "== 4. kernel_bench --conv-only: ours vs cuDNN per layer pass, TF32 in 2, 3 and 4 stages"
for stages in 2 3 4; do
  ENGINE_CONV_TF32_STAGES=$stages timeout 100 build-gpu/apps/kernel_bench --conv-only \
    --conv-csv "$logs/conv_bench_s$stages.csv" > "$logs/conv_bench_s$stages.txt" 2>&1
  echo "stages $stages: rc $?"
done
tail -40 "$logs/conv_bench_s2.txt"
grep -iE "tf32|ours" "$logs/conv_bench_s3.txt" "$logs/conv_bench_s4.txt" | tail -60
