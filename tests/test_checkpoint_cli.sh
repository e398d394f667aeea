#!/usr/bin/env bash
# Checkpoints, --resume, signals and the NaN check on the command line of apps/mnist_mlp (the
# flags are apps/common's, shared by every training app): 2 epochs + --resume to 4 gives the
# weights of 4 straight, byte for byte; SIGINT and SIGTERM mid-run save, say how to resume, and
# exit 130 / 143, and resuming ends where a straight run does; a SIGINT after fit's last look
# still evaluates, saves --save's weights and exits 130 with one line; two runs in one folder,
# one checkpoint path, both interrupted, leave a checkpoint that resumes and no temporaries;
# kill -9 in the middle of a checkpoint write leaves the previous checkpoint loadable; bad
# checkpoints are refused with one line; a checkpoint of other data (one pixel changed, or the
# synthetic digits resumed on Fashion-MNIST) is refused naming it; a NaN names the epoch, step
# and layer and leaves the last checkpoint as it was.
# Usage: test_checkpoint_cli.sh PATH/TO/mnist_mlp DATA_DIR
set -uo pipefail
app=${1:?mnist_mlp binary}; data=${2:?data dir}
# Absolute: some runs start in another directory.
app=$(cd "$(dirname "$app")" && pwd)/$(basename "$app"); data=$(cd "$data" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0

# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

# Every run: 20 steps per epoch of the 8,000 digits on one thread, so the sums are the same
# every run (bit-for-bit needs fixed threads).
train() { "$app" --data-dir "$data" --steps-per-epoch 20 --threads 1 "$@"; }

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# same_weights A B WHAT: the two weights files are the same bytes.
same_weights() {
  if cmp -s "$1" "$2"; then echo "ok: $3"; else fail "$3: $1 and $2 differ"; fi
}

# refused DESCRIPTION TEXT -- COMMAND...: status 1 and one line on stderr holding TEXT.
refused() {
  local what=$1 text=$2; shift 2
  expect_status 1 "$what" "$@"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$what: expected one line on stderr"
  expect_text "$tmp/err" "$text"
}

# overwrite FILE OFFSET BYTES: writes BYTES (printf escapes) over FILE at OFFSET.
overwrite() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }

# straight_to EPOCHS: the weights of a straight run of that many epochs, $tmp/straight_N.weights.
straight_to() {
  [ -f "$tmp/straight_$1.weights" ] ||
    train --epochs "$1" --save "$tmp/straight_$1.weights" > /dev/null 2>&1 ||
    fail "the straight run of $1 epochs failed"
}

