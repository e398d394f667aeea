#!/usr/bin/env bash
# apps/dogs_vs_cats end to end on the CPU, on a small tree from datasets/make_dogs_cats: bad
# flags exit 2 with one line; a short run trains, validates, prints each epoch's data wait and
# saves; --load evaluates the saved weights to the same accuracy; bad files in the folder are
# skipped with a counted warning naming them, or stop the run under --strict; an empty class
# folder or a missing validation folder stops it with a message naming the folder.
# Usage: test_dogs_cats_cli.sh PATH/TO/dogs_vs_cats PATH/TO/make_dogs_cats
set -uo pipefail
app=${1:?app binary}; make=${2:?generator binary}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

data=$tmp/tree
"$make" --out "$data" --train-per-class 24 --validation-per-class 8 --seed 3 > /dev/null ||
  { echo "FAIL: make_dogs_cats"; exit 1; }
# 32x32 images and 2 threads keep the CPU run to a second or two.
cpu=(--cpu --threads 2 --workers 2 --image-size 32)
small=("${cpu[@]}" --data-dir "$data")

expect_status 2 "unknown flag" -- "$app" --no-such-flag
expect_status 2 "batch size 0" -- "$app" --batch-size 0
expect_status 2 "--workers -1" -- "$app" --workers -1
expect_status 2 "--prefetch 1" -- "$app" --prefetch 1
expect_status 2 "--augment-on tpu" -- "$app" --augment-on tpu
expect_status 2 "--augment-on gpu on the CPU" -- "$app" "${small[@]}" --augment-on gpu --epochs 1
expect_status 2 "--decode-on tpu" -- "$app" --decode-on tpu
expect_status 2 "--gpu-decode-share 1.5" -- "$app" --gpu-decode-share 1.5
expect_status 2 "--gpu-decode-share without --decode-on gpu" -- "$app" "${small[@]}" --gpu-decode-share 0.3 --epochs 1
expect_status 2 "--decode-on gpu on the CPU" -- "$app" "${small[@]}" --decode-on gpu --epochs 1
expect_text "$tmp/err" "--decode-on gpu needs --device gpu or cudnn"
expect_status 2 "--image-size 8 (too small for three convolutions)" -- "$app" --image-size 8
expect_status 2 "--data-scaling with a bad count" -- "$app" "${small[@]}" --data-scaling 1,x
expect_status 2 "--epochs 0 without --load" -- "$app" "${small[@]}" --epochs 0
expect_status 0 "--help" -- "$app" --help

expect_status 0 "two epochs of 48 images" -- "$app" "${small[@]}" --epochs 2 --batch-size 16 \
  --json "$tmp/run.json" --save "$tmp/m.weights"
cp "$tmp/out" "$tmp/run.out"
expect_text "$tmp/run.out" "48 training images (cats 24, dogs 24), 16 validation" \
  "Total params: " "3/3 [" "val_loss" "val_accuracy" "Epoch 2: " "data wait" \
  "Validation accuracy: " "(16 images)" "augmentation on the CPU" "Saved weights to"
expect_text "$tmp/run.json" '"app": "dogs_vs_cats"' '"data_wait_seconds"' '"train_samples": 48'
accuracy=$(grep -o 'Validation accuracy: [0-9.]*' "$tmp/run.out")
expect_status 0 "--load and evaluate only" -- "$app" "${small[@]}" --epochs 0 --load "$tmp/m.weights"
reloaded=$(grep -o 'Validation accuracy: [0-9.]*' "$tmp/out")
if [ -z "$accuracy" ] || [ "$accuracy" != "$reloaded" ]; then
  echo "FAIL: reloaded weights give '$reloaded', trained model gave '$accuracy'"; failures=$((failures + 1))
fi
expect_status 0 "--cache, --no-augment, --data-scaling 1,2" -- "$app" "${small[@]}" --cache \
  --no-augment --data-scaling 1,2 --data-scaling-csv "$tmp/scaling.csv"
expect_text "$tmp/scaling.csv" "workers,seconds,images_per_second"

expect_status 0 "a batch larger than the data set (one step of all 48 images)" -- "$app" \
  "${small[@]}" --epochs 1 --batch-size 64
expect_text "$tmp/out" "1/1 [" "(16 images)"

# Bad files: skipped with a warning that names them and counts them, labels unharmed.
cats=$data/train/cats
head -c 2000 "$cats/$(ls "$cats" | head -1)" > "$cats/truncated.jpg"
echo "not an image" > "$cats/text.jpg"
printf '\x89PNG\r\n\x1a\n0000000000000000' > "$cats/png_named.jpg"
: > "$cats/empty.jpg"
echo "notes" > "$cats/readme.txt"
expect_status 0 "a folder with bad files" -- "$app" "${small[@]}" --epochs 1 --steps-per-epoch 1
expect_text "$tmp/out" "truncated.jpg" "text.jpg" "png_named.jpg" "PNG" "empty.jpg" \
  "48 training images (cats 24, dogs 24)"
expect_status 1 "--strict on a folder with bad files" -- "$app" "${small[@]}" --epochs 1 --strict
expect_text "$tmp/err" "$cats/"

mkdir -p "$tmp/empty_class/train/cats" "$tmp/empty_class/train/dogs" "$tmp/empty_class/validation"
cp "$data"/train/cats/cat.0.jpg "$tmp/empty_class/train/cats/"
expect_status 1 "an empty class folder" -- "$app" "${cpu[@]}" --data-dir "$tmp/empty_class" --epochs 1
expect_text "$tmp/err" "dogs"
mkdir -p "$tmp/no_validation/train"
cp -r "$data/train/dogs" "$tmp/no_validation/train/"
cp -r "$data/validation/cats" "$tmp/no_validation/train/"
expect_status 1 "no validation folder" -- "$app" "${cpu[@]}" --data-dir "$tmp/no_validation" --epochs 1
expect_text "$tmp/err" "validation"
mkdir -p "$tmp/three_classes/train" "$tmp/three_classes/validation"
cp -r "$data/train/cats" "$data/train/dogs" "$tmp/three_classes/train/"
cp -r "$data/train/cats" "$tmp/three_classes/train/birds"
cp -r "$data/validation/cats" "$data/validation/dogs" "$tmp/three_classes/validation/"
expect_status 1 "three class folders (bad data, not a bad flag)" -- "$app" "${cpu[@]}" \
  --data-dir "$tmp/three_classes" --epochs 1
expect_text "$tmp/err" "3 class folders"
expect_status 1 "no data at all" -- "$app" "${cpu[@]}" --data-dir "$tmp/nothing" --epochs 1
expect_text "$tmp/err" "nothing"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
