#!/bin/sh
# Output a learner trips on (issue 22, item 7): --help shows defaults, a cut epoch says how many
# samples it trains, "passes" not "passs", 1e7 for --max-n, a CPU-only sweep draws no empty
# GPU panels, --dry-run leaves no folder, --quick shows no ratios against the articles.
# Usage: test_learner_output.sh BIN_DIR DATA_DIR SCRATCH
bin="$1"; data="$2"; tmp="$3"
failures=0
rm -rf "$tmp"; mkdir -p "$tmp"
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
has() { grep -qF -- "$2" "$1" || fail "$1 lacks: $2"; }
lacks() { if grep -qF -- "$2" "$1"; then fail "$1 has: $2"; fi; }

# FILE FLAG VALUE: FLAG's help line shows VALUE as its default, as CLI11 writes it: "=10"
# (CLI11 2.1, 2.3) or "[10]" (2.4 and later).
has_default() {
  grep -F -- "$2 " "$1" | grep -qF -e "=$3" -e "[$3]" || fail "$1: $2 lacks its default $3"
}
"$bin/apps/mnist_mlp" --help > "$tmp/help" || fail "mnist_mlp --help"
has_default "$tmp/help" --epochs 10
has_default "$tmp/help" --batch-size 32
has_default "$tmp/help" --data-dir data
has_default "$tmp/help" --seed 42
has "$tmp/help" "the article's"  # --learning-rate's default in words, not 0
"$bin/apps/matmul_sweep" --help > "$tmp/sweep_help" || fail "matmul_sweep --help"
has_default "$tmp/sweep_help" --max-n 100000000

"$bin/apps/mnist_mlp" --cpu --threads 2 --data-dir "$data" --epochs 1 --steps-per-epoch 3 \
  --batch-size 32 > "$tmp/cut" 2>&1 || fail "mnist_mlp --steps-per-epoch 3"
has "$tmp/cut" "Epochs cut to 3 of 250 steps (--steps-per-epoch): 96 of 8,000 samples an epoch"

"$bin/apps/jacobian_mlp" --cpu --val 7 --repeats 1 --mode loop > "$tmp/jac" 2>&1 || fail "jacobian_mlp"
has "$tmp/jac" "2800 backward passes"
lacks "$tmp/jac" "passs"

mkdir -p "$tmp/sweep"
"$bin/apps/matmul_sweep" --cpu --threads 2 --max-n 1e3 --repeats 1 --max-square 0 \
  --csv "$tmp/sweep/m.csv" > "$tmp/sweep.out" 2>&1 || fail "matmul_sweep --max-n 1e3"
has "$tmp/sweep/m.csv" ",1000,"
if [ -f "$tmp/sweep/m.gp" ]; then
  has "$tmp/sweep/m.gp" "layout 1,1"
  lacks "$tmp/sweep/m.gp" "random normal a, b + matmul"
fi
if "$bin/apps/matmul_sweep" --cpu --max-n 1.5 --csv "$tmp/sweep/x.csv" > "$tmp/bad" 2>&1; then
  fail "--max-n 1.5 accepted"
fi

export TMPDIR="$tmp/tmpdir"; mkdir -p "$TMPDIR"
"$bin/apps/bench" --dry-run --devices cpu --no-pytorch > "$tmp/dry" 2>&1 || fail "bench --dry-run"
[ -z "$(ls -A "$TMPDIR")" ] || fail "bench --dry-run left $(ls "$TMPDIR")"

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all learner-output checks passed"
