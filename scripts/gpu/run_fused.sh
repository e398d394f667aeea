#!/usr/bin/env bash
# The fused MLP kernels (docs/FUSED_MLP.md) on a GPU machine: the build, their tests, the
# sanitizers over them, and the staircase of the seed MLP (small and wide, Fashion-MNIST's
# 60,000 images, batch 32): PyTorch eager and graphed, ours with every kernel launched from the
# host (--no-graph), as one CUDA graph a step (--no-fused), in the streaming fused kernel
# (--fused with ENGINE_FUSED_MLP_KERNEL=streaming) and in the weight-stationary one (the
# default where it applies), their phases timed once with ENGINE_FUSED_MLP_PHASES; and our CPU. Seconds per epoch, the median of epochs 2-4 (the first
# holds the warm-up), and that / 1,875 steps.
# Usage: scripts/gpu/run_fused.sh OUT_DIR [DATA_DIR [PARTS]]   (logs: OUT_DIR/fused_logs.tgz)
#   PARTS: any of "tests staircase pytorch accuracy options sanitizers" (default: all of them)
set -uo pipefail
out=${1:?out dir}; data=${2:-.devdata}; [ -d "$data" ] || data=data
parts=" ${3:-tests staircase pytorch accuracy options sanitizers} "
want() { [[ $parts == *" $1 "* ]]; }
data=$(cd "$data" && pwd)
logs=$out/fused_logs; mkdir -p "$logs"
pack() { tar czf "$out/fused_logs.tgz" -C "$out" fused_logs; }  # after each part: a timeout keeps the rest
trap pack EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -B build-fused -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DENGINE_TEST_DATA_DIR="$data" \
  -DCUDNN_ROOT=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn > "$logs/configure.log" 2>&1 ||
  { tail -20 "$logs/configure.log"; exit 1; }
timeout 400 cmake --build build-fused -j "$(nproc)" --target mnist_mlp test_fused_mlp test_gpu_fused_mlp \
  test_gpu_backend test_gpu_parity > "$logs/build.log" 2>&1 ||
  { grep -E "error" -A5 "$logs/build.log" | head -40; exit 1; }
echo "build warnings: $(grep -c warning "$logs/build.log")"

if want tests; then
echo "== tests"
for t in test_fused_mlp test_gpu_fused_mlp test_gpu_backend test_gpu_parity; do
  timeout 300 "build-fused/tests/$t" > "$logs/$t.log" 2>&1
  echo "$t: rc $? | $(grep -E "test cases" "$logs/$t.log")"
