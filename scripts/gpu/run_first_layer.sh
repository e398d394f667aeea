#!/usr/bin/env bash
# The few-channels filter-gradient kernel on the GPU machine: the conv tests and memcheck over
# them, then the apps whose first layer uses it (Dogs vs Cats, the CIFAR-10 and MNIST CNNs),
# with the Dogs-vs-Cats profile. Usage: scripts/gpu/run_first_layer.sh DATA_DIR OUT_DIR
set -uo pipefail
data=${1:?data dir}; out=${2:?out dir}
cmake -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DENGINE_TEST_DATA_DIR="$PWD/$data" \
  -DCUDNN_ROOT=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn > "$out/configure.log" 2>&1
cmake --build build-dev -j "$(nproc)" > "$out/build.log" 2>&1 || grep -E "error" -A5 "$out/build.log" | head -30
echo "== test_gpu_conv"; timeout 300 ./build-dev/tests/test_gpu_conv 2>&1 | tail -3
echo "== memcheck"; timeout 300 compute-sanitizer --tool memcheck ./build-dev/tests/test_gpu_conv -tc="*odd sizes*,*empty batch*" 2>&1 | grep -E "ERROR SUMMARY|test cases"
./build-dev/datasets/make_dogs_cats --out /tmp/dogs_cats > /dev/null
echo "== dogs gpu"; timeout 120 ./build-dev/apps/dogs_vs_cats --gpu --data-dir /tmp/dogs_cats --epochs 10 --augment-on gpu --json "$out/dogs_gpu.json" 2>&1 | grep -E "Seconds per|step:|Validation acc"
echo "== dogs gpu --tf32"; timeout 120 ./build-dev/apps/dogs_vs_cats --gpu --tf32 --data-dir /tmp/dogs_cats --epochs 10 --augment-on gpu --json "$out/dogs_gpu_tf32.json" 2>&1 | grep -E "Seconds per|step:|Validation acc"
echo "== dogs profile"; timeout 120 ./build-dev/apps/dogs_vs_cats --gpu --cache --augment-on gpu --data-dir /tmp/dogs_cats --epochs 2 --profile > "$out/profile_dogs_gpu.txt" 2>&1; sed -n '/^Profile/,$p' "$out/profile_dogs_gpu.txt" | head -12
echo "== cifar10_cnn synthetic, gpu --tf32 and FP32"; for f in "--tf32" ""; do timeout 120 ./build-dev/apps/cifar10_cnn --gpu $f --dataset synthetic --epochs 3 2>&1 | grep -E "Seconds per|step:"; done
echo "== mnist_cnn fashion gpu"; timeout 120 ./build-dev/apps/mnist_cnn --gpu --dataset fashion --data-dir "$data" --epochs 3 2>&1 | grep -E "Seconds per|step:|test accuracy"
