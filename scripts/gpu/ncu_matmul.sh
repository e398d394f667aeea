#!/usr/bin/env bash
# Nsight Compute on the 4096^3 GEMMs: our best FP32 and TF32 versions next to cuBLAS's
# kernels, with the sections that say what limits each (issue rate, stalls, memory).
# Usage: scripts/gpu/ncu_matmul.sh OUT_DIR VERSIONS KERNEL_REGEX... (after a build in
# build-gpu): VERSIONS as kernel_bench --versions takes them, one report per regex.
set -uo pipefail
out=${1:?out dir}; versions=${2:?versions}
bench=build-gpu/apps/kernel_bench
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
echo "== kernel names at 4096^3"
timeout 120 ncu --metrics gpu__time_duration.sum --launch-count 12 $bench --sizes 4096 --no-seed-shapes \
  --versions "$versions" 2>&1 | grep -E "^  [a-zA-Z_].*\(|gpu__time" | head -24
for k in "${@:3}"; do
  echo "== ncu: $k"
  timeout 150 ncu $sections -k "regex:$k" --launch-count 1 $bench --sizes 4096 --no-seed-shapes \
    --versions "$versions" > "$out/ncu_$(echo "$k" | tr -c 'a-zA-Z0-9\n' _).txt" 2>&1; echo "rc $?"
done