done
grep -h "stationary\|streaming" "$logs/test_gpu_fused_mlp.log"
grep -B3 -A12 "ERROR\|FAILED\|failed!" "$logs/test_gpu_fused_mlp.log" | head -40
fi
# epoch_seconds JSON: the median of the epochs after the first.
epoch_seconds() {
  python3 -c 'import json,sys,statistics as s; e=json.load(open(sys.argv[1]))["epochs_run"]; print("%.4f" % s.median([x["seconds"] for x in e[1:]]))' "$1" 2>/dev/null || echo "-"
}
run() {  # run NAME COMMAND...: four epochs, prints s/epoch and us/step
  local name=$1; shift
  timeout 300 "$@" --json "$logs/$name.json" > "$logs/$name.log" 2>&1
  local rc=$? s; s=$(epoch_seconds "$logs/$name.json")
  printf "%-28s %8s s/epoch %8s us/step%s\n" "$name" "$s" \
    "$(python3 -c "print('%.1f' % (float('$s') / 1875 * 1e6))" 2>/dev/null || echo -)" \
    "$([ "$rc" -eq 0 ] || echo " (rc $rc)")"
}
pack
if want staircase; then
echo "== the staircase (Fashion-MNIST, batch 32, 1,875 steps an epoch)"
common=(--dataset fashion --data-dir "$data" --epochs 4)
py=(python3 scripts/pytorch/mnist_mlp.py --device cuda --dataset fashion --data-dir "$data" --epochs 4)
for model in small wide; do
  flag=(); [ "$model" = wide ] && flag=(--wide)
  if want pytorch; then
    run "${model}_pytorch_eager" "${py[@]}" "${flag[@]}"
    run "${model}_pytorch_graphed" "${py[@]}" "${flag[@]}" --graphed
    run "${model}_ours_no_graph" build-fused/apps/mnist_mlp --gpu "${common[@]}" "${flag[@]}" --no-graph
  fi
  for round in 1 2; do
    run "${model}_ours_graph_$round" build-fused/apps/mnist_mlp --gpu "${common[@]}" "${flag[@]}" --no-fused
    ENGINE_FUSED_MLP_KERNEL=streaming run "${model}_ours_streaming_$round" \
      build-fused/apps/mnist_mlp --gpu "${common[@]}" "${flag[@]}" --fused
    [ "$model" = small ] &&
      run "${model}_ours_stationary_$round" build-fused/apps/mnist_mlp --gpu "${common[@]}" "${flag[@]}"
  done
  # Where a fused step's time goes: block 0's clock per phase (kernels/fused_mlp*.cu).
  for kernel in streaming stationary; do
    [ "$model/$kernel" = wide/stationary ] && continue
    ENGINE_FUSED_MLP_KERNEL=$kernel ENGINE_FUSED_MLP_PHASES=1 build-fused/apps/mnist_mlp --gpu \
      --dataset fashion --data-dir "$data" "${flag[@]}" --fused --epochs 1 \
      > "$logs/${model}_${kernel}_phases.log" 2>&1
    grep -m 1 "phases, block 0" "$logs/${model}_${kernel}_phases.log"
    grep -m 1 "arrivals at the barrier" "$logs/${model}_${kernel}_phases.log"
  done
done
run small_ours_cpu build-fused/apps/mnist_mlp --cpu --dataset fashion --data-dir "$data" --epochs 2
grep -h "Training step\|Test accuracy" "$logs"/small_ours_stationary_1.log \
  "$logs"/small_ours_streaming_1.log "$logs"/wide_ours_streaming_1.log "$logs"/wide_ours_graph_1.log
fi
pack
if want accuracy; then
echo "== accuracy after 10 epochs, 3 seeds, fused and not (small model)"
for seed in 1 2 3; do
  for mode in fused graph; do
    f=(); [ "$mode" = graph ] && f=(--no-fused)
    timeout 120 build-fused/apps/mnist_mlp --gpu --dataset fashion --data-dir "$data" --epochs 10 \
      --seed "$seed" "${f[@]}" > "$logs/acc_${mode}_$seed.log" 2>&1
    echo "seed $seed $mode: $(grep -h "Test accuracy" "$logs/acc_${mode}_$seed.log")"
  done
done
fi
pack
if want options; then
echo "== the fused kernel with --breakdown and with --nan-check (small model, 2 epochs)"
for flag in --breakdown --nan-check; do
  timeout 120 build-fused/apps/mnist_mlp --gpu --dataset fashion --data-dir "$data" --epochs 2 \
    "$flag" > "$logs/small_fused_${flag#--}.log" 2>&1
  echo "$flag: rc $?"
  grep -h "Training step\|epoch  2\|steps ran\|Epoch 2" "$logs/small_fused_${flag#--}.log"
done
fi
pack
want sanitizers || exit 0
echo "== sanitizers over the fused kernels (the parity table: 9 MLPs, 4 runs each)"
for tool in memcheck racecheck synccheck initcheck; do
  for kernel in own streaming; do  # each plan's own kernel (stationary where it applies), all streaming
    [ "$tool/$kernel" != memcheck/streaming ] && [ "$kernel" = streaming ] && continue
    timeout 150 compute-sanitizer --tool "$tool" build-fused/tests/test_gpu_fused_mlp \
      -tc="*$kernel kernel*" > "$logs/sanitizer_${tool}_$kernel.log" 2>&1
    echo "$tool ($kernel): rc $? | $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases" "$logs/sanitizer_${tool}_$kernel.log" | tr '\n' ' ')"
  done
done
