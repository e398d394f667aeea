#!/usr/bin/env bash
# GPU faults (issue 9, item 3), on a real GPU: tests/gpu_fault_probe makes strided_copy read 4 TiB
# past its input.
#  - plain: the fault surfaces at the next synchronize; one line names CUDA's error, the call
#    that saw it and the last kernel launched before (strided_copy's), says to rerun with
#    --sync-check, and the exit status is 2 (no crash, no hang while cleaning up).
#  - --sync-check: one line names the op (strided_copy and its size), the kernel and its launch
#    site, and CUDA's error; exit status 2.
# Exits 77 (ctest: skipped, never passed) where no GPU can be used.
# Usage: test_gpu_fault.sh PATH/TO/gpu_fault_probe
set -uo pipefail
probe=${1:?gpu_fault_probe binary}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

# A hang after a fault is a failure too: 120 s is far beyond the probe's second.
timeout 120 "$probe" > "$tmp/out" 2> "$tmp/err"; status=$?
if [ "$status" -eq 77 ]; then cat "$tmp/err"; exit 77; fi

expect_status 2 "illegal address, plain" -- timeout 120 "$probe"
expect_text "$tmp/err" "gpu_fault_probe: GPU fault: an illegal memory access was encountered" \
  "(cudaErrorIllegalAddress), reported by cudaStreamSynchronize" \
  "the last kernel launched before that: strided_copy_kernel launched at kernels/strided_copy.cu:" \
  "rerun with --sync-check to find the op exactly"

expect_status 2 "illegal address, --sync-check" -- timeout 120 "$probe" --sync-check
expect_text "$tmp/err" \
  "gpu_fault_probe: GPU fault in op strided_copy 256: an illegal memory access was encountered (cudaErrorIllegalAddress), in strided_copy_kernel launched at kernels/strided_copy.cu:" \
  "[--sync-check]"
if grep -q "rerun with --sync-check" "$tmp/err"; then
  echo "FAIL: --sync-check's message still says to rerun with --sync-check"; failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all GPU fault checks passed"
