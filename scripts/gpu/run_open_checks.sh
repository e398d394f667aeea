#!/usr/bin/env bash
# The GPU checks the evening of 2026-11-23 left open, in one call on the GPU machine (~6 min):
#   1. memcheck over the engine's --tf32 v11 path (test_matmul_ladder's engine cases: K-major
#      copies through strided_copy, then v11) (issue 4; the whole suite: scripts/gpu/sanitize.sh);
#   2. --breakdown on the seed-000 MLP, and the same run without it (its overhead), against the
#      acceptance "the named buckets explain >= 95% of the wall time" (issue 8,
#      scripts/gpu/breakdown_cost.sh);
#   3. the soak run, 200 GPU epochs and 20 CPU epochs (issue 9, scripts/soak.sh);
#   4. ncu's kernel times of 3 op-by-op steps, to cross-check the breakdown's device time.
# Usage: scripts/gpu/run_open_checks.sh OUT_DIR   (carry .devdata for the Fashion-MNIST files)
# Every step has its own time limit; everything lands in OUT_DIR/open_checks.tgz.
set -uo pipefail
out=${1:?out dir}
logs=$out/open_checks; mkdir -p "$logs"
trap 'tar czf "$out/open_checks.tgz" -C "$out" open_checks' EXIT
threads=$(nproc)
data=.devdata; [ -d "$data" ] || data=data
echo "== host"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 2>/dev/null
cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DENGINE_TEST_DATA_DIR="$PWD/$data" > "$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
timeout 240 cmake --build build-gpu -j "$threads" --target test_matmul_ladder mnist_mlp > "$logs/build.log" 2>&1 ||
  { grep -E "error" -A5 "$logs/build.log" | head -40; exit 1; }
echo "build warnings: $(grep -c warning "$logs/build.log")"

echo "== 1. memcheck: the engine's matmul (v11 path included)"
timeout 150 compute-sanitizer --tool memcheck build-gpu/tests/test_matmul_ladder -tc="engine matmul*" \
  > "$logs/memcheck_engine_matmul.txt" 2>&1; echo "rc $?"
grep -E "ERROR SUMMARY|test cases" "$logs/memcheck_engine_matmul.txt"
echo "== 2. --breakdown on the seed-000 MLP: its cost and the share of the wall it explains"
BUILD=build-gpu DATA_DIR="$data" scripts/gpu/breakdown_cost.sh "$logs/breakdown" 3

echo "== 3. soak: 200 GPU epochs, 20 CPU epochs"
BUILD=build-gpu DATA_DIR="$data" timeout 180 scripts/soak.sh "$logs/soak" -- --threads "$threads" \
  > "$logs/soak.txt" 2>&1; echo "rc $?"
tail -12 "$logs/soak.txt"

echo "== 4. ncu: kernel times of 3 op-by-op steps (the breakdown's device time, cross-checked)"
timeout 120 ncu --nvtx --nvtx-include "engine@train_step/" --metrics gpu__time_duration.sum --csv \
  build-gpu/apps/mnist_mlp --gpu --no-graph --dataset synthetic --epochs 1 --steps-per-epoch 3 \
  > "$logs/ncu_steps.csv" 2> "$logs/ncu_steps.err"; echo "rc $?"
