#!/usr/bin/env bash
# datasets/make_dogs_cats: a 10-image tree in the Keras blog's layout, every file a JPEG, the same
# seed writing the same bytes; it refuses to write into a non-empty tree without --force (exit
# status 2, one line, nothing lost), and a bad flag exits 2 with one line.
# Usage: test_make_dogs_cats.sh PATH/TO/make_dogs_cats OUTPUT_DIR
set -uo pipefail
make=${1:?make_dogs_cats binary}; out=${2:?output dir}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

small=(--train-per-class 3 --validation-per-class 2)
expect_status 0 "10 images into $out (--force)" -- "$make" --out "$out" "${small[@]}" --force

# Kaggle's numbering: train/ holds cat.0-2 and dog.0-2, validation/ the next two of each.
expected=()
for n in 0 1 2; do expected+=("train/cats/cat.$n.jpg" "train/dogs/dog.$n.jpg"); done
for n in 3 4; do expected+=("validation/cats/cat.$n.jpg" "validation/dogs/dog.$n.jpg"); done
for file in "${expected[@]}"; do
  path=$out/$file
  if [ ! -s "$path" ]; then
    echo "FAIL: $file is missing or empty"; failures=$((failures + 1)); continue
  fi
  # Every JPEG starts with the SOI marker FF D8 and ends with the EOI marker FF D9.
  first=$(head -c 2 "$path" | od -An -tx1 | tr -d ' \n')
  last=$(tail -c 2 "$path" | od -An -tx1 | tr -d ' \n')
  if [ "$first" != "ffd8" ] || [ "$last" != "ffd9" ]; then
    echo "FAIL: $file starts with $first and ends with $last, not ffd8 ... ffd9"; failures=$((failures + 1))
  fi
done
count=$(find "$out/train" "$out/validation" -type f | wc -l)
if [ "$count" -ne 10 ]; then
  echo "FAIL: $count files in the tree, expected 10"; failures=$((failures + 1))
else
  echo "ok: the 10 files are there, each a JPEG"
fi
expect_text "$out/SYNTHETIC.txt" "NOT Kaggle's photographs" "--seed 42"

# The same seed gives the same bytes (the images are drawn in parallel, each from its own stream).
expect_status 0 "the same tree again" -- "$make" --out "$tmp/again" "${small[@]}"
if diff -r "$out/train" "$tmp/again/train" > /dev/null && diff -r "$out/validation" "$tmp/again/validation" > /dev/null; then
  echo "ok: the same seed wrote the same files"
else
  echo "FAIL: two runs with the same seed wrote different files"; failures=$((failures + 1))
fi

# No lost data: a second run without --force is refused and leaves the files as they were.
before=$(cksum "$tmp/again"/*/*/*.jpg)
expect_status 2 "refuses a non-empty tree without --force" -- "$make" --out "$tmp/again" "${small[@]}" --seed 7
expect_text "$tmp/err" "--force"
if [ "$(cksum "$tmp/again"/*/*/*.jpg)" != "$before" ]; then
  echo "FAIL: the refused run changed the tree"; failures=$((failures + 1))
fi
# --force replaces the images of an earlier, larger run, so none of them is left behind.
expect_status 0 "--force over a larger tree" -- "$make" --out "$tmp/again" --train-per-class 1 --validation-per-class 1 --force
count=$(find "$tmp/again/train" "$tmp/again/validation" -type f | wc -l)
if [ "$count" -ne 4 ]; then
  echo "FAIL: $count files after --force with 1 + 1 per class, expected 4"; failures=$((failures + 1))
fi

expect_status 2 "--train-per-class -1" -- "$make" --out "$tmp/bad" --train-per-class -1
expect_status 2 "unknown flag" -- "$make" --out "$tmp/bad" --no-such-flag
expect_status 2 "no --out" -- "$make"
expect_status 2 "--min-size above --max-size" -- "$make" --out "$tmp/bad" --min-size 300 --max-size 200
expect_status 2 "--quality-max 101" -- "$make" --out "$tmp/bad" --quality-max 101
expect_status 2 "--out is a file" -- "$make" --out "$tmp/again/SYNTHETIC.txt"
expect_status 0 "--help" -- "$make" --help

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
