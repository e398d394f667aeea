#!/usr/bin/env bash
# One call on the GPU machine for seed 001 (Jacobians): build; the Jacobian tests, GPU ones
# included; compute-sanitizer memcheck over tests/test_gpu_jacobian and a short app run;
# apps/jacobian_mlp for every mode x view x device x val (the loop runs where its estimate is
# under LOOP_CAP seconds, else it reports the estimate); the same experiment in PyTorch on
# the same host. Prints a compact summary; every log and JSON record goes into ONE tarball,
# OUT_DIR/jacobian_logs.tgz, with the summary also in OUT_DIR/jacobian_summary.txt.
# Usage: scripts/gpu/run_jacobian.sh DATA_DIR OUT_DIR [full|ours|quick|cpu]
#   full: everything; ours: no PyTorch; quick: tests + GPU runs at val=100/1000, no CPU bench;
#   cpu: the CPU runs only (no tests, no PyTorch), to fit one call's time limit.
# Environment: LOOP_CAP (default 90) seconds for either loop; REPEATS (default 5).
set -uo pipefail
data=${1:?data dir}; out=${2:?out dir}; what=${3:-full}
threads=$(nproc)
loop_cap=${LOOP_CAP:-90}
repeats=${REPEATS:-5}
logs="$out/jacobian_logs"
mkdir -p "$logs"
summary="$out/jacobian_summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
finish() { tar -czf "$out/jacobian_logs.tgz" -C "$out" jacobian_logs && rm -rf "$logs"; }
trap finish EXIT
export PYTHONUNBUFFERED=1 ENGINE_DATA_DIR="$PWD/$data"

say "== host: $(lscpu | grep 'Model name' | sed 's/.*: *//'), $threads CPUs; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DENGINE_TEST_DATA_DIR="$PWD/$data" > "$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
cmake --build build-gpu -j "$threads" > "$logs/build.log" 2>&1 || { grep -E "error" -A5 "$logs/build.log" | head -60; exit 1; }
say "== build ok ($(grep -c warning "$logs/build.log") warning lines)"

if [ "$what" != cpu ]; then
  say "== tests (jacobian, autograd, ops, gpu parity)"
  (cd build-gpu && timeout 400 ctest --output-on-failure -j 4 -R "jacobian|autograd|test_ops|gpu_parity" \
    > "$logs/ctest.log" 2>&1); grep -E "tests passed|Passed|Failed|Skipped|\*\*\*" "$logs/ctest.log" | tee -a "$summary"

  say "== compute-sanitizer memcheck: test_gpu_jacobian (small cases) and jacobian_mlp --gpu"
  timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/test_gpu_jacobian \
    --test-case-exclude="*the seed MLP*,*1.6 GB*" > "$logs/memcheck_tests.log" 2>&1
  say "memcheck tests rc $? ($(tail -1 "$logs/memcheck_tests.log"))"
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/apps/jacobian_mlp --gpu --val 100 \
    --repeats 1 --check fd > "$logs/memcheck_app.log" 2>&1
  say "memcheck app (val=100, per-sample forward) rc $? ($(grep -E 'ERROR SUMMARY' "$logs/memcheck_app.log"))"
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/apps/jacobian_mlp --gpu --val 30 \
    --repeats 0 --mode reverse --dense --memory-limit 8 > "$logs/memcheck_app_dense.log" 2>&1
  say "memcheck app (val=30, dense reverse in chunks) rc $? ($(grep -E 'ERROR SUMMARY' "$logs/memcheck_app_dense.log"))"
fi

app=build-gpu/apps/jacobian_mlp
run() {  # name, then app flags
  local name=$1; shift
  timeout 300 "$app" "$@" --threads "$threads" --max-loop-seconds "$loop_cap" \
    --json "$logs/$name.json" > "$logs/$name.log" 2>&1
  local rc=$?
  python3 - "$logs/$name.json" "$name" "$rc" <<'PY' | tee -a "$summary"
import json, sys
path, name, rc = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception:
    print("%-34s rc %s, no record" % (name, rc)); sys.exit()
if not r.get("completed", True):
    print("%-34s %-22s loop not run: estimate %.1f s (%d passes at %.3f ms)" % (
        name, r["strategy"], r["loop_estimated_seconds"], r["loop_passes"], r["loop_seconds_per_pass"] * 1e3))
    sys.exit()
chk = r.get("check", {})
print("%-34s %-22s median %10.3f ms  first %10.3f ms  peak %8.1f MiB  chunks %6d%s" % (
    name, r["strategy"], r["median_seconds"] * 1e3, r["first_call_seconds"] * 1e3,
    r["peak_bytes"] / 2**20, r["chunks"],
    "  check %.1e %s" % (chk["normwise"], "OK" if chk["ok"] else "MISMATCH") if chk else ""))
PY
}

devices="gpu cpu"
[ "$what" = quick ] && devices=gpu
[ "$what" = cpu ] && devices=cpu
for dev in $devices; do
  for val in 100 1000; do
    say "== ours: $dev, val=$val"
    # The checks: fd compares every element of J with central differences in double.
    run "ours_${dev}_${val}_auto" --device "$dev" --val "$val" --mode auto --check fd --repeats "$repeats"
    run "ours_${dev}_${val}_forward_per_sample" --device "$dev" --val "$val" --mode forward --repeats "$repeats"
    run "ours_${dev}_${val}_reverse_per_sample" --device "$dev" --val "$val" --mode reverse --check fd --repeats "$repeats"
    run "ours_${dev}_${val}_auto_blocks" --device "$dev" --val "$val" --blocks --repeats "$repeats"
    run "ours_${dev}_${val}_forward_dense" --device "$dev" --val "$val" --mode forward --dense --check fd --repeats "$repeats"
    # Dense reverse: (val*400)^2 one-hot floats pushed through; on the CPU at val=1000 that is
    # minutes, so one call there.
    r=$repeats; [ "$dev" = cpu ] && [ "$val" = 1000 ] && r=0
    run "ours_${dev}_${val}_reverse_dense" --device "$dev" --val "$val" --mode reverse --dense --check fd --repeats "$r"
    run "ours_${dev}_${val}_loop" --device "$dev" --val "$val" --mode loop
  done
done

if [ "$what" = full ]; then
  say "== PyTorch, same host (loop cap ${loop_cap} s)"
  timeout 900 python3 scripts/jacobian_pytorch.py --vals 100 1000 --devices cuda cpu --threads "$threads" \
    --loop-cap "$loop_cap" --json "$logs/pytorch.json" > "$logs/pytorch.log" 2>&1
  say "pytorch rc $?"
  grep -vE "^Wrote" "$logs/pytorch.log" | tail -30 | tee -a "$summary"
fi
cp "$summary" "$logs/"
