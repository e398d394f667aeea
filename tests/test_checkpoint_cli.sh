#!/usr/bin/env bash
# Checkpoints, --resume, signals and the NaN check on the command line of apps/mnist_mlp (the
# flags are apps/common's, shared by every training app): 2 epochs + --resume to 4 gives the
# weights of 4 straight, byte for byte; SIGINT and SIGTERM mid-run save, say how to resume, and
# exit 130 / 143, and resuming ends where a straight run does; kill -9 in the middle of a
# checkpoint write leaves the previous checkpoint loadable; bad checkpoints are refused with one
# line; a NaN names the epoch, step and layer and leaves the last checkpoint as it was.
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

# in_background DIR -- COMMAND...: starts COMMAND in DIR with its output in $tmp/out, $tmp/err,
# and SIGINT not ignored (job control on: a script's background jobs otherwise ignore it, and
# the app leaves an ignored signal ignored). Sets `pid`.
in_background() {
  local dir=$1; shift 2
  set -m
  (cd "$dir" && exec "$@") > "$tmp/out" 2> "$tmp/err" &
  pid=$!
  set +m
}

# wait_for CONDITION...: polls the condition for up to 30 s.
wait_for() {
  local i
  for i in $(seq 1500); do "$@" && return 0; sleep 0.02; done
  return 1
}
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
cp "$tmp/two.ckpt" "$bad"; overwrite "$bad" 8 '\x02'
refused "a checkpoint of a newer version" "written by a newer engine (format version 2" -- \
  train --epochs 3 --resume "$bad"
cp "$tmp/two.ckpt" "$bad"; overwrite "$bad" 5000 'ABCD'
refused "a checkpoint with a bad checksum" "checksum mismatch" -- train --epochs 3 --resume "$bad"
refused "a checkpoint of another model" "holds 4 tensors but the model has 6 (a different model)" \
  -- train --epochs 3 --wide --resume "$tmp/two.ckpt"
refused "a weights file given to --resume" "a weights file" -- \
  train --epochs 3 --resume "$tmp/resumed.weights"
refused "a checkpoint of another seed" "saved by a run with seed 42" -- \
  train --epochs 3 --seed 1 --resume "$tmp/two.ckpt"
expect_status 2 "--resume with --load" -- train --resume "$tmp/two.ckpt" --load "$tmp/resumed.weights"

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
