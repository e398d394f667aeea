#!/usr/bin/env bash
# The command-line contract of apps/mnist_mlp (docs/USING.md): bad flags and an
# unusable device exit with status 2 and one line; a short run writes its --json record and
# its weights, and --load evaluates them again to the same accuracy.
# Usage: test_cli.sh PATH/TO/mnist_mlp DATA_DIR
set -uo pipefail
app=${1:?mnist_mlp binary}; data=${2:?data dir}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0

# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

expect_status 2 "unknown flag" -- "$app" --no-such-flag
expect_status 2 "batch size 0" -- "$app" --batch-size 0
expect_status 2 "negative epochs" -- "$app" --epochs -1
expect_status 2 "unknown device" -- "$app" --device tpu
expect_status 2 "unknown dataset" -- "$app" --dataset cifar
expect_status 2 "bad log level" -- "$app" --log-level loud
expect_status 2 "--cpu with --gpu" -- "$app" --cpu --gpu
expect_status 2 "--load of a missing file" -- "$app" --load "$tmp/missing.weights"
# Values that slip through a check made on another type (issue 24): each is refused in one line
# that names the flag and the value, before any work.
for lr in nan inf -inf 1e39 -1 0; do
  expect_status 2 "--learning-rate $lr" -- "$app" --data-dir "$data" --epochs 1 --steps-per-epoch 2 \
    --learning-rate "$lr"
  expect_text "$tmp/err" "--learning-rate: Value $lr not in range"
done
for seed in -1 18446744073709551616; do
  expect_status 2 "--seed $seed" -- "$app" --data-dir "$data" --epochs 1 --steps-per-epoch 2 --seed "$seed"
  expect_text "$tmp/err" "--seed: Value $seed not in range"
done
expect_status 2 "--batch-size beyond 64 bits" -- "$app" --batch-size 99999999999999999999
expect_status 0 "--seed 18446744073709551615, the largest" -- "$app" --data-dir "$data" --epochs 1 \
  --steps-per-epoch 2 --threads 1 --seed 18446744073709551615
# Environment variables read by libraries: OpenMP's thread count, garbage or absurd, neither
# crashes the app nor changes the exit status (libgomp ignores what it cannot parse).
for threads in abc 0 -3 99999999; do
  expect_status 0 "OMP_NUM_THREADS=$threads" -- env OMP_NUM_THREADS="$threads" "$app" \
    --data-dir "$data" --epochs 1 --steps-per-epoch 2
done
if no_gpu; then
  expect_status 2 "--gpu without a usable GPU" -- "$app" --gpu --data-dir "$data"
  expect_status 2 "--device cudnn without a usable GPU" -- "$app" --device cudnn --data-dir "$data"
else
  # --device cudnn: the matmuls on cuBLAS, whose name and cuDNN's the --json record carries.
  expect_status 0 "--device cudnn short run" -- "$app" --device cudnn --data-dir "$data" \
    --epochs 1 --steps-per-epoch 20 --json "$tmp/cudnn.json"
  expect_text "$tmp/cudnn.json" '"backend": "cudnn"' 'cuBLAS' 'cuDNN'
fi
expect_status 1 "missing data folder" -- "$app" --data-dir "$tmp/nothing" --epochs 1
expect_status 0 "--help" -- "$app" --help

expect_status 0 "short run with --json and --save" -- "$app" --data-dir "$data" --epochs 2 \
  --steps-per-epoch 20 --threads 1 --json "$tmp/run.json" --save "$tmp/m.weights"
expect_text "$tmp/run.json" '"app": "mnist_mlp"' '"parameters": 101770' '"test_accuracy"' '"cpu_model"' '"seconds"'
expect_text "$tmp/run.json" '"fused_mlp": false'
accuracy=$(grep -o 'Test accuracy: [0-9.]*' "$tmp/out")
expect_status 0 "--load and evaluate only" -- "$app" --data-dir "$data" --epochs 0 --load "$tmp/m.weights"
reloaded=$(grep -o 'Test accuracy: [0-9.]*' "$tmp/out")
if [ "$accuracy" != "$reloaded" ]; then
  echo "FAIL: reloaded weights give '$reloaded', trained model gave '$accuracy'"; failures=$((failures + 1))
