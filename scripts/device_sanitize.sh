#!/usr/bin/env bash
# compute-sanitizer's four tools over every GPU test suite (issue 9): memcheck (out-of-bounds
# and misaligned accesses, leaks of device memory), racecheck (shared-memory hazards between
# threads of a block), initcheck (reads of device memory nothing wrote) and synccheck (barriers
# that not every thread reaches). One summary line per tool and suite into OUT/sanitize.txt.
# Usage: scripts/device_sanitize.sh BUILD_DIR OUT_DIR [SECONDS_PER_RUN] (after a CUDA build)
#
# The 32 runs go 16 at a time: a sanitized run is CPU-bound on the host far more than it loads
# the GPU. Each has a time limit (default 150 s; racecheck over the large GEMM cases can take
# longer): a run cut short says so on its line, with the test cases it had passed. test_gpu_backend's
# out-of-memory case asks cudaMalloc for more than the device has on purpose, which memcheck
# counts as an error: that case runs apart, and its count is reported on its own line.
set -uo pipefail
build=${1:?build dir}; out=${2:?out dir}; limit=${3:-150}
suites="test_gpu_parity test_gpu_backend test_gpu_dot test_gpu_jacobian test_gpu_augment
        test_gpu_conv test_gpu_vendor test_matmul_ladder"
mkdir -p "$out/sanitize_logs"
one_run() {  # one_run TOOL SUITE: a line "TOOL SUITE: rc | summary | test cases"
  local tool=$1 s=$2 bin=$build/tests/$2 log=$out/sanitize_logs/$1_$2.txt extra=()
  [ -x "$bin" ] || { echo "$tool $s: not built"; return; }
  [ "$s" = test_gpu_backend ] && extra=(-tce="*more device memory*")
  timeout "$limit" compute-sanitizer --tool "$tool" "$bin" "${extra[@]}" > "$log" 2>&1
  local rc=$? summary cases
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1 | sed 's/^=* *//')
  cases=$(grep -E "test cases" "$log" | tail -1 | sed 's/^\[doctest\] *//')
  [ "$rc" -eq 124 ] && summary="cut at ${limit} s"
  echo "$tool $s: rc $rc | ${summary:-no summary} | ${cases:-no doctest summary}"
}
export -f one_run; export build out limit
for tool in memcheck racecheck initcheck synccheck; do
  for s in $suites; do echo "$tool $s"; done
done | xargs -P 16 -L 1 bash -c 'one_run "$0" "$1"' | sort > "$out/sanitize.txt"
if [ -x "$build/tests/test_gpu_backend" ]; then
  timeout 120 compute-sanitizer --tool memcheck "$build/tests/test_gpu_backend" -tc="*more device memory*" \
    > "$out/sanitize_logs/memcheck_oom.txt" 2>&1
  echo "memcheck test_gpu_backend, its deliberate out-of-memory case alone: rc $? |" \
    "$(grep -E 'ERROR SUMMARY' "$out/sanitize_logs/memcheck_oom.txt" | tail -1 | sed 's/^=* *//') |" \
    "$(grep -c 'cudaErrorMemoryAllocation' "$out/sanitize_logs/memcheck_oom.txt") reports of cudaErrorMemoryAllocation" \
    >> "$out/sanitize.txt"
fi
cat "$out/sanitize.txt"
