#!/usr/bin/env bash
# A signal after training, during the final evaluation (issue 24): mnist_cnn on the synthetic
# digits validates on 5,000 of its test images at the epoch's end and evaluates them again after
# fit, a second or two on one thread. SIGINT once the epoch's line is out (fit has ended) must not
# kill the run with no line and the model lost: the evaluation finishes, and without --save or
# --checkpoint a checkpoint of the trained run is saved to mnist_cnn.ckpt; one line says so, the
# status is 130, and resuming from it trains no more and evaluates to the same test loss.
# Usage: test_signal_after_fit.sh PATH/TO/mnist_cnn
set -uo pipefail
app=${1:?mnist_cnn binary}
app=$(cd "$(dirname "$app")" && pwd)/$(basename "$app")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0

# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"
# shellcheck source=tests/signal_checks.sh
. "$(dirname "$0")/signal_checks.sh"

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
run=(--dataset synthetic --test-images 5000 --epochs 1 --steps-per-epoch 2 --threads 1)

# The epoch's line ends with its validation: fit is over, the evaluation under way.
epoch_done() { grep -q "val_loss" "$tmp/out"; }
in_background "$tmp" -- "$app" "${run[@]}"
if wait_for epoch_done; then
  kill -INT "$pid"
  wait "$pid"; got=$?
  if [ "$got" -ne 130 ]; then
    fail "exit status $got, expected 130"
  else
    echo "ok: SIGINT during the evaluation: exit status $got ($(head -c 240 "$tmp/err"))"
  fi
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "expected one line on stderr, got: $(cat "$tmp/err")"
  expect_text "$tmp/err" "interrupted by SIGINT once training had ended (after epoch 1)" \
    "the evaluation finished" "saved a checkpoint to mnist_cnn.ckpt" \
    "resume with --resume mnist_cnn.ckpt"
  loss=$(grep -o "Test loss: [0-9.]*" "$tmp/out")
  [ -n "$loss" ] || fail "no test loss printed"
  expect_status 0 "the checkpoint saved after fit resumes: nothing left to train" -- \
    sh -c 'cd "$1" && shift && exec "$@"' sh "$tmp" "$app" "${run[@]}" --resume mnist_cnn.ckpt
  grep -q "^Epoch " "$tmp/out" && fail "the resumed run trained again"
  expect_text "$tmp/out" "$loss"
else
  fail "the epoch never ended"; kill -9 "$pid"
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
