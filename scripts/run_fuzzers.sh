#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/fuzzing.md) with Clang in build-fuzz/ and runs each
# for SECONDS_PER_TARGET seconds (default 60) on a copy of its seed corpus, fuzz/corpus/<name>/.
# The repo's corpus is never modified: the inputs a run finds interesting go into the copy.
# Inputs of fixed findings in fuzz/regressions/<name>/ are run too.
#
#   scripts/run_fuzzers.sh [SECONDS_PER_TARGET]
#
# A finding is a crash, a sanitizer report (ASan, UBSan, LeakSanitizer), an input slower than
# 10 s, more than 2 GB of memory, or an exception other than engine::Error. libFuzzer stops a
# target at its first finding and saves the input; this script goes on with the other targets,
# prints one summary line per target and exits 1 if any target found something. The inputs and
# logs stay under build-fuzz/runs/<name>/ (findings/ holds the inputs that failed).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [SECONDS_PER_TARGET]  (a positive whole number of seconds, got '$seconds')" >&2
  exit 2
fi
targets=(idx gzip cifar10 weights checkpoint jpeg csv npy model_file)
build=build-fuzz

for tool in clang clang++; do
  command -v "$tool" > /dev/null || {
    echo "run_fuzzers: $tool not found (scripts/install_deps.sh installs clang and libFuzzer)" >&2
    exit 2
  }
done

echo "run_fuzzers: building the fuzz targets in $build (Clang, ASan + UBSan + libFuzzer)"
# CUDA off: the parsers do not need it, and nvcc does not accept this Clang as host compiler.
cmake -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DENGINE_FUZZ=ON -DENGINE_CUDA=OFF -DBUILD_TESTING=OFF > /dev/null
cmake --build "$build" --target fuzzers -j "$(nproc)"

# Stacks with file:line for any report; UBSan stops at the first report (the build also says
# -fno-sanitize-recover), so libFuzzer sees it as a crash and saves the input.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# One of libFuzzer's final statistics (-print_final_stats=1) from a log: final_stat LOG NAME
# prints 123 for the line "stat::NAME: 123".
final_stat() { sed -n "s/^stat::$2: *//p" "$1" | tail -n 1; }

failed=()
summary=()
for name in "${targets[@]}"; do
  run="$build/runs/$name"
  rm -rf "$run"
  mkdir -p "$run/corpus" "$run/findings"
  cp -R "fuzz/corpus/$name/." "$run/corpus/"
  # Inputs of past findings (fuzz/regressions/<name>/, once fixed) are read as extra seeds, so a
  # bug that comes back fails at once. libFuzzer writes new inputs only into the first folder.
  inputs=("$run/corpus")
  [ -d "fuzz/regressions/$name" ] && inputs+=("fuzz/regressions/$name")
  echo "=== fuzz_$name: $seconds s, seeds from ${inputs[*]} ==="
  start=$(date +%s)
  status=0
  "$build/fuzz/fuzz_$name" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$run/findings/" "${inputs[@]}" \
    > "$run/log.txt" 2>&1 || status=$?
  elapsed=$(( $(date +%s) - start ))

  execs=$(final_stat "$run/log.txt" number_of_executed_units)
  rate=$(final_stat "$run/log.txt" average_exec_per_sec)
  added=$(final_stat "$run/log.txt" new_units_added)
  # Saved failing inputs: crash-, leak-, timeout-, oom- (slow-unit- files are only a note).
  findings=$(find "$run/findings" -type f ! -name 'slow-unit-*' | wc -l)
  slow=$(find "$run/findings" -type f -name 'slow-unit-*' | wc -l)
  if [ "$status" -ne 0 ] && [ "$findings" -eq 0 ]; then
    findings=1  # libFuzzer failed without saving an input (e.g. it could not start): show why
  fi
  line=$(printf 'fuzz_%-8s %10s executions  %6s exec/s  %4d s  %3s new inputs  %d findings' \
    "$name" "${execs:-?}" "${rate:-?}" "$elapsed" "${added:-?}" "$findings")
  [ "$slow" -gt 0 ] && line+="  ($slow slow inputs, see $run/findings)"
  summary+=("$line")
  if [ "$findings" -gt 0 ]; then
    failed+=("$name")
    echo "fuzz_$name FOUND A PROBLEM (exit status $status); the report:"
    # From the first line of the report (a sanitizer's, libFuzzer's, or std::terminate's) to
    # its SUMMARY line: the stack with file:line.
    awk '/ERROR:|runtime error:|terminate called/ { on = 1 } on { print } /^SUMMARY:/ { exit }' \
      "$run/log.txt" | head -n 80 || true  # (head closing the pipe early is not an error)
    echo "inputs saved: $(find "$run/findings" -type f | tr '\n' ' ')"
    echo "reproduce: $build/fuzz/fuzz_$name <input>   (full log: $run/log.txt)"
  fi
done

echo "=== libFuzzer summary ($seconds s per target) ==="
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_fuzzers: FINDINGS in ${failed[*]}: see above and docs/fuzzing.md (reproducing a finding)"
  exit 1
fi
echo "run_fuzzers: no findings"
