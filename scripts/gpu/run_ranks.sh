#!/usr/bin/env bash
# Data-parallel training over NCCL on a machine with several GPUs (docs/MULTI_GPU.md): the
# build, every test suite (tests/test_ranks_cli.sh runs its multi-GPU part here), memcheck over
# the dropout kernels and a two-rank run, then the scaling of the CNNs: one process without
# --gpus, and --gpus 1, 2, ... up to the GPUs present, each with the per-GPU batch fixed (the
# app's own; also with one bucket, nothing overlapped) and with the global batch fixed (the
# seed's), five epochs each, the median of the last four; the per-GPU runs twice, alternating.
# GPU counts: 1, 2, 4, 8, up to the GPUs present.
# Usage: scripts/gpu/run_ranks.sh OUT_DIR [PHASE]   (logs packed into OUT_DIR/ranks_logs.tgz)
#   PHASE: all (default), check (build, tests, memcheck) or scale (build, scaling): the two
#   halves fit the device tool's ten-minute calls on a four-GPU host.
set -uo pipefail
out=${1:?out dir}; phase=${2:-all}
logs=$out/ranks_logs; mkdir -p "$logs"
# NVLink multicast stays off on shared machines (it can take a host's GPUs out of service);
# NCCL's warnings go to the logs.
export NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN
trap 'tar czf "$out/ranks_logs.tgz" -C "$out" ranks_logs && rm -rf "$logs"' EXIT
gpus=$(nvidia-smi -L | grep -c '^GPU')
echo "== host: $gpus GPU(s)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvidia-smi topo -m > "$logs/topology.txt" 2>&1; head -4 "$logs/topology.txt"
testdata=$PWD/data; [ -d .devdata ] && testdata=$PWD/.devdata
cmake -B build-ranks -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DENGINE_TEST_DATA_DIR="$testdata" -DCUDNN_ROOT=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn \
  > "$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
grep -E "NCCL" "$logs/configure.log"
cmake --build build-ranks -j "$(nproc)" > "$logs/build.log" 2>&1 || { grep -E "error" -A5 "$logs/build.log" | head -60; exit 1; }
echo "build warnings: $(grep -c "warning" "$logs/build.log")"
counts=(); for ((n = 1; n <= gpus; n *= 2)); do counts+=("$n"); done

if [ "$phase" != scale ]; then
echo "== tests (every suite, the multi-GPU part of test_ranks_cli.sh included)"
(cd build-ranks && timeout 400 ctest -j 8 --output-on-failure > "$logs/ctest.log" 2>&1
 grep -E "tests passed|tests failed|Failed|\*\*\*" "$logs/ctest.log" | tail -10)
grep -E "^[0-9]+: (ok|FAIL|skipped)" "$logs/ctest.log" | grep -E "gpus|rank|GPU|SIGINT" | head -20
echo "== memcheck: the dropout kernels (first element off the 4-alignment), a two-rank run"
timeout 120 compute-sanitizer --tool memcheck build-ranks/tests/test_gpu_parity -tc="*dropout*" \
  > "$logs/memcheck_dropout.log" 2>&1
echo "dropout: rc $? | $(grep -E "ERROR SUMMARY|test cases" "$logs/memcheck_dropout.log" | tr '\n' ' ')"
# NCCL's own start probes kernels it has no image for (cudaFuncGetAttributes, error 209): API
# errors of the library, not memory errors, so API errors are not reported here.
timeout 240 compute-sanitizer --tool memcheck --target-processes all --report-api-errors no \
  build-ranks/apps/mnist_mlp --gpu --gpus "$((gpus < 2 ? 1 : 2))" --data-dir "$testdata" --epochs 1 \
  --steps-per-epoch 30 > "$logs/memcheck.log" 2>&1
echo "ranks: rc $? | $(grep -E "ERROR SUMMARY|identical" "$logs/memcheck.log" | tr '\n' ' ')"
fi
[ "$phase" = check ] && exit 0

# epoch_seconds JSON: the median of the epochs after the first (which records the graph).
epoch_seconds() {
  python3 -c 'import json,sys,statistics as s; e=json.load(open(sys.argv[1]))["epochs_run"]; print("%.4f" % s.median([x["seconds"] for x in e[1:]]))' "$1" 2>/dev/null || echo "-"
}
# run NAME APP ARGS...: five epochs, the record in $logs/NAME.json; prints the epoch median.
run() {
  local name=$1; shift
  timeout 200 "$@" --epochs 5 --json "$logs/$name.json" > "$logs/$name.log" 2>&1
  local rc=$?
  printf "%-34s %s s/epoch%s\n" "$name" "$(epoch_seconds "$logs/$name.json")" \
    "$([ "$rc" -eq 0 ] || echo " (rc $rc)")"
}
echo "== scaling (seconds per epoch, median of epochs 2-5)"
cifar=(build-ranks/apps/cifar10_cnn --gpu --tf32 --dataset synthetic)
mnist=(build-ranks/apps/mnist_cnn --gpu --tf32 --dataset fashion --data-dir "$testdata")
# Dogs vs Cats: the synthetic 2,000 + 800 image tree; every JPEG decoded each epoch, each
# rank's loader decoding only its shard.
build-ranks/datasets/make_dogs_cats --out "$logs/../dogs_tree" --force > /dev/null 2>&1
dogs=(build-ranks/apps/dogs_vs_cats --gpu --tf32 --data-dir "$logs/../dogs_tree" --augment-on gpu)
for app in cifar mnist dogs; do
  case $app in
    cifar) cmd=("${cifar[@]}"); batch=100 ;;
    mnist) cmd=("${mnist[@]}"); batch=128 ;;
    dogs) cmd=("${dogs[@]}"); batch=32 ;;
  esac
  for round in 1 2; do
    run "${app}_plain_$round" "${cmd[@]}"
    for n in "${counts[@]}"; do run "${app}_gpus${n}_per_gpu_${batch}_$round" "${cmd[@]}" --gpus "$n"; done
  done
  for n in "${counts[@]:1}"; do
    # One bucket larger than the model: the all-reduce waits for the whole backward pass.
    run "${app}_gpus${n}_per_gpu_${batch}_no_overlap" "${cmd[@]}" --gpus "$n" --bucket-mb 1000
    run "${app}_gpus${n}_global_${batch}" "${cmd[@]}" --gpus "$n" --batch-size "$((batch / n))"
  done
done
grep -h "Ranks:" "$logs"/*.log | sort | uniq -c | head
rm -rf "$logs/../dogs_tree"  # tens of MB of JPEGs: made again by the next run
