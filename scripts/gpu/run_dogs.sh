#!/usr/bin/env bash
# Build, check and measure seed 004's Dogs vs Cats on the GPU machine (issue 7).
# Usage: scripts/gpu/run_dogs.sh OUT_DIR [tests|bench|all]
#   tests: ctest, and compute-sanitizer memcheck over the new GPU code (augment_images, the
#          fused sigmoid cross-entropy, binary accuracy, the loader's pinned async copies);
#   bench: a synthetic 2,000 + 800 image tree (datasets/make_dogs_cats), then epochs on every
#          backend and loader setting, the JPEG decoders alone (CPU and nvJPEG: jpeg_bench),
#          the loader's worker scaling, and PyTorch on the same
#          host (compute alone on resident tensors, eager and at its best, and its DataLoader
#          pipeline).
# Every step has its own time limit so one slow step cannot eat the whole device session.
set -uo pipefail
out=${1:?out dir}; what=${2:-all}
threads=$(nproc)
export PYTHONUNBUFFERED=1
step() {  # step TITLE SECONDS COMMAND...: output without the summary table, and a failure line
  local title=$1 limit=$2; shift 2
  echo "== $title"
  timeout "$limit" "$@" > "$out/step.log" 2>&1; local rc=$?
  grep -vE '^ |^_|^=|^$|^[A-Za-z_0-9]+ \(' "$out/step.log" | grep -v '\[=*>*\.*\] - ' | tail -40
  [ "$rc" -eq 0 ] || echo "(step failed or timed out: rc $rc)"
}
echo "== host"; lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# The MNIST tests read real digits: .devdata where the caller carried it, else data/.
testdata=$PWD/data; [ -d .devdata ] && testdata=$PWD/.devdata
cmake -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DENGINE_TEST_DATA_DIR="$testdata" -DCUDNN_ROOT=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn > "$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
# The benchmarks need two programs; the tests, everything.
targets=(); [ "$what" = bench ] && targets=(--target dogs_vs_cats make_dogs_cats jpeg_bench)
cmake --build build-dev -j "$threads" "${targets[@]}" -- -k 0 > "$out/build.log" 2>&1 || grep -E "error" -A5 "$out/build.log" | head -40
grep -c "warning" "$out/build.log" | sed 's/^/build warnings: /'
app=./build-dev/apps/dogs_vs_cats
tree=/tmp/dogs_cats

