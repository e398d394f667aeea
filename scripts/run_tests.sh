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

echo "=== Release build and tests ==="
cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

echo "=== ASan + UBSan build and tests ==="
cmake -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DENGINE_SANITIZE=ON > /dev/null
cmake --build build-sanitize -j "$jobs"
(cd build-sanitize && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j "$jobs")

echo "=== libFuzzer, 60 s per target ==="
scripts/run_fuzzers.sh 60
echo "All tests passed (Release, ASan+UBSan, libFuzzer)."