# epochs_to_finish: from the stderr or stdout line naming where a checkpoint stands ("in epoch
# E after step S" or "after epoch E"), the epochs a run must have to go past it.
epochs_to_finish() {
  local line; line=$(grep -o -E '(in epoch [0-9]+|after epoch [0-9]+)' "$1" | head -n 1)
  case "$line" in
    "in epoch "*) echo "${line#in epoch }" ;;
    "after epoch "*) echo $((${line#after epoch } + 1)) ;;
    *) echo 0 ;;
  esac
}

# shellcheck source=tests/signal_checks.sh
. "$(dirname "$0")/signal_checks.sh"
started_epoch_2() { grep -q "Epoch 2/" "$tmp/out"; }

# ---- flags ----------------------------------------------------------------------------------
expect_status 2 "--checkpoint-every 0" -- train --checkpoint "$tmp/x.ckpt" --checkpoint-every 0
expect_text "$tmp/err" "--checkpoint-every"
expect_status 2 "--checkpoint-every without --checkpoint" -- train --checkpoint-every 2
expect_status 2 "--resume of a missing file" -- train --resume "$tmp/missing.ckpt"
expect_status 2 "--nan-check with --no-nan-check" -- train --nan-check --no-nan-check
expect_status 2 "--learning-rate 0" -- train --learning-rate 0

# ---- 2 epochs + --resume to 4 equals 4 straight --------------------------------------------
straight_to 4
expect_status 0 "2 epochs with --checkpoint" -- train --epochs 2 --checkpoint "$tmp/two.ckpt"
[ -f "$tmp/two.ckpt" ] && [ -z "$(compgen -G "$tmp/two.ckpt.tmp*")" ] ||
  fail "no checkpoint, or a stray .tmp"
expect_status 0 "--resume to 4 epochs" -- train --epochs 4 --resume "$tmp/two.ckpt" \
  --save "$tmp/resumed.weights" --json "$tmp/resumed.json"
expect_text "$tmp/out" "Resuming from $tmp/two.ckpt after epoch 2" "Epoch 3/4" "Epoch 4/4"
same_weights "$tmp/straight_4.weights" "$tmp/resumed.weights" "2 + resumed 2 epochs = 4 straight"
# The record is whole: all four epochs, and where the run came from.
expect_text "$tmp/resumed.json" '"epoch": 1,' '"epoch": 4,' "\"resumed_from\": \"$tmp/two.ckpt\""

# --checkpoint-every 2 over 3 epochs: after epoch 2, and after the last.
expect_status 0 "--checkpoint-every 2" -- train --epochs 3 --checkpoint "$tmp/every.ckpt" \
  --checkpoint-every 2
expect_status 0 "resuming a finished run only evaluates" -- train --epochs 3 \
  --resume "$tmp/every.ckpt"
expect_text "$tmp/out" "after epoch 3" "Test accuracy"
grep -q "^Epoch " "$tmp/out" && fail "a finished run trained again"

# ---- SIGINT and SIGTERM ---------------------------------------------------------------------
# interrupt SIGNAL STATUS CHECKPOINT DIR -- ARGS: a long run in DIR, signalled once its second
# epoch has started; it must save CHECKPOINT, say how to resume, and exit with STATUS; then
# resuming from it to the end of the epoch it stopped in must give the straight run's weights.
interrupt() {
  local signal=$1 status=$2 checkpoint=$3 dir=$4; shift 5
  in_background "$dir" -- "$app" --data-dir "$data" --steps-per-epoch 20 --threads 1 \
    --epochs 100000 "$@"
  if ! wait_for started_epoch_2; then
    fail "$signal: the run never reached epoch 2"; cat "$tmp/err"; kill -9 "$pid"; return
  fi
  kill "-$signal" "$pid"
  wait "$pid"; local got=$?
  if [ "$got" -ne "$status" ]; then fail "$signal: exit status $got, expected $status"; cat "$tmp/err"; return; fi
  echo "ok: $signal: exit status $got ($(head -c 160 "$tmp/err"))"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$signal: expected one line on stderr"
  expect_text "$tmp/err" "interrupted by SIG$signal" "saved a checkpoint to $checkpoint" \
    "resume with --resume $checkpoint"
  local epochs; epochs=$(epochs_to_finish "$tmp/err")
  straight_to "$epochs"
  (cd "$dir" && train --epochs "$epochs" --resume "$checkpoint" --save "$tmp/after_$signal.weights") \
    > "$tmp/out" 2> "$tmp/err" || { fail "$signal: resuming failed"; cat "$tmp/err"; return; }
  same_weights "$tmp/straight_$epochs.weights" "$tmp/after_$signal.weights" \
    "$signal, then --resume to the end of epoch $epochs = straight"
}
interrupt INT 130 "$tmp/int.ckpt" "$tmp" -- --checkpoint "$tmp/int.ckpt"
# Without --checkpoint, a signal saves to <app>.ckpt in the working directory.
mkdir -p "$tmp/term"
interrupt TERM 143 mnist_mlp.ckpt "$tmp/term" --

# ---- a signal after fit (issue 24) ----------------------------------------------------------
# SIGINT while the last epoch's checkpoint is written (slowed by the test hook, as below): fit
# has looked for a signal for the last time, so this one comes after it. The run still
# evaluates and saves --save's weights, then says what keeps the trained model and exits 130.
# (Before issue 24 the signal was lost: exit 0, no line.)
final_write() { [ -n "$(compgen -G "$tmp/final.ckpt.tmp.*")" ]; }
in_background "$tmp" -- env ENGINE_TEST_CHECKPOINT_WRITE_DELAY_MS=40 "$app" --data-dir "$data" \
  --steps-per-epoch 20 --threads 1 --epochs 1 --checkpoint "$tmp/final.ckpt" \
  --save "$tmp/final.weights"
if wait_for final_write; then
  kill -INT "$pid"
  wait "$pid"; got=$?
  if [ "$got" -ne 130 ]; then
    fail "SIGINT after fit: exit status $got, expected 130"; cat "$tmp/err"
  else
    echo "ok: SIGINT after fit: exit status $got ($(head -c 200 "$tmp/err"))"
  fi
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "SIGINT after fit: expected one line on stderr"
  expect_text "$tmp/err" "interrupted by SIGINT once training had ended (after epoch 1)" \
    "the evaluation finished" "saved the weights to $tmp/final.weights" \
    "the checkpoint $tmp/final.ckpt holds the trained run" "resume with --resume $tmp/final.ckpt"
  expect_text "$tmp/out" "Test accuracy" "Saved weights to $tmp/final.weights"
  straight_to 1
  same_weights "$tmp/straight_1.weights" "$tmp/final.weights" "SIGINT after fit: --save = straight"
  expect_status 0 "SIGINT after fit: its checkpoint resumes (nothing left to train)" -- \
    train --epochs 1 --resume "$tmp/final.ckpt"
else
  fail "never saw the last checkpoint being written"; kill -9 "$pid"
fi

# ---- two runs in one folder, one checkpoint path, both interrupted --------------------------
# Both save shared.ckpt after every epoch and on the signal, each through a temporary of its own:
# each must say where it stopped (or why it could not save) in one line, no temporary may be
# left, and the checkpoint left, whichever run wrote it last, must resume to a straight run's
# weights (the runs are identical, so either one's is the straight run's).
in_background "$tmp" "$tmp/first" -- "$app" --data-dir "$data" --steps-per-epoch 20 --threads 1 \
  --epochs 100000 --checkpoint "$tmp/shared.ckpt"
first=$pid
in_background "$tmp" "$tmp/second" -- "$app" --data-dir "$data" --steps-per-epoch 20 --threads 1 \
  --epochs 100000 --checkpoint "$tmp/shared.ckpt"
second=$pid
both_in_epoch_2() { grep -q "Epoch 2/" "$tmp/first.out" && grep -q "Epoch 2/" "$tmp/second.out"; }
if wait_for both_in_epoch_2; then
  kill -INT "$first" "$second"
  epochs=0
  for run in first second; do
    if [ "$run" = first ]; then wait "$first"; else wait "$second"; fi
    got=$?
    [ "$(wc -l < "$tmp/$run.err")" -eq 1 ] || fail "two runs: the $run did not end in one line"
    case $got in
      130) expect_text "$tmp/$run.err" "interrupted by SIGINT" "saved a checkpoint to $tmp/shared.ckpt"
           stopped=$(epochs_to_finish "$tmp/$run.err")
           [ "$stopped" -gt "$epochs" ] && epochs=$stopped ;;
      1) echo "ok: two runs: the $run could not save: $(cat "$tmp/$run.err")" ;;
      *) fail "two runs: the $run exited with $got"; cat "$tmp/$run.err" ;;
    esac
  done
  echo "ok: two runs in one folder interrupted ($(head -c 100 "$tmp/first.err") / $(head -c 100 "$tmp/second.err"))"
  [ -z "$(compgen -G "$tmp/shared.ckpt.tmp.*")" ] || fail "two runs: a temporary was left"
  if [ "$epochs" -gt 0 ]; then
    expect_status 0 "two runs: the checkpoint left resumes" -- train --epochs "$epochs" \
      --resume "$tmp/shared.ckpt" --save "$tmp/shared.weights"
    straight_to "$epochs"
    same_weights "$tmp/straight_$epochs.weights" "$tmp/shared.weights" \
      "two runs: resumed to the end of epoch $epochs = straight"
  else
    fail "two runs: neither saved a checkpoint"
  fi
