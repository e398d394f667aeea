#!/usr/bin/env bash
# The memory pre-flight comes before anything sized by the data or a flag is allocated (issue
# 24): jacobian_mlp --val 1048576 asks for a dense J of 1.56 PiB and is refused at once, before
# the model, the input or the forward pass exist (before: seconds and 3.6 GB, then the
# allocator's error); an IDX of two 5000 x 5000 images fed to mnist_cnn gives weights that no
# host holds, and is refused before the model is built (before: std::bad_alloc in build, exit
# 1). Each refusal is one line with the estimate and what to change, exit status 2.
# Usage: test_preflight_cli.sh PATH/TO/jacobian_mlp PATH/TO/mnist_cnn
set -uo pipefail
jacobian=${1:?jacobian_mlp binary}; cnn=${2:?mnist_cnn binary}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

expect_status 2 "jacobian_mlp --val 1048576: a dense J of 1.56 PiB" -- \
  "$jacobian" --cpu --val 1048576
expect_text "$tmp/err" "needs ~1.56 PiB of host memory for J of shape (1048576, 400, 1048576, 1)" \
  "the diagonal blocks alone (--blocks) take 1.56 GiB" "fewer rows of x (--val)"
if grep -q "^Model:" "$tmp/out"; then
  echo "FAIL: the model was made before the refusal"; failures=$((failures + 1))
fi

# big_idx FILE COUNT SIDE: an IDX of COUNT black SIDE x SIDE images; FILE.labels their labels.
be32() { printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) \
  $(($1 >> 8 & 255)) $(($1 & 255)))"; }
big_idx() {
  { printf '\x00\x00\x08\x03'; be32 "$2"; be32 "$3"; be32 "$3"; head -c $(($2 * $3 * $3)) /dev/zero; } > "$1"
  { printf '\x00\x00\x08\x01'; be32 "$2"; head -c "$2" /dev/zero; } > "$1.labels"
}
mkdir -p "$tmp/big/mnist"
big_idx "$tmp/big/mnist/train-images-idx3-ubyte" 2 5000
big_idx "$tmp/big/mnist/t10k-images-idx3-ubyte" 1 5000
mv "$tmp/big/mnist/train-images-idx3-ubyte.labels" "$tmp/big/mnist/train-labels-idx1-ubyte"
mv "$tmp/big/mnist/t10k-images-idx3-ubyte.labels" "$tmp/big/mnist/t10k-labels-idx1-ubyte"
expect_status 2 "mnist_cnn on two 5000 x 5000 images: weights no host holds" -- \
  "$cnn" --cpu --threads 1 --data-dir "$tmp/big" --epochs 1
expect_text "$tmp/err" "of host memory for batch 2 (parameters " \
  "the weights alone (parameters, gradients and optimizer state, " \
  "do not fit, whatever the batch: smaller inputs or a smaller model"
if grep -q "Total params" "$tmp/out"; then
  echo "FAIL: the model was built before the refusal"; failures=$((failures + 1))
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
