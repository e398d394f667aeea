#!/usr/bin/env bash
# The learner's-GPU checks, on one Hopper GPU (docs/YOUR_GPU.md): the build configure chooses
# for this machine, a PTX-only build for 80-virtual (the non-Hopper kernels, JIT-compiled by the
# driver here), the sm_80 and sm_75 kernel choices forced with ENGINE_MAX_COMPUTE_CAPABILITY,
# and a build with sm_80 machine code only, which must refuse with exit status 2.
# Usage: scripts/gpu/portability.sh OUT_DIR PHASE [DATA_DIR]
#   build  configure and build the three trees (build-native, build-ptx80, build-sass80)
#   test   the GPU suites in each mode, memcheck over the parity suite in the PTX build, the refusal
#   bench  seed MLP and CIFAR-10 CNN --tf32 per mode, 3 runs each; the PTX build's first-run JIT
#   more   the wide MLP and the MNIST CNN --tf32 per mode; CIFAR-10 with the two-stage TF32 conv
#          kernel that GPUs of 100 KB shared memory per SM get (RTX 30/40, L4)
#   fat    the build configure chooses where no GPU is visible (every architecture), its GPU suites
#   final  build-native again, every suite, and the GPU suites with the choices of 8.0 and 7.5
#   memcheck  compute-sanitizer memcheck over every GPU suite of build-native (scripts/gpu/sanitize.sh)
# Logs and this output go to OUT_DIR/portability_<phase>.tgz (few files come back from the GPU machine).
set -uo pipefail
out=${1:?out dir}; phase=${2:?phase}; data=${3:-.devdata}; [ -d "$data" ] || data=data
logs=$out/portability_$phase; mkdir -p "$logs"
trap 'sleep 1; tar czf "$out/portability_$phase.tgz" -C "$out" "portability_$phase"' EXIT  # sleep: tee's last lines
exec > >(tee "$logs/summary.txt") 2>&1
cudnn=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn
gpu_tests='gpu|ladder'

configure_and_build() {  # NAME [cmake flags...]
  local name=$1; shift
  { cmake -B "build-$name" -G Ninja -DCMAKE_BUILD_TYPE=Release -DENGINE_TEST_DATA_DIR="$PWD/$data" \
      -DCUDNN_ROOT=$cudnn "$@" && /usr/bin/time -f "build-$name: %e s" cmake --build "build-$name" -j 16; } \
    > "$logs/build-$name.log" 2>&1
  echo "build-$name: rc $? | $(grep -E "CUDA architectures|Hopper-only" "$logs/build-$name.log" | sed 's/^-- //' | tr '\n' ' ')| $(tail -1 "$logs/build-$name.log") | warnings: $(grep -c "warning" "$logs/build-$name.log")"
}

ctest_summary() {  # NAME LOG [env...] -- ctest args
  local name=$1 log=$2; shift 2
  (cd "build-$name" && env "$@" ctest -j 6 --output-on-failure -R "$gpu_tests" > "$log" 2>&1)
  echo "$(basename "$log" .txt): $(grep -E "tests passed|tests failed" "$log") $(grep -E "^\s+[0-9]+ - " "$log" | tr -s ' ' | tr '\n' ';')"
}

mlp() { "$@" --dataset fashion --data-dir "$data" --epochs 3 --json /tmp/run.json > /tmp/run.txt 2>&1; echo "rc $? | $(grep -E "^Kernels: matmul|Warm-up|median .* us/step" /tmp/run.txt | tr '\n' ' ')"; }
cnn() { "$@" --epochs 3 --json /tmp/run.json > /tmp/run.txt 2>&1; echo "rc $? | $(grep -E "^Kernels: conv|Seconds per epoch|Warm-up|median .* us/step" /tmp/run.txt | tr '\n' ' ')"; }

three_runs() {  # LABEL NAME COMMAND...: three runs of mlp or cnn above, each line printed, each --json kept
  local label=$1 name=$2; shift 2
  for i in 1 2 3; do
    echo "$label #$i: $("$@")"
    cp /tmp/run.json "$logs/${name}_$i.json"
  done
}

case $phase in
build)
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  configure_and_build native & native=$!
  configure_and_build ptx80 -DCMAKE_CUDA_ARCHITECTURES=80-virtual & ptx80=$!
  wait $native $ptx80  # by name: a bare wait would also wait for the tee above, forever
  configure_and_build sass80 -DCMAKE_CUDA_ARCHITECTURES=80-real -DBUILD_TESTING=OFF
  ls -la build-native/apps/mnist_mlp build-ptx80/apps/mnist_mlp build-sass80/apps/mnist_mlp 2>&1 | awk '{print $5, $9}'
  ;;
