#!/usr/bin/env bash
# --profile on the GPU machine (issue 8): the op tables of the seed-000 MLP and of Dogs vs
# Cats on our kernels, the MLP's also on the CPU, and compute-sanitizer over a profiled run.
# Usage: scripts/gpu/run_profile.sh DATA_DIR OUT_DIR   (after scripts/gpu/run_dogs.sh built
# build-dev and wrote /tmp/dogs_cats)
set -uo pipefail
data=${1:?data dir}; out=${2:?out dir}
mlp=./build-dev/apps/mnist_mlp; dogs=./build-dev/apps/dogs_vs_cats
echo "== mnist_mlp --gpu --profile, Fashion-MNIST, 1 epoch"
timeout 120 $mlp --gpu --dataset fashion --data-dir "$data" --epochs 1 --profile > "$out/profile_mlp_gpu.txt" 2>&1
sed -n '/^Profile/,$p' "$out/profile_mlp_gpu.txt" | head -24
grep -E "Seconds per|step:" "$out/profile_mlp_gpu.txt"
echo "== mnist_mlp --gpu without --profile, for the step time"
timeout 120 $mlp --gpu --dataset fashion --data-dir "$data" --epochs 1 2>&1 | grep -E "step:"
echo "== mnist_mlp --cpu --profile, 1 epoch"
timeout 200 $mlp --cpu --dataset fashion --data-dir "$data" --epochs 1 --profile > "$out/profile_mlp_cpu.txt" 2>&1
sed -n '/^Profile/,$p' "$out/profile_mlp_cpu.txt" | head -14
echo "== dogs_vs_cats --gpu --cache --augment-on gpu --profile, 2 epochs"
timeout 120 $dogs --gpu --cache --augment-on gpu --data-dir /tmp/dogs_cats --epochs 2 --profile > "$out/profile_dogs_gpu.txt" 2>&1
sed -n '/^Profile/,$p' "$out/profile_dogs_gpu.txt" | head -30
echo "== compute-sanitizer memcheck, a profiled GPU run"
timeout 200 compute-sanitizer --tool memcheck $mlp --gpu --data-dir "$data" --epochs 1 --steps-per-epoch 100 --profile 2>&1 | grep -E "ERROR SUMMARY"
timeout 100 ./build-dev/tests/test_profiler 2>&1 | tail -2
