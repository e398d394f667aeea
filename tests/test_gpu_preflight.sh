#!/usr/bin/env bash
# The pre-flight memory check (nn/memory_estimate.h) on a real GPU: a batch that no GPU holds is
# refused before the first step, with one line giving the estimate and the device's free and
# total memory, and exit status 2.
#
# The training apps cap the batch at the training set's size, and the MNIST and CIFAR-10 sets
# are too small for any seed model's batch to outgrow a big GPU (the whole 50,000-image
# CIFAR-10 set in one batch is estimated at ~94 GiB, which an H200 holds). Dogs vs Cats resizes
# its images to --image-size: at 1024x1024 one sample's activations are estimated at ~0.77 GiB,
# so a batch of 512 needs ~400 GiB. The tree is 516 tiny JPEGs, upscaled by the loader.
# Exits 77 (ctest: skipped, never passed) where no GPU can be used.
# Usage: test_gpu_preflight.sh PATH/TO/dogs_vs_cats PATH/TO/make_dogs_cats
set -uo pipefail
app=${1:?dogs_vs_cats binary}; make=${2:?make_dogs_cats binary}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

if no_gpu; then echo "*** GPU TEST SKIPPED: no GPU (nvidia-smi fails) ***"; exit 77; fi
"$make" --out "$tmp/tree" --train-per-class 257 --validation-per-class 1 --min-size 32 \
  --max-size 32 > /dev/null || { echo "FAIL: make_dogs_cats"; exit 1; }

common=(--gpu --data-dir "$tmp/tree" --image-size 1024 --augment-on gpu --prefetch 2 --epochs 1
        --steps-per-epoch 1)
expect_status 2 "batch 512 of 1024x1024 images" -- timeout 300 "$app" "${common[@]}" --batch-size 512
if grep -q "cannot use the GPU" "$tmp/err"; then
  echo "*** GPU TEST SKIPPED: $(cat "$tmp/err") ***"; exit 77
fi
expect_text "$tmp/err" "dogs_vs_cats: needs ~" " of device memory for batch 512 (parameters " \
  ", activations " ", the device has " " free of " ": lower --batch-size"
# Refused before the first step: no epoch began.
if grep -q "Epoch 1/1" "$tmp/out"; then
  echo "FAIL: training started before the refusal"; failures=$((failures + 1))
fi

# The same run with a batch of 2 fits (~1.5 GiB of activations, ~2.3 GiB in all) and trains
# its one step; the estimate is printed at --log-level debug.
expect_status 0 "batch 2 of the same" -- timeout 300 "$app" "${common[@]}" --batch-size 2 \
  --log-level debug
expect_text "$tmp/out" "memory estimate for training on cuda:0: ~" "for batch 2 (parameters "

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all pre-flight checks passed"
