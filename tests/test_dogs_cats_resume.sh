#!/usr/bin/env bash
# A Dogs-vs-Cats checkpoint resumes only on the photos it trained on (issue 24): the loader's
# fingerprint is its file list (each photo's path below the folder and its size) and labels, so
# a copy of the tree elsewhere resumes, and another tree of as many photos is refused with one
# line naming the checkpoint (before: it resumed without a word).
# Usage: test_dogs_cats_resume.sh PATH/TO/dogs_vs_cats PATH/TO/make_dogs_cats
set -uo pipefail
app=${1:?app binary}; make=${2:?generator binary}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

for seed in 3 4; do
  "$make" --out "$tmp/tree$seed" --train-per-class 12 --validation-per-class 4 --seed "$seed" \
    > /dev/null || { echo "FAIL: make_dogs_cats"; exit 1; }
done
cp -r "$tmp/tree3" "$tmp/copy3"
# 32x32 images and 2 threads keep each run to a second or so.
train() { "$app" --cpu --threads 2 --workers 2 --image-size 32 --batch-size 8 "$@"; }

expect_status 0 "one epoch with --checkpoint" -- train --data-dir "$tmp/tree3" --epochs 1 \
  --checkpoint "$tmp/dogs.ckpt"
expect_status 0 "the same photos in another folder resume" -- train --data-dir "$tmp/copy3" \
  --epochs 2 --resume "$tmp/dogs.ckpt"
expect_status 1 "another tree of as many photos is refused" -- train --data-dir "$tmp/tree4" \
  --epochs 2 --resume "$tmp/dogs.ckpt"
[ "$(wc -l < "$tmp/err")" -eq 1 ] || { echo "FAIL: expected one line"; failures=$((failures + 1)); }
expect_text "$tmp/err" "$tmp/dogs.ckpt: saved by a run on other training data (24 samples" \
  "this run trains on 24 samples"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
