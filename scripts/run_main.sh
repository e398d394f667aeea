#!/usr/bin/env bash
# The main job: install, build, fetch the data, and run the seed-000 MNIST MLP experiment on
# the CPU and, where a GPU can be used, on the GPU, then print both times side by side.
# Extra arguments go to mnist_mlp (e.g. --dataset fashion for the full 60,000-image run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build --target mnist_mlp  # with the CUDA backend where nvcc is installed
scripts/fetch_data.sh data

mkdir -p results
echo; echo "=== mnist_mlp on the CPU ==="
build/apps/mnist_mlp --cpu --json results/mnist_mlp_cpu.json "$@"
cpu_time=$(grep -o '"total_seconds": [0-9.]*' results/mnist_mlp_cpu.json | grep -o '[0-9.]*$')

echo; echo "=== mnist_mlp on the GPU ==="
gpu_time=""
if build/apps/mnist_mlp --gpu --json results/mnist_mlp_gpu.json "$@"; then
  gpu_time=$(grep -o '"total_seconds": [0-9.]*' results/mnist_mlp_gpu.json | grep -o '[0-9.]*$')
else
  echo "(no GPU run: see the line above)"
fi

echo; echo "=== seed-000 MNIST MLP, 10 epochs + evaluate ==="
printf '%-6s %10s\n' device seconds
printf '%-6s %10.2f\n' cpu "$cpu_time"
if [ -n "$gpu_time" ]; then
  printf '%-6s %10.2f\n' gpu "$gpu_time"
  awk -v c="$cpu_time" -v g="$gpu_time" 'BEGIN { printf "the GPU took %.2fx the CPU time (%.1fx %s)\n", g / c, (g > c ? g / c : c / g), (g > c ? "slower" : "faster") }'
else
  printf '%-6s %10s\n' gpu "n/a"
fi
echo "(the article: i5-6200U CPU 52 s, GeForce 940M GPU 123 s, on 60,000 images)"
