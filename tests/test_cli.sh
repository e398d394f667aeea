#!/usr/bin/env bash
# The command-line contract of apps/mnist_mlp (DESIGN.md section 1): bad flags and an
# unusable device exit with status 2 and one line; a short run writes its --json record and
# its weights, and --load evaluates them again to the same accuracy.
# Usage: test_cli.sh PATH/TO/mnist_mlp DATA_DIR
set -uo pipefail
app=${1:?mnist_mlp binary}; data=${2:?data dir}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0

expect_status() {  # expected_status description -- command...
  local want=$1 what=$2; shift 3
  "$@" > "$tmp/out" 2> "$tmp/err"; local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit status $got, expected $want"; cat "$tmp/err"; failures=$((failures + 1))
  elif [ "$want" -eq 2 ] && [ "$(wc -l < "$tmp/err")" -ne 1 ]; then
    echo "FAIL: $what: expected one line on stderr, got:"; cat "$tmp/err"; failures=$((failures + 1))
  else
    echo "ok: $what ($(head -c 120 "$tmp/err"))"
  fi
}

expect_status 2 "unknown flag" -- "$app" --no-such-flag
expect_status 2 "batch size 0" -- "$app" --batch-size 0
expect_status 2 "negative epochs" -- "$app" --epochs -1
expect_status 2 "unknown device" -- "$app" --device tpu
expect_status 2 "unknown dataset" -- "$app" --dataset cifar
expect_status 2 "bad log level" -- "$app" --log-level loud
expect_status 2 "--cpu with --gpu" -- "$app" --cpu --gpu
expect_status 2 "--load of a missing file" -- "$app" --load "$tmp/missing.weights"
if ! command -v nvidia-smi > /dev/null || ! nvidia-smi > /dev/null 2>&1; then
  expect_status 2 "--gpu without a usable GPU" -- "$app" --gpu --data-dir "$data"
fi
expect_status 1 "missing data folder" -- "$app" --data-dir "$tmp/nothing" --epochs 1
expect_status 0 "--help" -- "$app" --help

expect_status 0 "short run with --json and --save" -- "$app" --data-dir "$data" --epochs 2 \
  --steps-per-epoch 20 --threads 1 --json "$tmp/run.json" --save "$tmp/m.weights"
for key in '"app": "mnist_mlp"' '"parameters": 101770' '"test_accuracy"' '"cpu_model"' '"seconds"'; do
  grep -q "$key" "$tmp/run.json" || { echo "FAIL: --json record lacks $key"; failures=$((failures + 1)); }
done
accuracy=$(grep -o 'Test accuracy: [0-9.]*' "$tmp/out")
expect_status 0 "--load and evaluate only" -- "$app" --data-dir "$data" --epochs 0 --load "$tmp/m.weights"
reloaded=$(grep -o 'Test accuracy: [0-9.]*' "$tmp/out")
if [ "$accuracy" != "$reloaded" ]; then
  echo "FAIL: reloaded weights give '$reloaded', trained model gave '$accuracy'"; failures=$((failures + 1))
fi
expect_status 2 "--epochs 0 without --load" -- "$app" --data-dir "$data" --epochs 0

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
