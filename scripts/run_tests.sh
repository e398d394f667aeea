#!/usr/bin/env bash
# Install, build and run every test: the Release build, then the whole suite again under
# AddressSanitizer + UndefinedBehaviorSanitizer, then each file parser under libFuzzer for a
# bounded time (scripts/run_fuzzers.sh, docs/fuzzing.md). GPU tests run only where a GPU is
# usable and say so loudly when they are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/fetch_data.sh data
jobs=$(nproc)
# Where nvcc is installed but no GPU is visible, the tests can run no GPU code: they compile it
# for the two ends of the range alone (Turing, with its guards for sm_80 instructions; Hopper,
# with the sm_90a kernels), not for the main job's five architectures, which take longer, twice
# over (docs/YOUR_GPU.md, "The fat binary"). With a GPU, configure builds for it
# (cmake/EngineCudaArchitectures.cmake).
# There the sanitizer build leaves CUDA out: no kernel can run without a GPU, the host code
# that ASan checks is the CPU engine's either way, and the kernels' second compile is most of
# that build's time (docs/sanitizers.md).
# The tests build in folders of their own, so that run_main.sh's build/ keeps the default choice.
cuda=()
sanitize_cuda=()
if ! nvidia-smi > /dev/null 2>&1; then
  cuda=(-DCMAKE_CUDA_ARCHITECTURES="75-real;90-real")
  sanitize_cuda=(-DENGINE_CUDA=OFF)
fi

echo "=== Release build and tests ==="
cmake -B build-tests -G Ninja -DCMAKE_BUILD_TYPE=Release "${cuda[@]}" > /dev/null
cmake --build build-tests -j "$jobs"
(cd build-tests && ctest --output-on-failure -j "$jobs")

echo "=== ASan + UBSan build and tests ==="
cmake -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DENGINE_SANITIZE=ON "${sanitize_cuda[@]}" \
  > /dev/null
cmake --build build-sanitize -j "$jobs"
(cd build-sanitize && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j "$jobs")

# Nine parser targets at 25 s each (tens of thousands of inputs each, besides their seeds and
# regressions): the fuzzing stays near four minutes on a 2-core machine, where the builds take
# most of the test command's time (docs/sanitizers.md).
echo "=== libFuzzer, 25 s per target ==="
scripts/run_fuzzers.sh 25
echo "All tests passed (Release, ASan+UBSan, libFuzzer)."
