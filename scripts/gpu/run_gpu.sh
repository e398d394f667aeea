#!/usr/bin/env bash
# One call on the GPU machine: build, run every test (GPU tests included), compute-sanitizer
# over the GPU tests and a short GPU training run, then the seed-000 benchmark: our GPU (graph
# and --no-graph), our CPU and PyTorch (GPU and CPU) on the same host, same data.
# Usage: scripts/gpu/run_gpu.sh DATA_DIR OUT_DIR [full|sanitize]
set -uo pipefail
data=${1:?data dir}; out=${2:?out dir}; mode=${3:-full}
threads=$(nproc)
export PYTHONUNBUFFERED=1
step() { echo "== $1" | tee -a "$out/bench.log"; shift; timeout 200 "$@" 2>&1 | tee -a "$out/bench.log" | grep -vE "^Epoch|^ *(Layer|dense|dropout|flatten|_+$|=+$| *$)"; }
echo "== host"; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DENGINE_TEST_DATA_DIR="$PWD/$data" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$threads" > "$out/build.log" 2>&1 || { grep -E "error" -A5 "$out/build.log" | head -60; exit 1; }
(cd build-gpu && timeout 300 ctest --output-on-failure -j 4 > "$out/ctest.log" 2>&1; tail -15 "$out/ctest.log")
grep -E "SKIPPED|skipped" "$out/ctest.log" | head -5
mlp=./build-gpu/apps/mnist_mlp
export ENGINE_DATA_DIR="$PWD/$data"
if [ "$mode" != sanitize ]; then
step "ours gpu, fashion, 10 epochs (graph)" $mlp --gpu --dataset fashion --data-dir "$data" --json "$out/ours_gpu.json"
step "ours gpu, fashion, 3 epochs, --no-graph" $mlp --gpu --dataset fashion --data-dir "$data" --epochs 3 --no-graph --json "$out/ours_gpu_nograph.json"
step "ours gpu wide, fashion, 10 epochs" $mlp --gpu --wide --dataset fashion --data-dir "$data" --json "$out/ours_gpu_wide.json"
step "ours cpu, fashion, 10 epochs, $threads threads" $mlp --cpu --dataset fashion --data-dir "$data" --threads "$threads" --json "$out/ours_cpu.json"
step "ours cpu wide, fashion, 2 epochs, $threads threads" $mlp --cpu --wide --dataset fashion --data-dir "$data" --threads "$threads" --epochs 2 --json "$out/ours_cpu_wide.json"
ref=scripts/pytorch/mnist_mlp.py
step "pytorch cuda, fashion, 3 epochs" python3 $ref --data-dir "$data" --dataset fashion --device cuda --epochs 3
step "pytorch cuda wide, fashion, 3 epochs" python3 $ref --data-dir "$data" --dataset fashion --device cuda --wide --epochs 3
step "pytorch cpu, fashion, 3 epochs" python3 $ref --data-dir "$data" --dataset fashion --device cpu --threads "$threads" --epochs 3
fi
echo "== compute-sanitizer memcheck: GPU parity tests"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 build-gpu/tests/test_gpu_parity > "$out/memcheck_parity.log" 2>&1; echo "rc $?"; tail -3 "$out/memcheck_parity.log"
echo "== compute-sanitizer memcheck: mnist_mlp --gpu, graph replay, 2 short epochs"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $mlp --gpu --data-dir "$data" --epochs 2 --steps-per-epoch 40 > "$out/memcheck_mlp.log" 2>&1; echo "rc $?"; tail -3 "$out/memcheck_mlp.log"
echo "== compute-sanitizer racecheck: GPU parity tests"
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 build-gpu/tests/test_gpu_parity > "$out/racecheck_parity.log" 2>&1; echo "rc $?"; tail -3 "$out/racecheck_parity.log"
echo "== ncu: kernels of 2 training steps (op by op, NVTX train_step range)"
timeout 150 ncu --nvtx --nvtx-include "engine@train_step/" --metrics gpu__time_duration.sum --csv \
  $mlp --gpu --no-graph --dataset synthetic --epochs 1 --steps-per-epoch 3 > "$out/ncu_steps.csv" 2> "$out/ncu_steps.err"; echo "rc $?"
python3 - "$out/ncu_steps.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, body = rows[0], rows[1:]
k, v = head.index("Kernel Name"), head.index("Metric Value")
total = 0.0
for r in body:
    total += float(r[v].replace(",", ""))
    print("%-60s %10s ns" % (r[k][:60], r[v]))
print("kernels: %d, sum of kernel times %.1f us" % (len(body), total / 1000))
PY
echo "== ncu: one whole graph replay"
timeout 150 ncu --nvtx --nvtx-include "engine@train_step/" --graph-profiling graph --metrics gpu__time_duration.sum \
  $mlp --gpu --dataset synthetic --epochs 1 --steps-per-epoch 4 > "$out/ncu_graph.log" 2>&1; echo "rc $?"; grep -E "gpu__time_duration|==PROF==" "$out/ncu_graph.log" | head -8
echo "== summary (median us/step)"
for f in "$out"/ours_*.json; do python3 -c "import json,sys; r=json.load(open('$f')); print('%-28s %8.1f us/step  epochs %s  test acc %.4f  kernels/step %s' % ('$(basename $f)', r['median_step_us'], [round(e['seconds'],3) for e in r['epochs_run']], r['test_accuracy'], r['kernels_per_step']))"; done
