#!/usr/bin/env bash
# compute-sanitizer's four tools over every GPU test suite (issue 9): memcheck (out-of-bounds
# and misaligned accesses, leaks of device memory), racecheck (shared-memory hazards between
# threads of a block), initcheck (reads of device memory nothing wrote) and synccheck (barriers
# that not every thread reaches). One summary line per tool and suite into OUT/sanitize.txt.
# Usage: scripts/gpu/sanitize.sh BUILD_DIR OUT_DIR [SECONDS_PER_RUN [JOBS_FILE]] (after a CUDA build)
#   JOBS_FILE: lines "TOOL SUITE [ENV=VALUE] [doctest flags]" to run instead of the full set,
#   e.g. the runs an earlier call had to cut: "racecheck test_gpu_conv --first=3".
#
# The runs go 16 at a time: a sanitized run is CPU-bound on the host far more than it loads
# the GPU. Each has a time limit (default 150 s): a run cut short says so on its line, with the
# test cases it had passed. racecheck over test_matmul_ladder's version cases takes far longer
# than that (every version, hundreds of shapes; 370 s covered a third of one case on an H100,
# 2026-11-23), so it runs as one process per version (ENGINE_MATMUL_VERSIONS) and one for the rest;
# test_gpu_jacobian's 40,000 backward passes at val=100 run apart from its other cases, racecheck
# over test_gpu_conv's seed-layer TF32 case a layer per process, initcheck over test_gpu_vendor's
# cuDNN convolutions a precision per process (see splits below). test_gpu_backend's
# out-of-memory case asks cudaMalloc for more than the device has on purpose, which memcheck
# counts as an error: that case runs apart, and its count is reported on its own line.
set -uo pipefail
build=${1:?build dir}; out=${2:?out dir}; limit=${3:-150}
suites="test_gpu_parity test_gpu_backend test_gpu_dot test_gpu_jacobian test_gpu_augment
        test_gpu_conv test_gpu_vendor test_matmul_ladder"
