#!/usr/bin/env bash
# The command-line contract of the CNN apps (apps/cifar10_cnn, apps/mnist_cnn;
# docs/USING.md): bad flags and an unusable device exit with status 2 and one line; a one-epoch
# run of 3 steps on the CPU prints the Keras summary with the model's parameter count, the
# seconds per epoch and writes its --json record; --load evaluates the saved weights again to
# the same accuracy.
# Usage: test_cnn_cli.sh PATH/TO/APP DATA_DIR PARAMETERS DATASET
set -uo pipefail
app=${1:?app binary}; data=${2:?data dir}; parameters=${3:?parameter count}; dataset=${4:?dataset}
name=$(basename "$app")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

expect_status 2 "unknown flag" -- "$app" --no-such-flag
expect_status 2 "batch size 0" -- "$app" --batch-size 0
expect_status 2 "negative epochs" -- "$app" --epochs -1
expect_status 2 "negative --test-images" -- "$app" --test-images -1
# Issue 24: NaN, infinity and a float's overflow are refused as the type the flag is stored in.
expect_status 2 "--learning-rate nan" -- "$app" --learning-rate nan
expect_status 2 "--learning-rate 1e39 (infinity as a float)" -- "$app" --learning-rate 1e39
expect_status 2 "--seed -1" -- "$app" --seed -1
expect_status 2 "--test-images beyond 64 bits" -- "$app" --test-images 99999999999999999999
expect_status 2 "unknown device" -- "$app" --device tpu
expect_status 2 "unknown dataset" -- "$app" --dataset imagenet
expect_status 2 "--cpu with --gpu" -- "$app" --cpu --gpu
expect_status 2 "--tf32 on the CPU" -- "$app" --cpu --tf32
expect_status 2 "--epochs 0 without --load" -- "$app" --epochs 0
if no_gpu; then
  expect_status 2 "--gpu without a usable GPU" -- "$app" --gpu --dataset synthetic
  expect_status 2 "--device cudnn without a usable GPU" -- "$app" --device cudnn --dataset synthetic
fi
expect_status 0 "--help" -- "$app" --help
case $name in
  cifar10_cnn) real=cifar10 missing="missing CIFAR-10 file" ;;
  *) real=mnist missing="missing data file" ;;
esac
expect_status 1 "--dataset $real without its files" -- "$app" --data-dir "$tmp/nothing" \
  --dataset "$real" --epochs 1
expect_text "$tmp/err" "$missing" "fetch_data.sh"

# A short run: 3 steps of one epoch, validation and evaluation on 100 test images.
run=(--data-dir "$data" --dataset "$dataset" --threads 2 --test-images 100)
expect_status 0 "one epoch of 3 steps on $dataset" -- "$app" "${run[@]}" --epochs 1 \
  --steps-per-epoch 3 --json "$tmp/run.json" --save "$tmp/m.weights"
cp "$tmp/out" "$tmp/run.out"
grouped=$(sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta' <<< "$parameters")  # 1,337,002
expect_text "$tmp/run.out" "Total params: $grouped" \
  "Train on " "3/3 [" "val_loss" "Seconds per epoch (training steps only): " \
  "Epochs cut to 3 of " "Test " "(100 images)"
expect_text "$tmp/run.json" "\"app\": \"$name\"" "\"parameters\": $parameters" '"epochs_run"' \
  '"val_loss"' '"test_accuracy"' '"cpu_model"' '"seconds"' '"test_samples": 100'
if [ "$dataset" = synthetic ]; then expect_text "$tmp/run.out" "Data: synthetic" "NOT real data"; fi

accuracy=$(grep -o 'test accuracy: [0-9.]*\|Test accuracy: [0-9.]*' "$tmp/run.out")
expect_status 0 "--load and evaluate only" -- "$app" "${run[@]}" --epochs 0 --load "$tmp/m.weights"
reloaded=$(grep -o 'test accuracy: [0-9.]*\|Test accuracy: [0-9.]*' "$tmp/out")
if [ -z "$accuracy" ] || [ "$accuracy" != "$reloaded" ]; then
  echo "FAIL: reloaded weights give '$reloaded', trained model gave '$accuracy'"; failures=$((failures + 1))
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
