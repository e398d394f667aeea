#!/usr/bin/env bash
# The GPU machine's proof for a commit: a native build (warnings counted), every ctest suite
# with the GPU present, and compute-sanitizer's four tools over the GPU suites
# (scripts/gpu/sanitize.sh). Usage: scripts/gpu/verify.sh OUT_DIR [SECONDS_PER_SANITIZER_RUN]
# The MNIST tests read real digits from .devdata when the caller carried it, else from data/.
# Only a few files come back from that machine: the logs go into OUT_DIR/verify_logs.tgz.
set -uo pipefail
out=${1:?out dir}; sanitize_limit=${2:-150}
logs=$out/verify_logs; mkdir -p "$logs"
trap 'tar czf "$out/verify_logs.tgz" -C "$out" verify_logs && rm -rf "$logs"' EXIT
threads=$(nproc)
echo "== host"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
testdata=$PWD/data; [ -d .devdata ] && testdata=$PWD/.devdata
cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DENGINE_TEST_DATA_DIR="$testdata" -DCUDNN_ROOT=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn \
  > "$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
cmake --build build-gpu -j "$threads" > "$logs/build.log" 2>&1 || { grep -E "error" -A5 "$logs/build.log" | head -60; exit 1; }
echo "build warnings: $(grep -c "warning" "$logs/build.log")"
echo "== ctest"
(cd build-gpu && timeout 300 ctest -j 8 --output-on-failure > "$logs/ctest.log" 2>&1
 grep -E "tests passed|tests failed|Failed|\*\*\*|Total Test" "$logs/ctest.log" | tail -14)
echo "== compute-sanitizer (each run cut at ${sanitize_limit} s)"
scripts/gpu/sanitize.sh build-gpu "$logs" "$sanitize_limit"