fi
expect_status 2 "--epochs 0 without --load" -- "$app" --data-dir "$data" --epochs 0

# --breakdown: a line per epoch with its bar, the parts and the memory in --json; it needs the
# device's timers, which --profile holds.
expect_status 0 "--breakdown" -- "$app" --data-dir "$data" --epochs 2 --steps-per-epoch 20 \
  --threads 1 --breakdown --json "$tmp/breakdown.json"
expect_text "$tmp/out" "Where each epoch's time went (--breakdown)" 'epoch  2: ' '| compute ' \
  '] measured ' 'Memory after epoch 1 -> 2: host RSS '
expect_text "$tmp/breakdown.json" '"breakdown": {' '"compute_seconds"' '"other_seconds"' \
  '"measured_fraction"' '"host_rss_bytes"' '"allocator_reserved_bytes"'
expect_status 2 "--breakdown with --profile" -- "$app" --data-dir "$data" --breakdown --profile

# --fused (nn/fused_mlp.h) where the device cannot run the kernel: the op-by-op run, and one
# line that says why.
expect_status 0 "--fused on the CPU" -- "$app" --cpu --data-dir "$data" --epochs 1 \
  --steps-per-epoch 5 --threads 1 --fused
expect_text "$tmp/out" "Training step: op by op; not the fused MLP kernel: this device cannot run it"
expect_status 0 "--no-fused on the CPU" -- "$app" --cpu --data-dir "$data" --epochs 1 \
  --steps-per-epoch 5 --threads 1 --no-fused
expect_text "$tmp/out" "Training step: op by op; not the fused MLP kernel: --no-fused"
expect_status 2 "--fused with --no-fused" -- "$app" --cpu --data-dir "$data" --fused --no-fused

# Keras' habits (nn/callbacks.h): --log-csv writes a row per epoch with an lr column under
# --lr-schedule, and --resume appends to it (header once); bad values exit 2, a monitor the run
# does not measure 1.
expect_status 0 "--log-csv with --lr-schedule" -- "$app" --data-dir "$data" --epochs 2 \
  --steps-per-epoch 5 --threads 1 --lr-schedule step:0.5:1 --log-csv "$tmp/log.csv" \
  --checkpoint "$tmp/csv.ckpt"
expect_status 0 "--resume appends to --log-csv" -- "$app" --data-dir "$data" --epochs 3 \
  --steps-per-epoch 5 --threads 1 --lr-schedule step:0.5:1 --log-csv "$tmp/log.csv" \
  --resume "$tmp/csv.ckpt"
if [ "$(head -1 "$tmp/log.csv")" != "epoch,loss,accuracy,lr" ] || [ "$(wc -l < "$tmp/log.csv")" -ne 4 ] \
  || [ "$(cut -d, -f1,4 "$tmp/log.csv" | tr '\n' ' ')" != "epoch,lr 1,0.001 2,0.0005 3,0.00025 " ]; then
  echo "FAIL: --log-csv after --resume:"; cat "$tmp/log.csv"; failures=$((failures + 1))
fi
expect_status 2 "bad --lr-schedule" -- "$app" --lr-schedule linear:0.1
expect_status 2 "--restore-best-weights without --early-stopping" -- "$app" --restore-best-weights
expect_status 2 "unknown --monitor" -- "$app" --early-stopping 2 --monitor val_acc
expect_status 1 "--monitor val_loss without validation data" -- "$app" --data-dir "$data" \
  --epochs 2 --steps-per-epoch 5 --early-stopping 2 --monitor val_loss
expect_text "$tmp/err" "early stopping monitors val_loss, which this run does not measure"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
