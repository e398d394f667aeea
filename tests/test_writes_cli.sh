#!/usr/bin/env bash
# Issue 24, classes 3 and 7, on the command line. Every output path (--json, --save,
# --save-model, --checkpoint, --log-csv, --save-best, a sweep's --csv, bench's report) is checked
# before any work: exit 1, one line naming the path and the system's reason,
# nothing trained or measured. A full disk (a file-size limit of 0 bytes) makes a CSV's write
# fail with one line and exit 1, where "Wrote" and an empty file were printed and left before.
# A data folder whose name is not UTF-8 still gets its --json record, escaped; a file name with a
# newline keeps the skipped-files list and an error on one line each.
# Usage: test_writes_cli.sh PATH/TO/mnist_mlp matmul_sweep crossover dogs_vs_cats make_dogs_cats
#        bench DATA_DIR
set -uo pipefail
mnist=${1:?mnist_mlp}; sweep=${2:?matmul_sweep}; crossover=${3:?crossover}
dogs=${4:?dogs_vs_cats}; make=${5:?make_dogs_cats}; bench=${6:?bench}; data=${7:?data dir}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
# shellcheck source=tests/cli_checks.sh
. "$(dirname "$0")/cli_checks.sh"

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# refused_early WHAT TEXT WORK -- COMMAND...: COMMAND exits with status 1 before any work: one
# line on stderr holding TEXT, and stdout without WORK (what the work prints first). Not timed
# (a loaded CI machine is slow at anything); the 60 s limit only stops a run that goes on.
refused_early() {
  local what=$1 text=$2 work=$3; shift 4
  expect_status 1 "$what" -- timeout 60 "$@"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$what: expected one line on stderr"
  expect_text "$tmp/err" "$text"
  if grep -qF -- "$work" "$tmp/out"; then fail "$what: the work began ('$work' on stdout)"; fi
}

# full_disk COMMAND...: runs COMMAND with files limited to 0 bytes, as on a full disk: every
# write to a file fails with EFBIG (SIGXFSZ ignored, which would otherwise kill it). Its stdout
# and stderr go to $tmp/out through a pipe, which the limit does not touch; returns its status.
full_disk() {
  ( trap '' XFSZ; ulimit -f 0; exec "$@" 2>&1 ) | cat > "$tmp/out"
  return "${PIPESTATUS[0]}"
}

# ---- class 3: output paths checked before any work -------------------------------------------

echo "a file" > "$tmp/afile"
mkdir "$tmp/adir"
long=$tmp/$(printf 'n%.0s' $(seq 300))
train=(--data-dir "$data" --epochs 1000 --steps-per-epoch 5 --threads 1)
refused_early "--json in a missing folder" \
  "$tmp/missing/run.json: cannot open for writing (No such file or directory)" "Total params" \
  -- "$mnist" "${train[@]}" --json "$tmp/missing/run.json"
refused_early "--save below a regular file" \
  "$tmp/afile/m.weights: cannot open for writing (Not a directory)" "Total params" \
  -- "$mnist" "${train[@]}" --save "$tmp/afile/m.weights"
refused_early "--save-model with a name too long" "cannot open for writing (File name too long" \
  "Total params" -- "$mnist" "${train[@]}" --save-model "$long"
refused_early "--checkpoint at a directory" \
  "refusing to replace $tmp/adir: it is a directory, not a regular file" "Total params" \
  -- "$mnist" "${train[@]}" --checkpoint "$tmp/adir"
refused_early "--log-csv in a missing folder" "$tmp/missing/log.csv: cannot open for writing" \
  "Total params" -- "$mnist" "${train[@]}" --log-csv "$tmp/missing/log.csv"
refused_early "--save-best in a missing folder" "$tmp/missing/best.model: cannot open for writing" \
  "Total params" -- "$mnist" "${train[@]}" --save-best "$tmp/missing/best.model"
# Class 7 too: the newline in the path is escaped, the message stays one line.
refused_early "--json with a newline in a missing folder's name" \
  "$tmp/miss\\ning/run.json: cannot open for writing" "Total params" \
  -- "$mnist" "${train[@]}" --json "$tmp/miss"$'\n'"ing/run.json"
if [ "$(id -u)" -ne 0 ]; then
  mkdir "$tmp/read_only" && chmod 0500 "$tmp/read_only"
  refused_early "--json in a folder without write permission" \
    "$tmp/read_only/run.json: cannot open for writing (Permission denied)" "Total params" \
    -- "$mnist" "${train[@]}" --json "$tmp/read_only/run.json"
  chmod 0700 "$tmp/read_only"
else
  echo "skip: running as root, which may write anywhere: the permission case is not checked"
fi

sweep_args=(--cpu --max-n 1e3 --max-square 0 --repeats 1 --no-plot)
refused_early "matmul_sweep --csv below a regular file" \
  "$tmp/afile/sweep.csv: cannot make its folder" "Where the GPU" \
  -- "$sweep" "${sweep_args[@]}" --csv "$tmp/afile/sweep.csv"