mkdir -p "$out/sanitize_logs"
one_run() {  # one_run TOOL SUITE [ENV=VALUE] [FLAGS...]: a line "TOOL SUITE ...: rc | summary | test cases"
  local tool=$1 s=$2; shift 2
  local env=() flags=("$@") bin=$build/tests/$s
  if [[ "${1:-}" == *=* && "${1:-}" != -* ]]; then env=("$1"); flags=("${@:2}"); fi
  local log=$out/sanitize_logs/${tool}_${s}$([ $# -gt 0 ] && printf '_%s' "$@" | tr -c 'A-Za-z0-9_.-' '_').txt
  [ -x "$bin" ] || { echo "$tool $s: not built"; return; }
  [ "$s" = test_gpu_backend ] && flags+=(-tce="*more device memory*")
  timeout "$limit" env "${env[@]}" compute-sanitizer --tool "$tool" "$bin" "${flags[@]}" > "$log" 2>&1
  local rc=$? summary cases
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1 | sed 's/^=* *//')
  cases=$(grep -E "test cases" "$log" | tail -1 | sed 's/^\[doctest\] *//')
  [ "$rc" -eq 124 ] && summary="cut at ${limit} s"
  echo "$tool $s${*:+ $*}: rc $rc | ${summary:-no summary} | ${cases:-no doctest summary}"
}
# The runs one (tool, suite) pair is split into: a line of doctest flags each, or one empty line
# for the whole suite. Each split gives a slow part a process (and the whole limit) of its own.
splits() {
  local tool=$1 s=$2
  case "$tool $s" in
    *" test_gpu_jacobian")  # a process per case, the batched modes per subcase
      local c
      for c in "*elementwise_jvp*" "*strided_copy*" "*central?differences*" "*loop?estimates*" \
               "*memory?limit*" "*val=1000*"; do
        echo "-tc=$c"
      done
      for c in auto?per-sample reverse?per-sample forward?dense reverse?dense; do
        echo "-tc=*every?batched?mode* -sc=$c"
      done
      # The seed's loop of 40,000 passes, but not under racecheck: by the loop's own estimate
      # 231 ms a pass there (H100), 2.5 hours. Its kernels at its shapes run in the batched
      # modes and in the case that refuses the loop after its first passes.
      [ "$tool" != racecheck ] && echo "-tc=*loop?of?backward?passes*"
      # Any case none of the patterns above names (a new one) still runs, in one more process.
      echo "-tce=*elementwise_jvp*,*strided_copy*,*central?differences*,*loop?estimates*,*memory?limit*,*val=1000*,*every?batched?mode*,*loop?of?backward?passes*" ;;
    "racecheck test_matmul_ladder")  # every version's cases apart, then the other cases
      for v in v1_naive v2_coalesced v3_smem_tiling v4_blocktile_1d v5_blocktile_2d v6_vectorized \
               v7_warptile v8_async_bigtile v9_tf32_mma v10_tf32_wgmma v11_tf32_tma; do
        echo "ENGINE_MATMUL_VERSIONS=$v -tc=every*"
      done
      echo "-tce=every*" ;;
    "racecheck test_gpu_conv")  # the pipelined kernel at the seed layers' tilings, a layer each
      local seed_case="-tc=*pipelined?TF32?kernel?at?the?seed*"
      for layer in 32x32x32 16x16x32 16x16x64 8x8x64 8x8x128 26x26x32 74x74x32; do
        echo "$seed_case -sc=$layer?->*"
      done
      echo "-tce=*pipelined?TF32?kernel?at?the?seed*" ;;
    "initcheck test_gpu_vendor")  # cuDNN's convolutions against a double loop, a precision each
      echo "-tc=*convolutions*match?a?double?loop* -sc=*(FP32)"
      echo "-tc=*convolutions*match?a?double?loop* -sc=*(TF32)"
      echo "-tce=*convolutions*match?a?double?loop*" ;;
    *) echo "" ;;
  esac
}
all_jobs() {
  for tool in memcheck racecheck initcheck synccheck; do
    for s in $suites; do
      splits "$tool" "$s" | while IFS= read -r flags; do echo "$tool $s${flags:+ $flags}"; done
    done
  done
}
export -f one_run; export build out limit
# Two phases. First the Jacobian's launch-bound runs by themselves (the loop: 40,000 passes of
# ~10 small launches; the memory limit: 1,600 one-direction sweeps), since every launch waits
# its turn when other sanitized processes keep the GPU busy (2026-11-24: the loop's own estimate
# under memcheck said 44 s, and the run was cut at 440 s beside 15 others). Then the rest, 16 at a time, the longest first (past 400 s each on an H100,
# 2026-11-23), so that each has its whole limit while the others fill the remaining slots.
alone='test_gpu_jacobian -tc=\*(loop\?of|memory)'
slow='initcheck test_gpu_vendor -tc=|v3_smem_tiling|racecheck test_gpu_conv -tc=|racecheck test_gpu_jacobian -tc=\*every'
jobs=$(if [ -n "${4:-}" ]; then cat "$4"; else all_jobs; fi)
run_jobs() { xargs -r -P 16 -L 1 bash -c 'one_run "$@"' one_run; }
{
  grep -E "$alone" <<< "$jobs" | run_jobs
  { grep -vE "$alone" <<< "$jobs" | grep -E "$slow"; grep -vE "$alone|$slow" <<< "$jobs"; } | run_jobs
} | sort > "$out/sanitize.txt"
if [ -x "$build/tests/test_gpu_backend" ]; then
  timeout 120 compute-sanitizer --tool memcheck "$build/tests/test_gpu_backend" -tc="*more device memory*" \
    > "$out/sanitize_logs/memcheck_oom.txt" 2>&1
  echo "memcheck test_gpu_backend, its deliberate out-of-memory case alone: rc $? |" \
    "$(grep -E 'ERROR SUMMARY' "$out/sanitize_logs/memcheck_oom.txt" | tail -1 | sed 's/^=* *//') |" \
    "$(grep -c 'cudaErrorMemoryAllocation' "$out/sanitize_logs/memcheck_oom.txt") reports of cudaErrorMemoryAllocation" \
    >> "$out/sanitize.txt"
fi
cat "$out/sanitize.txt"
