#!/usr/bin/env bash
# One call on the GPU machine for the matmul work (issue 4): build, every test (GPU ones
# included), compute-sanitizer over the GPU tests, apps/kernel_bench and apps/matmul_sweep
# with their CSVs under OUT_DIR. Usage: scripts/gpu/run_matmul.sh DATA_DIR OUT_DIR [quick]
set -uo pipefail
data=${1:?data dir}; out=${2:?out dir}; mode=${3:-full}
# Only a few files come back from the GPU machine: the logs go into one tarball at the end.
logs=$(mktemp -d); trap 'tar czf "$out/matmul_logs.tgz" -C "$logs" .' EXIT
threads=$(nproc)
echo "== host"; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DENGINE_TEST_DATA_DIR="$PWD/$data" > "$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
cmake --build build-gpu -j "$threads" > "$logs/build.log" 2>&1 || { grep -E "error" -A5 "$logs/build.log" | head -60; exit 1; }
(cd build-gpu && timeout 300 ctest --output-on-failure -j 4 > "$logs/ctest.log" 2>&1; grep -E "tests passed|Failed|Skipped|\*\*\*" "$logs/ctest.log" | head -20)
grep -E "ERROR:|CHECK|worst err" "$logs/ctest.log" | head -30
export ENGINE_DATA_DIR="$PWD/$data"
for t in test_matmul_ladder test_gpu_backend test_gpu_dot; do
  [ -x build-gpu/tests/$t ] || continue
  echo "== compute-sanitizer memcheck: $t"
  # The out-of-memory test fails a cudaMalloc on purpose, which memcheck reports as an API
  # error: it is left out here (it runs in ctest above).
  timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/$t \
    --test-case-exclude="*more device memory*" > "$logs/memcheck_$t.log" 2>&1
  echo "rc $?"; grep -E "ERROR SUMMARY|test cases:" "$logs/memcheck_$t.log"
done
[ "$mode" = quick ] && exit 0
echo "== kernel_bench"
timeout 300 build-gpu/apps/kernel_bench --csv "$out/kernel_bench.csv" > "$logs/kernel_bench.log" 2>&1; echo "rc $?"
grep -E "Device|peaks|^4096|^8192|engine|WRONG" "$logs/kernel_bench.log"
if [ -x build-gpu/apps/matmul_sweep ]; then
  echo "== matmul_sweep"
  timeout 240 build-gpu/apps/matmul_sweep --threads "$threads" --csv "$out/matmul_sweep.csv" > "$logs/matmul_sweep.log" 2>&1; echo "rc $?"
  tail -n 60 "$logs/matmul_sweep.log"
fi
