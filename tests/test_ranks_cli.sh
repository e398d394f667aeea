#!/usr/bin/env bash
# Data-parallel training's command line (apps/common/rank_launcher.h). Everywhere: --gpus is
# refused in one line where it cannot run. With one GPU and NCCL: --gpus 1 goes through the
# whole NCCL path and ends with the same weights, bit for bit, as a run without it; --gpus 2 is
# refused. With two GPUs or more: two ranks end with identical weights (the run checks and
# says so), the loss is the one-GPU run's with the same global batch, Ctrl-C stops both and
# the checkpoint resumes on one GPU, and a rank killed with SIGKILL ends the run within seconds,
# with one line.
# Usage: test_ranks_cli.sh PATH/TO/mnist_mlp DATA_DIR
set -uo pipefail
app=${1:?mnist_mlp binary}; data=${2:?data dir}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0

# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

short=(--data-dir "$data" --epochs 1 --steps-per-epoch 40)
expect_status 2 "--gpus 0" -- "$app" --gpus 0
expect_status 2 "--gpus on the CPU" -- "$app" --cpu --gpus 2 "${short[@]}"
expect_text "$tmp/err" "--gpus needs the GPU"
expect_status 2 "--gpus beyond this host's GPUs (or this build's NCCL)" -- \
  "$app" --gpu --gpus 1024 "${short[@]}"
# A rank's environment that makes no sense: one line, before any work.
ENGINE_WORLD_SIZE=2 ENGINE_RANK=5 ENGINE_NCCL_ID_FILE="$tmp/id" \
  expect_status 1 "a rank outside its world" -- "$app" --cpu "${short[@]}"
expect_text "$tmp/err" "ENGINE_RANK=5 is not a whole number from 0 to 1"

gpus=0
if ! no_gpu; then gpus=$(nvidia-smi -L | grep -c '^GPU'); fi
if [ "$gpus" -ge 1 ] && ! grep -q "no NCCL" "$tmp/err" && \
   [[ $("$app" --gpu --gpus 1024 "${short[@]}" 2>&1) != *"no NCCL"* ]]; then
  # One rank through NCCL: the same weights as no --gpus at all, on the op-by-op path that
  # ranks take (the fused kernel does not average gradients over ranks, so --no-fused here).
  expect_status 0 "--gpus 1" -- "$app" --gpu --gpus 1 "${short[@]}" --save "$tmp/one.weights"
  expect_text "$tmp/out" "Ranks: 1 processes" "identical on all 1 ranks"
  expect_status 0 "no --gpus" -- "$app" --gpu --no-fused "${short[@]}" --save "$tmp/plain.weights"
  if cmp -s "$tmp/one.weights" "$tmp/plain.weights"; then
    echo "ok: --gpus 1 ends with the weights of a run without it, bit for bit"
  else
    echo "FAIL: --gpus 1 and no --gpus end with different weights"; failures=$((failures + 1))
  fi
  if [ "$gpus" -eq 1 ]; then
    expect_status 2 "--gpus 2 on one GPU" -- "$app" --gpu --gpus 2 "${short[@]}"
    expect_text "$tmp/err" "this host has 1 GPU"
  fi
else
  echo "skipped: the NCCL runs (no GPU or no NCCL here)"
fi

if [ "$gpus" -ge 2 ]; then
  # N ranks of batch 64/N against one GPU of batch 64: the same batches, the same masks, the
  # gradients averaged instead of computed at once, so every epoch's loss agrees to float
  # rounding (three epochs: the curve, not only its start).
  curve=(--data-dir "$data" --epochs 3 --steps-per-epoch 40)
  expect_status 0 "one GPU, batch 64" -- "$app" --gpu --no-fused "${curve[@]}" --batch-size 64
  epoch_losses() { grep -oE 'loss: [0-9.]+' "$tmp/out" | head -3 | cut -d' ' -f2 | tr '\n' ' '; }
  one=$(epoch_losses)  # the three epochs' lines (the test set's loss follows them)
  for n in 2 4; do
    [ "$gpus" -ge "$n" ] || continue
    expect_status 0 "--gpus $n" -- "$app" --gpu --gpus "$n" "${curve[@]}" --batch-size $((64 / n))
    expect_text "$tmp/out" "Ranks: $n processes" "identical on all $n ranks"
    many=$(epoch_losses)
    if awk -v a="$many" -v b="$one" 'BEGIN { n = split(a, x, " "); m = split(b, y, " ");
         if (n != 3 || m != 3) exit 1
         for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 2e-3 * y[i]) exit 1 }
         exit 0 }'; then
      echo "ok: the loss curve, $n ranks x $((64 / n)) = $many, one GPU x 64 = $one"
    else
      echo "FAIL: $n ranks x $((64 / n)) lost $many, one GPU x 64 lost $one"; failures=$((failures + 1))
    fi
  done
  # Ctrl-C: the launcher passes it on once, both ranks stop after the same step, rank 0 saves
  # the checkpoint; it resumes on one GPU taking the same 64 samples per step.
  long=(--data-dir "$data" --epochs 100 --checkpoint "$tmp/dp.ckpt")
  "$app" --gpu --gpus 2 "${long[@]}" > "$tmp/out" 2> "$tmp/err" &
  launcher=$!
  for _ in $(seq 300); do [ -f "$tmp/dp.ckpt" ] && break; sleep 0.1; done  # epoch 1 is done
  kill -INT "$launcher"
  wait "$launcher"; status=$?
  if [ "$status" -eq 130 ] && grep -q "resume with --resume" "$tmp/err" "$tmp/out"; then
    echo "ok: SIGINT to the launcher: status 130, $(grep -h "resume with" "$tmp/err" "$tmp/out" | head -1)"
  else
    echo "FAIL: SIGINT to the launcher: status $status"; cat "$tmp/err"; failures=$((failures + 1))
  fi
  expect_status 0 "a two-GPU checkpoint resumed on one GPU, batch 64" -- \
    "$app" --gpu --batch-size 64 "${long[@]}" --resume "$tmp/dp.ckpt"
  # A rank that dies: the launcher stops the others (stuck in their all-reduce) within seconds.
  ranks=$((gpus >= 4 ? 4 : 2))
  "$app" --gpu --gpus "$ranks" --data-dir "$data" --epochs 1000 > "$tmp/out" 2> "$tmp/err" &
  launcher=$!
  victim=
  for _ in $(seq 100); do  # every rank started (their output is buffered: not a sign)
    [ "$(pgrep -P "$launcher" | wc -l)" -eq "$ranks" ] && victim=$(pgrep -P "$launcher" | tail -1) && break
    sleep 0.1
  done
  sleep 5  # connected and training
  kill -9 "$victim"
  start=$SECONDS
  wait "$launcher"; status=$?
  if [ "$status" -ne 0 ] && [ $((SECONDS - start)) -le 15 ] && grep -q "was killed by signal 9" "$tmp/err"; then
    echo "ok: a killed rank of $ranks ends the run in $((SECONDS - start)) s, status $status: $(head -1 "$tmp/err")"
  else
    echo "FAIL: a killed rank: status $status after $((SECONDS - start)) s"; cat "$tmp/err"
    failures=$((failures + 1))
  fi
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