else
  fail "two runs: they never both reached epoch 2"; kill -9 "$first" "$second"
fi

# ---- kill -9 in the middle of a checkpoint write --------------------------------------------
# Each 64 KiB of a checkpoint write pauses 40 ms (a test hook): the ~1.2 MB file takes ~0.8 s,
# and the run is killed while the second one is half-written.
# The writer's temporary has a unique name, nine.ckpt.tmp.XXXXXX (core/binary_file.h).
half_written() { compgen -G "$tmp/nine.ckpt.tmp.*" | head -n 1; }
mid_write() { [ -f "$tmp/nine.ckpt" ] && [ -n "$(half_written)" ]; }
in_background "$tmp" -- env ENGINE_TEST_CHECKPOINT_WRITE_DELAY_MS=40 "$app" --data-dir "$data" \
  --steps-per-epoch 20 --threads 1 --epochs 100000 --checkpoint "$tmp/nine.ckpt"
if wait_for mid_write; then
  kill -9 "$pid"
  wait "$pid" 2> /dev/null  # (the shell's "Killed" notice)
  echo "ok: killed with -9 during a checkpoint write"
  half=$(half_written)
  [ "$(stat -c %s "$half")" -lt "$(stat -c %s "$tmp/nine.ckpt")" ] ||
    fail "the write was not interrupted (the .tmp file is whole)"
  refused "the half-written file is refused" "checksum mismatch" -- \
    train --epochs 2 --resume "$half"
  expect_status 0 "the previous checkpoint loads and resumes" -- train --epochs 3 \
    --resume "$tmp/nine.ckpt" --save "$tmp/nine.weights"
  epochs=$(epochs_to_finish "$tmp/out")
  [ "$epochs" -le 3 ] || fail "the kept checkpoint is from epoch $((epochs - 1)), expected 1 or 2"
  straight_to 3
  same_weights "$tmp/straight_3.weights" "$tmp/nine.weights" "resumed after kill -9 = straight"
