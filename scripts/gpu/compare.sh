#!/usr/bin/env bash
# Before/after timings for a change that must not move speed: the tree at BEFORE_DIR (a
# `git archive` of the base commit, carried to the GPU machine) and this tree, built alike and
# run in turn, three rounds: the seed MLP's step (graph and --no-graph), the CIFAR-10 CNN's
# --tf32 epoch (synthetic data), the MNIST CNN's epoch (Fashion-MNIST), the val=1000 Jacobian
# and the CPU MLP's epoch. Usage: scripts/gpu/compare.sh OUT_DIR BEFORE_DIR [DATA_DIR]
set -uo pipefail
out=${1:?out dir}; before=${2:?before dir}; data=${3:-.devdata}; [ -d "$data" ] || data=data
data=$(realpath "$data")
logs=$out/compare; mkdir -p "$logs"
trap 'sleep 1; tar czf "$out/compare.tgz" -C "$out" compare' EXIT  # sleep: tee's last lines
exec > >(tee "$logs/summary.txt") 2>&1
cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn
build() {  # SOURCE BUILD
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DBUILD_TESTING=OFF -DCUDNN_ROOT=$cudnn > "$logs/$(basename "$2").log" 2>&1 &&
    cmake --build "$2" -j 8 >> "$logs/$(basename "$2").log" 2>&1
  echo "$2: rc $?"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
build "$before" /tmp/cmp-before & first=$!
build . /tmp/cmp-after & second=$!
wait $first $second  # by name: a bare wait would also wait for the tee above
# One figure per run: NAME COMMAND... prints the line's figure.
figure() {
  local pattern=$1; shift
  "$@" > /tmp/cmp.txt 2>&1 || { echo "failed: $*"; tail -3 /tmp/cmp.txt; return; }
  grep -oE "$pattern" /tmp/cmp.txt | tail -1 | grep -oE '[0-9]+(\.[0-9]+)?' | head -1
}
# The MLP prints no epoch line: the median epoch from its --json.
cpu_epoch() {
  "$@" --json /tmp/cmp.json > /tmp/cmp.txt 2>&1 || { echo "failed: $*"; return; }
  python3 -c "import json,statistics; print('%.3f' % statistics.median(e['seconds'] for e in json.load(open('/tmp/cmp.json'))['epochs_run']))"
}
for round in 1 2 3; do
  for side in before after; do
    b=/tmp/cmp-$side/apps
    echo "round $round $side:" \
      "mlp_graph_us=$(figure 'median [0-9.]+ us/step' $b/mnist_mlp --gpu --dataset fashion --data-dir "$data" --epochs 3)" \
      "mlp_nograph_us=$(figure 'median [0-9.]+ us/step' $b/mnist_mlp --gpu --no-graph --dataset fashion --data-dir "$data" --epochs 3)" \
      "cifar_tf32_s=$(figure 'median [0-9.]+ s' $b/cifar10_cnn --gpu --tf32 --epochs 3)" \
      "mnist_cnn_s=$(figure 'median [0-9.]+ s' $b/mnist_cnn --gpu --dataset fashion --data-dir "$data" --epochs 3)" \
      "jacobian1000_ms=$(figure 'then median [0-9.]+ ms' $b/jacobian_mlp --gpu --val 1000 --dense --repeats 11)" \
      "cpu_mlp_s=$(cpu_epoch $b/mnist_mlp --cpu --dataset fashion --data-dir "$data" --epochs 3)"
  done
done
