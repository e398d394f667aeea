#!/usr/bin/env bash
# apps/bench on the CPU: bad flags exit with status 2 and one line; --quick runs every experiment
# for a few steps and writes the report with all its sections, the plots' scripts beside it and a
# log per run; apps that fail, hang or are not built become rows that say so, and the report is
# written anyway.
# Usage: test_bench_cli.sh PATH/TO/bench DATA_DIR SCRATCH_DIR
set -uo pipefail
app=${1:?bench binary}; data=${2:?data dir}; out=${3:?scratch dir}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

expect_status 2 "unknown flag" -- "$app" --no-such-flag
expect_status 2 "unknown device" -- "$app" --devices cpu,tpu
expect_status 2 "--quick with --full" -- "$app" --quick --full
# Issue 24: NaN and infinity are no number of seconds.
for value in nan inf -1; do
  expect_status 2 "--budget $value" -- "$app" --budget "$value" --dry-run
  expect_text "$tmp/err" "--budget: Value $value not in range"
  expect_status 2 "--child-timeout $value" -- "$app" --child-timeout "$value" --dry-run
done
if no_gpu; then expect_status 2 "--devices gpu without a usable GPU" -- "$app" --devices gpu --dry-run; fi
expect_status 0 "--help" -- "$app" --help

rm -rf "$out"
# --no-pytorch: the run list (and its [i/10] count) is the same whether torch is installed or not.
expect_status 0 "--quick on the CPU" -- "$app" --quick --devices cpu --threads 2 --data-dir "$data" \
  --no-pytorch --report "$out/RESULTS.md" --work-dir "$out/work"
cp "$tmp/out" "$tmp/run.out"
expect_text "$tmp/run.out" "bench: " "[10/10] crossover" "Report: $out/RESULTS.md"
report="$out/RESULTS.md"
expect_text "$report" "# Benchmark report" "## Machine" "| CPU |" "| BLAS |" "## Plots" \
  "## MNIST MLP (seed 000)" "## CIFAR-10 CNN (seed 003)" "## MNIST CNN (seed 004)" \
  "## Dogs vs Cats (seed 004)" "## Jacobian of a tanh MLP (seed 001)" \
  "## Matmul sweep, [1,n] x [n,1] (seed 002)" "## Where the GPU overtakes the CPU (apps/crossover)" \
  "## What was run" "| small model | cpu |" "| 526 s (i5-3210M) |" "docs/SOURCES.md, article 000"
# Every run ended well, and each left its log and record.
if grep -E "^\| [0-9]+ \|" "$report" | grep -v "| ok |"; then
  echo "FAIL: a run above did not end with ok"; failures=$((failures + 1))
fi
for f in "$out/results/bench/epoch_seconds.gp" "$out/results/bench/epoch_seconds.dat" \
         "$out/results/bench/matmul_sweep.gp" "$out/results/bench/crossover.gp" \
         "$out/work/logs/mnist_mlp_small_model_cpu.log" "$out/work/json/mnist_mlp_small_model_cpu.json"; do
  [ -s "$f" ] || { echo "FAIL: missing $f"; failures=$((failures + 1)); }
done

# Apps that fail, hang or are missing (shell scripts standing in for two of them): each becomes a
# row that says so, with its log, and the report is still written.
mkdir -p "$tmp/fake"
printf '#!/bin/sh\necho "mnist_mlp: boom" >&2\nexit 3\n' > "$tmp/fake/mnist_mlp"
printf '#!/bin/sh\nsleep 60\n' > "$tmp/fake/cifar10_cnn"
chmod +x "$tmp/fake/mnist_mlp" "$tmp/fake/cifar10_cnn"
start=$(date +%s)
expect_status 0 "--quick with failing, hanging and missing apps" -- "$app" --quick --devices cpu \
  --no-pytorch --bin-dir "$tmp/fake" --child-timeout 1 --report "$tmp/bad/RESULTS.md" \
  --work-dir "$tmp/work" --no-plot
if [ $(($(date +%s) - start)) -ge 30 ]; then echo "FAIL: the hanging app was not stopped"; failures=$((failures + 1)); fi
expect_text "$tmp/bad/RESULTS.md" \
  "| small model | cpu | failed (exit 3): mnist_mlp: boom; log: $tmp/work/logs/mnist_mlp_small_model_cpu.log |" \
  "| FP32 | cpu | timed out after 1 s; log: $tmp/work/logs/cifar10_cnn_FP32_cpu.log |" \
  "not run: not built here: no $tmp/fake/mnist_cnn" "| not run (--no-pytorch) |"

# A time budget too short for anything: no run starts, each row says why.
expect_status 0 "--budget too short for any run" -- "$app" --quick --devices cpu --no-pytorch \
  --budget 0.001 --report "$tmp/budget/RESULTS.md" --work-dir "$tmp/work2" --no-plot
expect_text "$tmp/budget/RESULTS.md" "| small model | cpu | not run: it would end past the time budget (--budget 0 s) |"
# The default setting, with no time for any run either: the CNNs' setting line names the CPU's
# runs only (20 steps an epoch), since their TF32 case runs on GPUs alone.
expect_status 0 "the default setting, no time for any run" -- "$app" --devices cpu --no-pytorch \
  --budget 0.001 --report "$tmp/budget_default/RESULTS.md" --work-dir "$tmp/work3" --no-plot
expect_text "$tmp/budget_default/RESULTS.md" "ours: 2 epochs of 20 steps on the CPU; FP32 but for the TF32 rows"

[ "$failures" -eq 0 ] && echo "all bench checks passed"
exit $((failures > 0))
