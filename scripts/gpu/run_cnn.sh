#!/usr/bin/env bash
# Build and measure the CNN apps on the GPU machine (issue 6): seed 003's CIFAR-10 CNN and the
# Keras MNIST CNN, each with our kernels (FP32 and --tf32), on cuDNN (--device cudnn), on our
# CPU, and PyTorch on the same host (cuda with its TF32 default and with --no-tf32, cpu).
# CIFAR-10 is synthetic there (not packaged), which times the same work as the real set.
# Usage: scripts/gpu/run_cnn.sh DATA_DIR OUT_DIR   (DATA_DIR from scripts/fetch_data.sh)
# Every step has its own time limit so one slow step cannot eat the whole device session; CPU
# runs are cut to a few steps per epoch and the apps extrapolate the whole epoch.
set -uo pipefail
data=${1:?data dir}; out=${2:?out dir}
threads=$(nproc)
export PYTHONUNBUFFERED=1
# step TITLE COMMAND...: runs COMMAND under a time limit, printing its output without the
# summary table (the parameter count stays) and its exit status when it failed.
step() {
  echo "== $1"; shift
  timeout 150 "$@" > "$out/step.log" 2>&1; local rc=$?
  grep -vE '^ |^_|^=|^$' "$out/step.log"
  [ "$rc" -eq 0 ] || echo "(step failed or timed out: rc $rc)"
}
cmake -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DENGINE_TEST_DATA_DIR="$PWD/$data" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
grep -i "cudnn" "$out/configure.log"
cmake --build build-dev -j "$threads" -- -k 0 > "$out/build.log" 2>&1 || grep -E "error" -A5 "$out/build.log" | head -40
(cd build-dev && timeout 300 ctest --output-on-failure -R "cnn|cifar" 2>&1 | tail -12)
echo "== host"; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

cifar=(./build-dev/apps/cifar10_cnn --dataset synthetic --epochs 3)
mnist=(./build-dev/apps/mnist_cnn --dataset fashion --data-dir "$data" --epochs 3)
# ours NAME APP_AND_ARGS...: the app on every backend.
ours() {
  local name=$1; shift
  step "ours $name, gpu FP32" "$@" --gpu --json "$out/ours_${name}_gpu.json"
  step "ours $name, gpu TF32" "$@" --gpu --tf32 --json "$out/ours_${name}_gpu_tf32.json"
  step "ours $name, cudnn FP32" "$@" --device cudnn --json "$out/ours_${name}_cudnn.json"
  step "ours $name, cudnn TF32" "$@" --device cudnn --tf32 --json "$out/ours_${name}_cudnn_tf32.json"
  step "ours $name, cpu $threads threads, 2 epochs of 20 steps" "$@" --cpu --epochs 2 \
    --steps-per-epoch 20 --test-images 1000 --threads "$threads" --json "$out/ours_${name}_cpu.json"
}
ours cifar "${cifar[@]}"
ours mnist "${mnist[@]}"
step "ours cifar --relu, gpu TF32" "${cifar[@]}" --gpu --tf32 --relu
step "ours mnist, 8,000 real digits, gpu, 12 epochs" ./build-dev/apps/mnist_cnn --gpu \
  --data-dir "$data" --json "$out/ours_mnist8k_gpu.json"

# torch NAME SCRIPT_AND_ARGS...: the PyTorch reference on cuda (TF32 and FP32 convs) and cpu.
torch() {
  local name=$1; shift
  step "pytorch $name, cuda (TF32 convs, its default)" python3 "$@" --device cuda --json "$out/torch_${name}_cuda.json"
  step "pytorch $name, cuda --no-tf32" python3 "$@" --device cuda --no-tf32 --json "$out/torch_${name}_cuda_fp32.json"
  step "pytorch $name, cpu $threads threads, 2 epochs of 20 steps" python3 "$@" --device cpu \
    --threads "$threads" --epochs 2 --steps-per-epoch 20 --json "$out/torch_${name}_cpu.json"
}
torch cifar scripts/pytorch/cifar10_cnn.py --dataset synthetic --epochs 3
torch mnist scripts/pytorch/mnist_cnn.py --dataset fashion --data-dir "$data" --epochs 3
