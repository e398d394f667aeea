#!/usr/bin/env bash
# The GPU checks the evening of 2026-11-23 left open, in one call on the GPU machine (~6 min):
#   1. memcheck over the engine's --tf32 v11 path (test_matmul_ladder's engine cases: K-major
#      copies through strided_copy, then v11) and over the whole ladder suite (issue 4);
#   2. --breakdown on the seed-000 MLP, and the same run without it (its overhead), against the
#      acceptance "the named buckets explain >= 95% of the wall time" (issue 8);
#   3. the soak run, 200 GPU epochs and 20 CPU epochs (issue 9, scripts/soak.sh);
#   4. ncu's kernel times of 3 op-by-op steps, to cross-check the breakdown's device time.
# Usage: scripts/device_run_open_checks.sh OUT_DIR   (carry .devdata for the Fashion-MNIST files)
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

echo "== 1. memcheck: the engine's matmul (v11 path included), then the whole ladder suite"
timeout 150 compute-sanitizer --tool memcheck build-gpu/tests/test_matmul_ladder -tc="engine matmul*" \
  > "$logs/memcheck_engine_matmul.txt" 2>&1; echo "rc $?"
grep -E "ERROR SUMMARY|test cases" "$logs/memcheck_engine_matmul.txt"
timeout 200 compute-sanitizer --tool memcheck build-gpu/tests/test_matmul_ladder -tce="engine matmul*" \
  > "$logs/memcheck_ladder_versions.txt" 2>&1; echo "rc $?"
grep -E "ERROR SUMMARY|test cases" "$logs/memcheck_ladder_versions.txt"

echo "== 2. --breakdown, seed-000 MLP on Fashion-MNIST, 5 epochs; then without it"
mlp=(build-gpu/apps/mnist_mlp --gpu --dataset fashion --data-dir "$data" --epochs 5)
timeout 60 "${mlp[@]}" --breakdown --json "$logs/breakdown.json" > "$logs/breakdown.txt" 2>&1; echo "rc $?"
grep -E "^epoch|^all|measured" "$logs/breakdown.txt" | tail -8
timeout 60 "${mlp[@]}" --json "$logs/no_breakdown.json" > "$logs/no_breakdown.txt" 2>&1; echo "rc $?"
python3 - "$logs/breakdown.json" "$logs/no_breakdown.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print("median step, with --breakdown: %s us, without: %s us" % (a.get("median_step_us"), b.get("median_step_us")))
PY

echo "== 3. soak: 200 GPU epochs, 20 CPU epochs"
BUILD=build-gpu DATA_DIR="$data" timeout 180 scripts/soak.sh "$logs/soak" -- --threads "$threads" \
  > "$logs/soak.txt" 2>&1; echo "rc $?"
tail -12 "$logs/soak.txt"

echo "== 4. ncu: kernel times of 3 op-by-op steps (the breakdown's device time, cross-checked)"
timeout 120 ncu --nvtx --nvtx-include "engine@train_step/" --metrics gpu__time_duration.sum --csv \
  build-gpu/apps/mnist_mlp --gpu --no-graph --dataset synthetic --epochs 1 --steps-per-epoch 3 \
  > "$logs/ncu_steps.csv" 2> "$logs/ncu_steps.err"; echo "rc $?"
