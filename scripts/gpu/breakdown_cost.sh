#!/usr/bin/env bash
# What --breakdown costs and how much of the wall it explains (issue 8): the seed-000 MLP on
# Fashion-MNIST, RUNS runs with --breakdown and RUNS without, alternated so that both see the
# same machine, each 5 epochs; prints every run's median step and, with --breakdown, its last
# epoch's line and the share of the wall in measured parts.
# Usage: scripts/gpu/breakdown_cost.sh LOG_DIR [RUNS] [extra mnist_mlp flags]
#   BUILD (default build-gpu) must hold apps/mnist_mlp; DATA_DIR (default .devdata, else data).
set -uo pipefail
logs=${1:?log dir}; runs=${2:-3}; shift $(( $# < 2 ? $# : 2 ))
mkdir -p "$logs"
data=${DATA_DIR:-.devdata}; [ -d "$data" ] || data=data
device=--gpu; nvidia-smi > /dev/null 2>&1 || device=--cpu
mlp=("${BUILD:-build-gpu}/apps/mnist_mlp" "$device" --dataset fashion --data-dir "$data" --epochs 5 "$@")
for run in $(seq "$runs"); do
  for mode in plain breakdown; do
    flag=(); [ "$mode" = breakdown ] && flag=(--breakdown)
    timeout 120 "${mlp[@]}" "${flag[@]}" --json "$logs/$mode-$run.json" > "$logs/$mode-$run.txt" 2>&1 ||
      { echo "$mode run $run failed:"; tail -5 "$logs/$mode-$run.txt"; exit 1; }
  done
done
python3 - "$logs" "$runs" <<'PY'
import json, statistics, sys
logs, runs = sys.argv[1], int(sys.argv[2])
for mode in ("plain", "breakdown"):
    steps, shares = [], []
    for run in range(1, runs + 1):
        record = json.load(open(f"{logs}/{mode}-{run}.json"))
        steps.append(record["median_step_us"])
        for e in record.get("epochs_run", []):
            if e.get("breakdown"):
                shares.append(e["breakdown"]["measured_fraction"])
    line = f"{mode:9s}: median step per run {', '.join(f'{s:.2f}' for s in steps)} us; median {statistics.median(steps):.2f} us"
    if shares:
        line += f"; measured share per epoch: min {100 * min(shares):.2f}%, median {100 * statistics.median(shares):.2f}%"
    print(line)
PY
grep -E "^(epoch|all)" "$logs/breakdown-1.txt"
