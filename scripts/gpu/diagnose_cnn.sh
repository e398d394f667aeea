#!/usr/bin/env bash
# Where the CNNs' steps go on the GPU machine, and why (issue 6: the CIFAR --tf32 epoch against
# a target of <= 1/3 of PyTorch's). One call, a few minutes, after which the numbers to act on
# are all in OUT_DIR/diagnose_cnn.tgz:
#   1. the epochs: ours gpu --tf32 (the default 3-stage pipeline, and the two-stage kernel for
#      comparison) and FP32, PyTorch with its TF32 default and without, 3 epochs each: CIFAR-10
#      on synthetic data of its shape, and the MNIST CNN on Fashion-MNIST where DATA_DIR has
#      it (the targets are ratios to PyTorch's, same run);
#   2. ncu's time for every kernel of 3 op-by-op --tf32 steps of each CNN, grouped by what the
#      kernels do (scripts/ncu_step_table.py: which kernels hold the step);
#   3. with SECTIONS=1, ncu's sections (speed of light, occupancy, warp stalls, memory) for
#      the implicit-GEMM convolutions of one step: what limits each (latency, issue, memory);
#   4. kernel_bench --conv-only: every conv layer pass, ours vs cuDNN, FP32 and TF32.
# Usage: scripts/gpu/diagnose_cnn.sh OUT_DIR [DATA_DIR]   (builds build-gpu when its apps
# are missing; DATA_DIR default .devdata, as scripts/fetch_data.sh fills it)
set -uo pipefail
out=${1:?out dir}; data=${2:-.devdata}
logs=$out/diagnose_cnn; mkdir -p "$logs"
trap 'tar czf "$out/diagnose_cnn.tgz" -C "$out" diagnose_cnn' EXIT
threads=$(nproc)
echo "== host"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 2>/dev/null
if [ ! -x build-gpu/apps/cifar10_cnn ] || [ ! -x build-gpu/apps/mnist_cnn ] || [ ! -x build-gpu/apps/kernel_bench ]; then
  cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCUDNN_ROOT=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn > "$logs/configure.log" 2>&1 ||
    { tail -30 "$logs/configure.log"; exit 1; }
  timeout 240 cmake --build build-gpu -j "$threads" --target cifar10_cnn mnist_cnn kernel_bench > "$logs/build.log" 2>&1 ||
    { grep -E "error" -A5 "$logs/build.log" | head -40; exit 1; }
fi
cifar=(build-gpu/apps/cifar10_cnn --gpu --dataset synthetic)

echo "== 1. the epochs, ours and PyTorch (median of epochs 2-3)"
run() {  # run NAME COMMAND...: the command under a limit; its --json into NAME.json
  local name=$1; shift
  timeout 120 "$@" --json "$logs/$name.json" > "$logs/$name.txt" 2>&1 || echo "$name failed: rc $?"
}
names=(cifar_ours_tf32 cifar_ours_tf32_2stage cifar_ours_fp32 cifar_torch_tf32 cifar_torch_fp32)
run cifar_ours_tf32 "${cifar[@]}" --epochs 3 --tf32
run cifar_ours_tf32_2stage env ENGINE_CONV_TF32_STAGES=2 "${cifar[@]}" --epochs 3 --tf32
run cifar_ours_fp32 "${cifar[@]}" --epochs 3
run cifar_torch_tf32 python3 scripts/pytorch/cifar10_cnn.py --dataset synthetic --epochs 3 --device cuda
run cifar_torch_fp32 python3 scripts/pytorch/cifar10_cnn.py --dataset synthetic --epochs 3 --device cuda --no-tf32
if [ -d "$data/fashion" ]; then
  mnist=(build-gpu/apps/mnist_cnn --gpu --dataset fashion --data-dir "$data" --epochs 3)
  torch_mnist=(python3 scripts/pytorch/mnist_cnn.py --dataset fashion --data-dir "$data" --epochs 3 --device cuda)
  names+=(mnist_ours_tf32 mnist_ours_fp32 mnist_torch_tf32 mnist_torch_fp32)
  run mnist_ours_tf32 "${mnist[@]}" --tf32
  run mnist_ours_fp32 "${mnist[@]}"
  run mnist_torch_tf32 "${torch_mnist[@]}"
  run mnist_torch_fp32 "${torch_mnist[@]}" --no-tf32
else
  echo "no $data/fashion: the MNIST CNN is not timed"
fi
python3 - "$logs" "${names[@]}" <<'PY2'
import json, statistics, sys, os
for name in sys.argv[2:]:
    path = os.path.join(sys.argv[1], name + ".json")
    if not os.path.exists(path):
        print(f"{name:24s}: no record"); continue
    r = json.load(open(path))
    epochs = r.get("epochs_run") or r.get("epochs") or []
    secs = [e["seconds"] for e in epochs if isinstance(e, dict) and "seconds" in e][1:]
    print(f"{name:24s}: epochs 2+ {', '.join(f'{s:.3f}' for s in secs)} s; median {statistics.median(secs):.3f} s" if secs else f"{name:24s}: {sorted(r)[:12]}")
PY2

echo "== 2. ncu: every kernel of 3 op-by-op --tf32 steps, grouped (scripts/ncu_step_table.py)"
step_table() {  # NAME APP...: ncu over three op-by-op steps of APP, then the table
  local name=$1; shift
  timeout 150 ncu --nvtx --nvtx-include "engine@train_step/" --metrics gpu__time_duration.sum --csv \
    "$@" --tf32 --no-graph --epochs 1 --steps-per-epoch 3 > "$logs/ncu_${name}_steps.csv" 2> "$logs/ncu_${name}_steps.err"
  echo "$name: rc $?"
  python3 scripts/ncu_step_table.py "$logs/ncu_${name}_steps.csv" --steps 3
}
step_table cifar "${cifar[@]}" --test-images 100
[ -d "$data/fashion" ] && step_table mnist build-gpu/apps/mnist_cnn --gpu --dataset fashion --data-dir "$data"

if [ -n "${SECTIONS:-}" ]; then
echo "== 3. ncu sections: the implicit-GEMM convolutions of one --tf32 step"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
timeout 200 ncu $sections --nvtx --nvtx-include "engine@train_step/" -k "regex:implicit_gemm|few_channels" \
  --launch-skip 12 --launch-count 12 "${cifar[@]}" --tf32 --no-graph --epochs 1 --steps-per-epoch 3 \
  --test-images 100 > "$logs/ncu_conv_sections.txt" 2>&1; echo "rc $?"
grep -E "implicit_gemm_kernel|few_channels|Duration|Achieved Occupancy|Registers Per|Compute \(SM\) Throughput|Memory Throughput|Stall|One or More Eligible|L1/TEX Hit|L2 Hit" \
  "$logs/ncu_conv_sections.txt" | head -120
fi

echo "== 4. kernel_bench --conv-only: ours vs cuDNN per layer pass"
timeout 100 build-gpu/apps/kernel_bench --conv-only --conv-csv "$logs/conv_bench.csv" > "$logs/conv_bench.txt" 2>&1
echo "rc $?"
grep -E "engine|cudnn" "$logs/conv_bench.txt" | awk '{printf "%-32s %-12s %8s %8s\n", $1" "$2" "$3, $4, $5, $7}' | paste - - - - | head -30
