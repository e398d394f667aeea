#!/usr/bin/env bash
# Reads on the command line (issue 24, classes 4 and 9): an input that is not a regular file is
# refused at once with one line naming it (--load /dev/zero used to read until std::bad_alloc,
# --resume of a FIFO used to wait forever); a partial CIFAR-10 folder is an error naming the
# missing batch, never synthetic data in silence; an MNIST folder that cannot be searched says
# why, not "missing ... run fetch_data.sh". Every run is under `timeout`, so a hang fails the
# test instead of stopping it, and under a memory limit, so a runaway read fails fast.
# Usage: test_reads_cli.sh PATH/TO/mnist_mlp PATH/TO/cifar10_cnn DATA_DIR
set -uo pipefail
mnist=${1:?mnist_mlp binary}; cifar=${2:?cifar10_cnn binary}; data=${3:?data dir}
tmp=$(mktemp -d); trap 'chmod -R u+rwx "$tmp"; rm -rf "$tmp"' EXIT
failures=0

# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

# bounded COMMAND...: COMMAND with 60 s and 8 GB of address space at most (a guard for a
# reader that would run to bad_alloc); not under AddressSanitizer, whose shadow memory alone
# reserves terabytes of address space. One OpenBLAS thread: at load it reserves buffers for
# every core (over 8 GB of address space on a 64-core host) before main() runs.
# (ldd's output taken whole: `ldd | grep -q` under pipefail fails whenever grep's early exit
# stops ldd with SIGPIPE, which chose the wrong branch now and then.)
if [[ $(ldd "$mnist" 2> /dev/null) == *libasan* ]]; then
  bounded() { timeout 60 "$@"; }
else
  bounded() { (ulimit -v 8000000; OPENBLAS_NUM_THREADS=1 exec timeout 60 "$@"); }
fi

# refused DESCRIPTION TEXT -- COMMAND...: status 1, one line on stderr, holding TEXT.
refused() {
  local what=$1 text=$2; shift 2
  expect_status 1 "$what" "$@"
  if [ "$(wc -l < "$tmp/err")" -ne 1 ]; then
    echo "FAIL: $what: expected one line on stderr"; failures=$((failures + 1))
  fi
  expect_text "$tmp/err" "$text"
}

short=(--epochs 1 --steps-per-epoch 2 --threads 1)

refused "--load /dev/zero" "weights file /dev/zero: is a character device, not a regular file" \
  -- bounded "$mnist" --data-dir "$data" --epochs 0 --load /dev/zero
mkfifo "$tmp/fifo.ckpt"
refused "--resume of a FIFO" \
  "checkpoint file $tmp/fifo.ckpt: is a FIFO (named pipe), not a regular file" \
  -- bounded "$mnist" --data-dir "$data" "${short[@]}" --resume "$tmp/fifo.ckpt"

# A CIFAR-10 folder without data_batch_1.bin (the others are there, empty: they are looked for
# before any is read). --dataset auto trained on synthetic data here, with exit status 0.
batches="$tmp/partial/cifar10/cifar-10-batches-bin"
mkdir -p "$batches"
touch "$batches"/data_batch_{2,3,4,5}.bin "$batches/test_batch.bin"
refused "cifar10_cnn --dataset auto with data_batch_1.bin missing" \
  "missing CIFAR-10 file $batches/data_batch_1.bin" \
  -- bounded "$cifar" --data-dir "$tmp/partial" "${short[@]}" --test-images 10

# An MNIST folder that cannot be searched. Root reads it whatever its permissions (as in CI):
# then there is nothing to check.
mkdir -p "$tmp/locked"
cp -R "$data/mnist" "$tmp/locked/mnist"
chmod 000 "$tmp/locked/mnist"
if [ -r "$tmp/locked/mnist/train-images-idx3-ubyte" ] ||
   [ -r "$tmp/locked/mnist/train-images-idx3-ubyte.gz" ]; then
  echo "skipped: an MNIST folder that cannot be searched (this user, $(id -un), reads it anyway)"
else
  refused "an MNIST folder that cannot be searched" "(Permission denied)" \
    -- bounded "$mnist" --data-dir "$tmp/locked" "${short[@]}"
  if grep -q "fetch_data.sh" "$tmp/err"; then
    echo "FAIL: the unreadable folder is called missing: $(cat "$tmp/err")"
    failures=$((failures + 1))
  fi
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
