#!/usr/bin/env bash
# The GPU machine's proof for a commit: a native build (warnings counted), every ctest suite
# with the GPU present, and compute-sanitizer's four tools over the GPU suites
# (scripts/device_sanitize.sh). Usage: scripts/device_verify.sh OUT_DIR
# The MNIST tests read real digits from .devdata when the caller carried it, else from data/.
set -uo pipefail
out=${1:?out dir}
threads=$(nproc)
echo "== host"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 2>/dev/null
testdata=$PWD/data; [ -d .devdata ] && testdata=$PWD/.devdata
cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DENGINE_TEST_DATA_DIR="$testdata" -DCUDNN_ROOT=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn \
  > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$threads" > "$out/build.log" 2>&1 || { grep -E "error" -A5 "$out/build.log" | head -60; exit 1; }
echo "build warnings: $(grep -c "warning" "$out/build.log")"
echo "== ctest"
(cd build-gpu && timeout 400 ctest -j 4 --output-on-failure > "$out/ctest.log" 2>&1; grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/ctest.log" | tail -12)
echo "== compute-sanitizer"
scripts/device_sanitize.sh build-gpu "$out"