test)
  echo "== (refusal) sm_80 machine code only, on this GPU"
  build-sass80/apps/mnist_mlp --gpu --epochs 1 > "$logs/refusal.txt" 2>&1; echo "rc $?: $(cat "$logs/refusal.txt")"
  echo "== (a) default build, every suite"
  (cd build-native && ctest -j 6 --output-on-failure > "$logs/ctest_native_all.txt" 2>&1)
  echo "ctest_native_all: $(grep -E "tests passed|tests failed" "$logs/ctest_native_all.txt") $(grep -E "^\s+[0-9]+ - " "$logs/ctest_native_all.txt" | tr -s ' ' | tr '\n' ';')"
  echo "== (c) default build, kernels chosen as for 8.0 and 7.5"
  ctest_summary native "$logs/ctest_native_cap80.txt" ENGINE_MAX_COMPUTE_CAPABILITY=8.0
  ctest_summary native "$logs/ctest_native_cap75.txt" ENGINE_MAX_COMPUTE_CAPABILITY=7.5
  echo "== (b) PTX-only 80-virtual build"
  ctest_summary ptx80 "$logs/ctest_ptx80.txt"
  compute-sanitizer --tool memcheck build-ptx80/tests/test_gpu_parity > "$logs/memcheck_ptx80_parity.txt" 2>&1
  echo "memcheck ptx80 test_gpu_parity: rc $? | $(grep -E "ERROR SUMMARY" "$logs/memcheck_ptx80_parity.txt") | $(grep -E "test cases" "$logs/memcheck_ptx80_parity.txt")"
  compute-sanitizer --tool memcheck env ENGINE_MAX_COMPUTE_CAPABILITY=7.5 build-native/tests/test_gpu_parity > "$logs/memcheck_cap75_parity.txt" 2>&1
  echo "memcheck native cap 7.5 test_gpu_parity: rc $? | $(grep -E "ERROR SUMMARY" "$logs/memcheck_cap75_parity.txt") | $(grep -E "test cases" "$logs/memcheck_cap75_parity.txt")"
  ;;
bench)
  echo "== the PTX build's first run: the driver compiles the kernels it loads (cache emptied first)"
  rm -rf ~/.nv/ComputeCache
  echo "ptx80 mlp, first run:  $(mlp build-ptx80/apps/mnist_mlp --gpu)"; cp /tmp/run.txt "$logs/ptx80_mlp_first.txt"
  echo "ptx80 mlp, second run: $(mlp build-ptx80/apps/mnist_mlp --gpu)"
  echo "ptx80 cifar --tf32, first run: $(cnn build-ptx80/apps/cifar10_cnn --gpu --tf32)"; cp /tmp/run.txt "$logs/ptx80_cifar_first.txt"
  for cap in "" 8.0 7.5; do
    export ENGINE_MAX_COMPUTE_CAPABILITY=$cap
    three_runs "mlp cap=${cap:-none}" "mlp_cap${cap:-none}" mlp build-native/apps/mnist_mlp --gpu
    three_runs "cifar --tf32 cap=${cap:-none}" "cifar_cap${cap:-none}" cnn build-native/apps/cifar10_cnn --gpu --tf32
  done
  unset ENGINE_MAX_COMPUTE_CAPABILITY
  ;;
more)
  for cap in "" 8.0 7.5; do
    export ENGINE_MAX_COMPUTE_CAPABILITY=$cap
    three_runs "wide mlp cap=${cap:-none}" "wide_cap${cap:-none}" mlp build-native/apps/mnist_mlp --gpu --wide
    three_runs "mnist cnn --tf32 cap=${cap:-none}" "mnistcnn_cap${cap:-none}" \
      cnn build-native/apps/mnist_cnn --gpu --tf32 --dataset fashion --data-dir "$data"
  done
  unset ENGINE_MAX_COMPUTE_CAPABILITY
  export ENGINE_CONV_TF32_STAGES=2
  three_runs "cifar --tf32 two-stage conv" cifar_stages2 cnn build-native/apps/cifar10_cnn --gpu --tf32
  unset ENGINE_CONV_TF32_STAGES
  ;;
fat)
  configure_and_build fat -DCMAKE_CUDA_ARCHITECTURES="75-real;80-real;86-real;89-real;90-real;90-virtual"
  ls -la build-fat/apps/mnist_mlp | awk '{print $5, $9}'
  ctest_summary fat "$logs/ctest_fat.txt"
  echo "fat mlp: $(mlp build-fat/apps/mnist_mlp --gpu)"
  ;;
final)
  configure_and_build native
  (cd build-native && ctest -j 6 --output-on-failure > "$logs/ctest_native_all.txt" 2>&1)
  echo "ctest_native_all: $(grep -E "tests passed|tests failed" "$logs/ctest_native_all.txt") $(grep -E "^\s+[0-9]+ - " "$logs/ctest_native_all.txt" | tr -s ' ' | tr '\n' ';')"
  ctest_summary native "$logs/ctest_native_cap80.txt" ENGINE_MAX_COMPUTE_CAPABILITY=8.0
  ctest_summary native "$logs/ctest_native_cap75.txt" ENGINE_MAX_COMPUTE_CAPABILITY=7.5
  ;;
memcheck)
  [ -x build-native/tests/test_gpu_parity ] || configure_and_build native  # a fresh machine
  # The Jacobian's 40,000-pass loop apart: scripts/gpu/sanitize.sh runs it first, by itself.
  { for s in test_gpu_parity test_gpu_backend test_gpu_dot test_gpu_augment test_gpu_conv \
             test_gpu_vendor test_matmul_ladder; do echo "memcheck $s"; done
    echo "memcheck test_gpu_jacobian -tc=*loop?of?backward?passes*"
    echo "memcheck test_gpu_jacobian -tce=*loop?of?backward?passes*"; } > /tmp/memcheck_jobs
  scripts/gpu/sanitize.sh build-native "$logs" 300 /tmp/memcheck_jobs
  ;;
*) echo "phase: build, test, bench, more, fat, final or memcheck"; exit 2 ;;
esac
