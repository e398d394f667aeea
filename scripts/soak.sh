#!/usr/bin/env bash
# The soak run (issue 9): the seed-000 small MLP for 20 epochs on the CPU and, where --gpu can be
# used, 200 on the GPU, with --json and --breakdown; then scripts/plot_soak.py draws the memory
# after every epoch (host RSS, the device allocator's bytes in use and reserved) and fails if it
# grows after epoch 2. Memory should be flat after the first epoch: every step makes the same
# requests, which the caching allocator serves from its cache.
#
# Usage: scripts/soak.sh [OUT_DIR] [-- extra mnist_mlp flags, e.g. --threads 2 --steps-per-epoch 500]
# Environment: BUILD (default build), DATA_DIR (data), DATASET (fashion: the seed's 60,000
# images), CPU_EPOCHS (20), GPU_EPOCHS (200).
# Writes OUT_DIR (default results/soak): soak_cpu.json, soak_gpu.json, their outputs (*.log),
# summary.txt, soak.gp and, with gnuplot, soak.png and soak.svg.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/soak}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
app=${BUILD:-build}/apps/mnist_mlp
[ -x "$app" ] || { echo "soak.sh: no $app (build it first: cmake --build ${BUILD:-build} --target mnist_mlp)" >&2; exit 2; }
mkdir -p "$out"
common=(--dataset "${DATASET:-fashion}" --data-dir "${DATA_DIR:-data}" --breakdown "$@")

echo "=== CPU: ${CPU_EPOCHS:-20} epochs ==="
"$app" --cpu --epochs "${CPU_EPOCHS:-20}" --json "$out/soak_cpu.json" "${common[@]}" | tee "$out/soak_cpu.log"
runs=("cpu=$out/soak_cpu.json")

echo "=== GPU: ${GPU_EPOCHS:-200} epochs ==="
status=0
"$app" --gpu --epochs "${GPU_EPOCHS:-200}" --json "$out/soak_gpu.json" "${common[@]}" \
  > "$out/soak_gpu.log" 2> "$out/soak_gpu.err" || status=$?
if [ "$status" -eq 0 ]; then
  tail -n 20 "$out/soak_gpu.log"
  runs+=("gpu=$out/soak_gpu.json")
elif [ "$status" -eq 2 ] && grep -q "cannot use the GPU" "$out/soak_gpu.err"; then
  echo "(no GPU soak: $(cat "$out/soak_gpu.err"))"
  rm -f "$out/soak_gpu.log" "$out/soak_gpu.err"
else
  cat "$out/soak_gpu.err" >&2
  exit "$status"
fi

echo "=== memory after every epoch ==="
python3 scripts/plot_soak.py "$out" "${runs[@]}"
