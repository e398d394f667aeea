#!/usr/bin/env bash
# Build and measure the seed-000 MNIST MLP on the GPU machine: our CPU engine next to PyTorch
# on the same host, same data, same model. Usage: scripts/gpu/run_mnist.sh DATA_DIR OUT_DIR
# Every step has its own time limit so one slow step cannot eat the whole device session.
set -uo pipefail
data=${1:?data dir}; out=${2:?out dir}
threads=$(nproc)
export PYTHONUNBUFFERED=1
step() { echo "== $1"; shift; timeout 150 "$@" 2>&1 || echo "(step failed or timed out: rc $?)"; }
cmake -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DENGINE_TEST_DATA_DIR="$PWD/$data" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-dev -j "$threads" -- -k 0 > "$out/build.log" 2>&1 || grep -E "error" -A5 "$out/build.log" | head -40
(cd build-dev && timeout 300 ctest --output-on-failure -j 4 2>&1 | tail -8)
echo "== host"; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mlp=./build-dev/apps/mnist_mlp
step "ours, fashion, 10 epochs, $threads threads" $mlp --cpu --dataset fashion --data-dir "$data" --threads "$threads" --json "$out/ours_fashion_cpu.json"
for t in 1 4 8; do
  step "ours, fashion, 2 epochs, $t threads" $mlp --cpu --dataset fashion --data-dir "$data" --threads $t --epochs 2
done
step "ours wide, fashion, 2 epochs, $threads threads" $mlp --cpu --wide --dataset fashion --data-dir "$data" --threads "$threads" --epochs 2
if [ "${SEEDS:-0}" = 1 ]; then  # accuracy spread over seeds (slow; SEEDS=1 to run)
echo "== ours mnist 8k, seeds 1..10, 1 thread"
for s in $(seq 1 10); do echo "seed $s $($mlp --cpu --dataset mnist --data-dir "$data" --seed $s --threads 1 | grep 'Test accuracy')"; done
fi
ref=scripts/pytorch/mnist_mlp.py
step "pytorch, fashion, 10 epochs, cpu" python3 $ref --data-dir "$data" --dataset fashion --device cpu --threads "$threads" --json "$out/torch_fashion_cpu.json"
step "pytorch wide, fashion, 2 epochs, cpu" python3 $ref --data-dir "$data" --dataset fashion --device cpu --threads "$threads" --wide --epochs 2
step "pytorch, fashion, 2 epochs, cuda" python3 $ref --data-dir "$data" --dataset fashion --device cuda --epochs 2
if [ "${SEEDS:-0}" = 1 ]; then
echo "== pytorch mnist 8k, seeds 1..10"
for s in $(seq 1 10); do echo "seed $s $(python3 $ref --data-dir "$data" --dataset mnist --device cpu --threads "$threads" --seed $s | tail -1)"; done
fi