refused_early "matmul_sweep --json in a missing folder" \
  "$tmp/missing/sweep.json: cannot open for writing (No such file or directory)" "Where the GPU" \
  -- "$sweep" "${sweep_args[@]}" --csv "$tmp/sweep/sweep.csv" --json "$tmp/missing/sweep.json"
refused_early "crossover --json in a missing folder" \
  "$tmp/missing/crossover.json: cannot open for writing (No such file or directory)" "median" \
  -- "$crossover" --cpu --quick --batch-size 4 --threads 1 --no-plot \
  --csv "$tmp/crossover/crossover.csv" --json "$tmp/missing/crossover.json"
refused_early "bench --report below a regular file" \
  "$tmp/afile/RESULTS.md: cannot make its folder" "[1/" \
  -- "$bench" --quick --devices cpu --threads 1 --data-dir "$data" --no-pytorch \
  --report "$tmp/afile/RESULTS.md" --work-dir "$tmp/bench_work"
if [ -n "$(ls -A "$tmp/bench_work/json" 2> /dev/null)" ]; then
  fail "bench ran an experiment before refusing its report"
fi

# ---- class 3: a full disk ----------------------------------------------------------------------

# refused_on_full_disk WHAT FILE CLAIM -- COMMAND...: COMMAND, which writes FILE, fails with
# status 1 naming FILE's failed write, never prints CLAIM (its "written" line), and leaves
# nothing in FILE's folder.
refused_on_full_disk() {
  local what=$1 file=$2 claim=$3; shift 4
  full_disk "$@"
  local status=$?
  if [ "$status" -ne 1 ]; then
    fail "$what on a full disk: exit status $status, expected 1"; cat "$tmp/out"
  else
    echo "ok: $what on a full disk ($(tail -n 1 "$tmp/out"))"
  fi
  expect_text "$tmp/out" "$file: write failed (File too large)"
  if grep -q "^$claim" "$tmp/out"; then fail "$what on a full disk said '$claim'"; fi
  local folder; folder=$(dirname "$file")
  [ -z "$(ls -A "$folder")" ] || fail "$what on a full disk left: $(ls -A "$folder")"
}

refused_on_full_disk "matmul_sweep" "$tmp/full/sweep.csv" "CSV: " -- \
  "$sweep" "${sweep_args[@]}" --csv "$tmp/full/sweep.csv"

tree=$tmp/tree
"$make" --out "$tree" --train-per-class 12 --validation-per-class 4 --seed 3 > /dev/null ||
  fail "make_dogs_cats"
small=(--cpu --threads 2 --workers 2 --image-size 32 --batch-size 8)
mkdir "$tmp/scaling"
refused_on_full_disk "--data-scaling-csv" "$tmp/scaling/scaling.csv" "Wrote " -- \
  "$dogs" "${small[@]}" --data-dir "$tree" --data-scaling 1 --data-scaling-csv "$tmp/scaling/scaling.csv"

# ---- class 7: any bytes in a name ------------------------------------------------------------

# A data folder named in Latin-1 ("café" as the byte e9): before, --json threw nlohmann's
# type_error 316 after the whole run and the record was lost.
latin1=$tmp/$'caf\xe9'
cp -r "$tree" "$latin1"
expect_status 0 "a data folder whose name is not UTF-8, with --json" -- "$dogs" "${small[@]}" \
  --data-dir "$latin1" --epochs 1 --json "$tmp/latin1.json"
expect_text "$tmp/latin1.json" "\"data\": \"$tmp/caf\\\\xe9\"" '"app": "dogs_vs_cats"'
if command -v python3 > /dev/null; then
  python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' \
    "$tmp/latin1.json" || fail "the record of the Latin-1 folder is not valid JSON in UTF-8"
else
  echo "skip: no python3 to parse the record"
fi

# File names with a newline: each skipped file on one line, escaped, and the list ends with a
# newline (before, the next line was glued on: "...: not a .jpg/.jpeg fileData: ...").
cats=$tree/train/cats
echo "not an image" > "$cats/new"$'\n'"line.jpg"
echo "notes" > "$cats/read"$'\n'"me.txt"
expect_status 0 "a folder with file names holding a newline" -- "$dogs" "${small[@]}" \
  --data-dir "$tree" --epochs 1
expect_text "$tmp/out" "$cats/new\\nline.jpg: " "$cats/read\\nme.txt: not a .jpg/.jpeg file"
grep -q "^Data: " "$tmp/out" || fail "the skipped-files list does not end with a newline"
if grep -q -e "^line.jpg" -e "^me.txt" "$tmp/out"; then fail "a file name split its line"; fi
expect_status 1 "--strict stops at the file with a newline in its name" -- "$dogs" "${small[@]}" \
  --data-dir "$tree" --epochs 1 --strict
[ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "--strict: the error naming the file is not one line"
expect_text "$tmp/err" "$cats/new\\nline.jpg: "

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all write and name checks passed"
