#!/usr/bin/env bash
# apps/crossover's command line on the CPU: bad flags exit with status 2 and one line; a
# --quick sweep of every workload at tiny sizes prints a table per workload and writes the CSV
# (its columns, one timed cpu row per workload and size), the gnuplot script and --json; with
# no usable GPU, the default run says in one line that it has the CPU curves only.
# Usage: test_crossover_cli.sh PATH/TO/crossover SCRATCH_DIR
set -uo pipefail
app=${1:?crossover binary}; out=${2:?scratch dir}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

expect_status 2 "unknown flag" -- "$app" --no-such-flag
expect_status 2 "unknown workload" -- "$app" --workload fft
expect_status 2 "unknown device" -- "$app" --device tpu
expect_status 2 "--max-size 0" -- "$app" --max-size 0
expect_status 2 "--max-size below the whole sweep" -- "$app" --cpu --workload matmul --max-size 8
expect_status 2 "--repeats 0" -- "$app" --repeats 0
expect_status 2 "--batch-size 0" -- "$app" --batch-size 0
expect_status 2 "--seed -1 (issue 24: no wrap to 2^64 - 1)" -- "$app" --seed -1 --quick --cpu
expect_status 2 "--seed beyond 64 bits" -- "$app" --seed 18446744073709551616 --quick --cpu
if no_gpu; then expect_status 2 "--gpu without a usable GPU" -- "$app" --gpu --quick; fi
expect_status 0 "--help" -- "$app" --help

rm -rf "$out"
expect_status 0 "a quick CPU sweep of every workload" -- "$app" --quick --cpu --max-size 16 \
  --batch-size 4 --threads 2 --no-plot --csv "$out/crossover.csv" --json "$out/crossover.json"
cp "$tmp/out" "$tmp/run.out"
expect_text "$tmp/run.out" "== matmul (n)" "== dense (width)" "== conv (channels)" \
  "== mlp_step (batch)" "CSV: $out/crossover.csv" "Plot: --no-plot"
want="workload,size_name,size,device,variant,timer,median_ms,min_ms,max_ms,samples,steps_per_sample,launches,transfer_ms,cpu_over_this,regime"
header=$(head -1 "$out/crossover.csv")
if [ "$header" != "$want" ]; then echo "FAIL: CSV header is '$header'"; failures=$((failures + 1)); fi
# --quick sizes up to 16: matmul 16; dense 16; conv 4, 8; mlp_step 1, 2, 4, 8, 16.
rows=$(tail -n +2 "$out/crossover.csv" | cut -d, -f1,3,4,5 | tr '\n' ' ')
want_rows="matmul,16,cpu,cpu dense,16,cpu,cpu conv,4,cpu,cpu conv,8,cpu,cpu mlp_step,1,cpu,cpu mlp_step,2,cpu,cpu mlp_step,4,cpu,cpu mlp_step,8,cpu,cpu mlp_step,16,cpu,cpu "
if [ "$rows" != "$want_rows" ]; then echo "FAIL: CSV rows are '$rows'"; failures=$((failures + 1)); fi
# Every row: 15 fields, a positive median, samples and steps per sample at least 1.
bad=$(tail -n +2 "$out/crossover.csv" | awk -F, 'NF != 15 || !($7 > 0) || $10 < 1 || $11 < 1')
if [ -n "$bad" ]; then echo "FAIL: malformed rows: $bad"; failures=$((failures + 1)); fi
expect_text "$out/crossover.gp" '$mlp_step_cpu_cpu << EOD' "set multiplot layout 4,1" "set logscale x 2"
expect_text "$out/crossover.json" '"app": "crossover"' '"results"' '"median_ms"'

if no_gpu; then
  expect_status 0 "the default devices without a GPU" -- "$app" --quick --workload conv --max-size 4 \
    --batch-size 2 --no-plot --csv "$out/default.csv"
  expect_text "$tmp/out" "No GPU (gpu: " "the CPU curves only"
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
