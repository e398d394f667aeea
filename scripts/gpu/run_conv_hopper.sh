#!/usr/bin/env bash
# The convolutions' Hopper kernel (kernels/conv/tma_wgmma.cu) on the GPU machine: its tests and
# the matmul ladder's (which shares its TMA helpers), the sanitizers over its test case, every
# seed conv layer pass against cuDNN with it (the default on a 9.0 GPU) and without it
# (ENGINE_MAX_COMPUTE_CAPABILITY=8.0: the mma.sync implicit GEMMs), and the CNN epochs both ways.
# Usage: scripts/gpu/run_conv_hopper.sh OUT_DIR [PARTS]   (logs: OUT_DIR/conv_hopper.tgz)
#   PARTS: any of "tests sanitizers bench epochs" (default: all of them)
set -uo pipefail
out=${1:?out dir}; parts=" ${2:-tests sanitizers bench epochs} "
want() { [[ $parts == *" $1 "* ]]; }
logs=$out/conv_hopper; mkdir -p "$logs"
trap 'tar czf "$out/conv_hopper.tgz" -C "$out" conv_hopper' EXIT
data=$PWD/.devdata; [ -d "$data" ] || data=$PWD/data
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DENGINE_TEST_DATA_DIR="$data" \
  -DCUDNN_ROOT=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn > "$logs/configure.log" 2>&1 ||
  { tail -30 "$logs/configure.log"; exit 1; }
timeout 420 cmake --build build-gpu -j "$(nproc)" --target test_gpu_conv test_matmul_ladder kernel_bench \
  cifar10_cnn mnist_cnn > "$logs/build.log" 2>&1 || { grep -E "error" -A5 "$logs/build.log" | head -40; exit 1; }
echo "build warnings: $(grep -c warning "$logs/build.log")"
hopper_case='-tc=the Hopper kernel*'

if want tests; then
  echo "== tests"
  for t in test_gpu_conv test_matmul_ladder; do
    timeout 300 "build-gpu/tests/$t" > "$logs/$t.log" 2>&1
    echo "$t: rc $? | $(grep -E "test cases" "$logs/$t.log")"
    grep -B2 -A8 "ERROR\|FAILED\|failed!" "$logs/$t.log" | head -30
  done
fi

if want sanitizers; then
  echo "== sanitizers over the Hopper kernel's test case"
  for tool in memcheck racecheck synccheck initcheck; do
    timeout 240 compute-sanitizer --tool "$tool" build-gpu/tests/test_gpu_conv "$hopper_case" > "$logs/sanitizer_$tool.log" 2>&1
    echo "$tool: rc $? | $(grep -E "test cases" "$logs/sanitizer_$tool.log") $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitizer_$tool.log" | tail -1)"
  done
fi

if want bench; then
  echo "== kernel_bench --conv-only: with the Hopper kernel, then without (mma.sync), against cuDNN"
  timeout 120 build-gpu/apps/kernel_bench --conv-only --conv-csv "$logs/conv_bench_hopper.csv" > "$logs/conv_bench_hopper.txt" 2>&1
  echo "rc $?"
  ENGINE_MAX_COMPUTE_CAPABILITY=8.0 timeout 120 build-gpu/apps/kernel_bench --conv-only \
    --conv-csv "$logs/conv_bench_mma_sync.csv" > "$logs/conv_bench_mma_sync.txt" 2>&1
  echo "rc $?"
  python3 - "$logs/conv_bench_hopper.csv" "$logs/conv_bench_mma_sync.csv" <<'PY'
import csv, sys
def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))
new, old = rows(sys.argv[1]), rows(sys.argv[2])
print("columns:", ", ".join(new[0].keys()) if new else "none")
for a, b in zip(new, old):
    print(" | ".join(a.values()), " || without:", " | ".join(b.values()))
PY
fi

if want epochs; then
  echo "== epochs, median of epochs 2-3 of 3 (synthetic CIFAR-10; Fashion-MNIST for the MNIST CNN)"
  epoch() {  # epoch NAME COMMAND...: the command's --json into NAME.json, then its median epoch
    local name=$1; shift
    timeout 150 "$@" --json "$logs/$name.json" > "$logs/$name.txt" 2>&1 || echo "$name: rc $?"
    python3 -c 'import json,sys,statistics as s; e=json.load(open(sys.argv[1]))["epochs_run"]; print("%-30s %.4f s" % (sys.argv[2], s.median([x["seconds"] for x in e[1:]])))' \
      "$logs/$name.json" "$name" 2>/dev/null || echo "$name: no record"
  }
  cifar=(build-gpu/apps/cifar10_cnn --dataset synthetic --epochs 3)
  mnist=(build-gpu/apps/mnist_cnn --dataset fashion --data-dir "$data" --epochs 3)
  torch_cifar=(python3 scripts/pytorch/cifar10_cnn.py --dataset synthetic --epochs 3 --device cuda)
  torch_mnist=(python3 scripts/pytorch/mnist_cnn.py --dataset fashion --data-dir "$data" --epochs 3 --device cuda)
  for model in cifar mnist; do
    declare -n ours=$model torch=torch_$model
    epoch "${model}_ours_tf32" "${ours[@]}" --gpu --tf32
    epoch "${model}_ours_tf32_mma_sync" env ENGINE_MAX_COMPUTE_CAPABILITY=8.0 "${ours[@]}" --gpu --tf32
    epoch "${model}_ours_fp32" "${ours[@]}" --gpu
    epoch "${model}_ours_cudnn_tf32" "${ours[@]}" --device cudnn --tf32
    epoch "${model}_torch_eager_tf32" "${torch[@]}"
    epoch "${model}_torch_eager_fp32" "${torch[@]}" --no-tf32
    epoch "${model}_torch_best_tf32" "${torch[@]}" --graphed
    epoch "${model}_torch_best_fp32" "${torch[@]}" --graphed --no-tf32
    unset -n ours torch
  done
fi