else
  fail "never saw a checkpoint write in progress"; kill -9 "$pid"
fi

# ---- bad checkpoints ------------------------------------------------------------------------
bad=$tmp/bad.ckpt
head -c 10 "$tmp/two.ckpt" > "$bad"
refused "a truncated checkpoint" "file is truncated" -- train --epochs 3 --resume "$bad"
cp "$tmp/two.ckpt" "$bad"; overwrite "$bad" 0 'X'
refused "a checkpoint with the wrong magic" "not a checkpoint file (bad magic)" -- \
  train --epochs 3 --resume "$bad"
cp "$tmp/two.ckpt" "$bad"; overwrite "$bad" 8 '\x03'
refused "a checkpoint of a newer version" "written by a newer engine (format version 3" -- \
  train --epochs 3 --resume "$bad"
cp "$tmp/two.ckpt" "$bad"; overwrite "$bad" 5000 'ABCD'
refused "a checkpoint with a bad checksum" "checksum mismatch" -- train --epochs 3 --resume "$bad"
refused "a checkpoint of another model" "holds 4 tensors but the model has 6 (a different model)" \
  -- train --epochs 3 --wide --resume "$tmp/two.ckpt"
refused "a weights file given to --resume" "a weights file" -- \
  train --epochs 3 --resume "$tmp/resumed.weights"
refused "a checkpoint of another seed" "$tmp/two.ckpt: saved by a run with seed 42" -- \
  train --epochs 3 --seed 1 --resume "$tmp/two.ckpt"
expect_status 2 "--resume with --load" -- train --resume "$tmp/two.ckpt" --load "$tmp/resumed.weights"

# ---- other data (issue 24) ------------------------------------------------------------------
# The same digits in another folder resume; with one pixel changed, the same number of samples
# is other data, refused naming the checkpoint (before issue 24 it resumed without a word).
mkdir -p "$tmp/other"
cp -rL "$data/mnist" "$tmp/other/"
on_other() { "$app" --data-dir "$tmp/other" --steps-per-epoch 20 --threads 1 "$@"; }
expect_status 0 "the same digits in another folder resume" -- on_other --epochs 3 \
  --resume "$tmp/two.ckpt"
images=$tmp/other/mnist/train-images-idx3-ubyte
[ -f "$images.gz" ] && gunzip -f "$images.gz"
pixel=$(od -An -tu1 -j 1000 -N 1 "$images")
overwrite "$images" 1000 "$(printf '\\x%02x' $(((pixel + 1) % 256)))"
refused "one pixel changed: other data" \
  "$tmp/two.ckpt: saved by a run on other training data (" -- \
  on_other --epochs 3 --resume "$tmp/two.ckpt"
expect_text "$tmp/err" "resume on the data the checkpoint was saved with"
# The issue's case: a checkpoint of the synthetic digits resumed on Fashion-MNIST, 60,000 each.
if [ -e "$data/fashion" ] || [ -d /usr/share/datasets/fashion-mnist ]; then
  expect_status 0 "an epoch of the synthetic digits" -- train --dataset synthetic --epochs 1 \
    --checkpoint "$tmp/synthetic.ckpt"
  refused "the synthetic digits' checkpoint resumed on Fashion-MNIST" \
    "$tmp/synthetic.ckpt: saved by a run on other training data (60000 samples" -- \
    train --dataset fashion --epochs 2 --resume "$tmp/synthetic.ckpt"
else
  echo "skipped: the synthetic digits resumed on Fashion-MNIST (no Fashion-MNIST here)"
fi

# ---- NaN check ------------------------------------------------------------------------------
# A learning rate of 1e30 sends Adam's first update to ~1e30; the next step's logits overflow.
cp "$tmp/two.ckpt" "$tmp/nan.ckpt"; cp "$tmp/nan.ckpt" "$tmp/nan.before"
refused "a NaN stops training, naming epoch, step and layer" "NaN/Inf at epoch 3, step 2/20" -- \
  train --epochs 4 --resume "$tmp/nan.ckpt" --checkpoint "$tmp/nan.ckpt" --learning-rate 1e30
expect_text "$tmp/err" "gradient of dense/kernel (forward order)"
same_weights "$tmp/nan.before" "$tmp/nan.ckpt" "the last good checkpoint stays after a NaN"
# Unchecked, the NaN weights reach the epoch's checkpoint, which refuses them.
refused "--no-nan-check: the checkpoint refuses NaN weights" "not saving a checkpoint" -- \
  train --epochs 4 --resume "$tmp/nan.ckpt" --checkpoint "$tmp/nan.ckpt" --learning-rate 1e30 \
  --no-nan-check
same_weights "$tmp/nan.before" "$tmp/nan.ckpt" "the last good checkpoint stays, unchecked"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