if [ "$what" = tests ] || [ "$what" = all ]; then
  (cd build-dev && timeout 400 ctest -j 4 --output-on-failure > "$out/ctest.log" 2>&1; tail -25 "$out/ctest.log")
  ms() { timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$@" > "$out/ms.log" 2>&1; echo "rc $? $(grep -E 'ERROR SUMMARY' "$out/ms.log" | tail -1) : $*"; }
  echo "== compute-sanitizer memcheck"
  ms ./build-dev/tests/test_gpu_augment
  ms ./build-dev/tests/test_gpu_parity -tc="*sigmoid*,*count_correct*,*gather*,*fill*"
  ms ./build-dev/tests/test_gpu_backend
  ./build-dev/datasets/make_dogs_cats --out /tmp/dogs_small --train-per-class 48 --validation-per-class 16 --force > /dev/null
  ms "$app" --gpu --data-dir /tmp/dogs_small --epochs 2 --workers 4
  ms "$app" --gpu --data-dir /tmp/dogs_small --epochs 2 --workers 4 --augment-on gpu --cache
  ms "$app" --gpu --data-dir /tmp/dogs_small --epochs 2 --workers 4 --augment-on gpu --decode-on gpu
  ms "$app" --device cudnn --data-dir /tmp/dogs_small --epochs 1 --workers 4 --augment-on gpu
  cp build-dev/Testing/Temporary/LastTest.log "$out/ctest_full.log" 2>/dev/null
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  step "make_dogs_cats: 2,000 + 800 images" 120 ./build-dev/datasets/make_dogs_cats --out "$tree" --force
  du -sh "$tree"
  run=("$app" --data-dir "$tree" --epochs 20)
  step "ours gpu, decode + augment on the CPU every epoch" 120 "${run[@]}" --gpu --json "$out/ours_gpu.json"
  step "ours gpu, augment on the GPU" 120 "${run[@]}" --gpu --augment-on gpu --json "$out/ours_gpu_augment_gpu.json"
  step "ours gpu --tf32, augment on the GPU" 120 "${run[@]}" --gpu --tf32 --augment-on gpu --json "$out/ours_gpu_tf32.json"
  step "ours gpu --tf32, augment and 40% of the decoding on the GPU (nvJPEG)" 120 "${run[@]}" --gpu --tf32 --augment-on gpu --decode-on gpu --json "$out/ours_gpu_tf32_decode_gpu.json"
  step "ours cudnn, augment on the GPU" 120 "${run[@]}" --device cudnn --augment-on gpu --json "$out/ours_cudnn.json"
  step "ours cudnn --tf32, augment on the GPU" 120 "${run[@]}" --device cudnn --tf32 --augment-on gpu --json "$out/ours_cudnn_tf32.json"
  step "ours gpu, the article's 50 epochs, --cache, augment on the GPU" 120 "$app" --data-dir "$tree" --gpu --cache --augment-on gpu --json "$out/ours_gpu_50.json" --save "$out/first_try.weights"
  step "ours gpu, --load first_try.weights, evaluate only" 60 "$app" --data-dir "$tree" --gpu --epochs 0 --load "$out/first_try.weights"
  step "ours cpu, $threads threads, 2 epochs" 200 "$app" --data-dir "$tree" --epochs 2 --cpu --threads "$threads" --workers "$threads" --json "$out/ours_cpu.json"
  for batch in 32 512; do
    step "the decoders alone: libjpeg-turbo on all cores against nvJPEG in batches of $batch (jpeg_bench)" 120 \
      ./build-dev/apps/jpeg_bench --data-dir "$tree" --passes 5 --batch "$batch"
  done
  step "loader scaling, decode + augment on the CPU" 150 "$app" --data-dir "$tree" --gpu --data-scaling 1,2,4,8,16 --data-scaling-csv "$out/scaling.csv"
  step "loader scaling, augment on the GPU" 100 "$app" --data-dir "$tree" --gpu --augment-on gpu --data-scaling 1,4,16 --data-scaling-csv "$out/scaling_gpu_augment.csv"
  py=scripts/pytorch/dogs_vs_cats.py
  step "pytorch cuda, compute alone (resident tensors), 50 epochs" 150 python3 "$py" --data-dir "$tree" --dataset folder --mode compute --device cuda --epochs 50 --json "$out/torch_cuda_compute.json"
  step "pytorch cuda at its best (--graphed), compute alone, 50 epochs" 150 python3 "$py" --data-dir "$tree" --dataset folder --mode compute --device cuda --graphed --epochs 50 --json "$out/torch_cuda_graphed.json"
  step "pytorch cuda at its best (--graphed) --no-tf32, compute alone, 20 epochs" 150 python3 "$py" --data-dir "$tree" --dataset folder --mode compute --device cuda --graphed --no-tf32 --epochs 20 --json "$out/torch_cuda_graphed_fp32.json"
  step "pytorch cuda --no-tf32, compute alone, 20 epochs" 150 python3 "$py" --data-dir "$tree" --dataset folder --mode compute --device cuda --no-tf32 --epochs 20 --json "$out/torch_cuda_compute_fp32.json"
  step "pytorch cuda, DataLoader pipeline, 16 workers, 5 epochs" 200 python3 "$py" --data-dir "$tree" --dataset folder --mode pipeline --device cuda --workers 16 --epochs 5 --json "$out/torch_cuda_pipeline.json"
  step "pytorch cpu, compute alone, 2 epochs" 200 python3 "$py" --data-dir "$tree" --dataset folder --mode compute --device cpu --threads "$threads" --epochs 2 --json "$out/torch_cpu_compute.json"
fi
rm -f "$out/step.log" "$out/ms.log"
