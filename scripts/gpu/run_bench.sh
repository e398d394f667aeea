#!/usr/bin/env bash
# One call on the GPU machine for the benchmark report (issue 8, item 5): build apps/bench and the
# apps it drives in build-gpu (skipped when build-gpu/apps/bench is there already), run its default
# setting into OUT_DIR under `timeout 480` (the report RESULTS.md, the plots' scripts and data in
# results/bench/, every run's log and --json record in work/), and pack it all into
# OUT_DIR/bench.tgz, since only a few files come back from that machine. That machine has no
# gnuplot: draw the plots here with `tar xzf bench.tgz && cd results/bench && gnuplot *.gp`.
# Usage: scripts/gpu/run_bench.sh OUT_DIR [DATA_DIR]   (DATA_DIR: fetch_data.sh's; default .devdata)
set -uo pipefail
out=${1:?out dir}; data=${2:-.devdata}
mkdir -p "$out"
threads=$(nproc)
echo "== host"; lscpu | grep -E "Model name|^CPU\(s\)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
if [ ! -x build-gpu/apps/bench ]; then
  timeout 120 cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCUDNN_ROOT=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn > "$out/configure.log" 2>&1 ||
    { tail -30 "$out/configure.log"; exit 1; }
  grep -i "cudnn" "$out/configure.log"
  # Only what the bench runs: the apps of every seed experiment, the tree generator, the crossover finder.
  timeout 540 cmake --build build-gpu -j "$threads" --target bench mnist_mlp jacobian_mlp matmul_sweep \
    cifar10_cnn mnist_cnn dogs_vs_cats make_dogs_cats crossover > "$out/build.log" 2>&1 ||
    { grep -E "error" -A5 "$out/build.log" | head -60; exit 1; }
fi
# The PyTorch that the reference scripts need: python3's own, else the venv that has it.
python=python3
if ! python3 -c "import torch" 2> /dev/null && [ -x /opt/torch/.venv/bin/python ]; then
  python=/opt/torch/.venv/bin/python
fi
echo "== bench, default setting (python: $python)"
build-gpu/apps/bench --dry-run --data-dir "$data" --python "$python" --work-dir "$out/work" \
  --report "$out/RESULTS.md" > "$out/plan.txt" 2>&1
tail -1 "$out/plan.txt"
# PyTorch at its best (--graphed) adds a run per training case on cuda: a budget of 420 s (360
# left PyTorch's Jacobian unrun on 2026-11-25).
timeout 480 build-gpu/apps/bench --data-dir "$data" --python "$python" --report "$out/RESULTS.md" \
  --work-dir "$out/work" --budget 420 > "$out/bench.log" 2>&1; echo "rc $?"
grep -vE "^\[ *[0-9]+/[0-9]+\] .*\.\.\.$" "$out/bench.log" | tail -60
# The generated Dogs-vs-Cats JPEGs stay behind: tens of MB, and make_dogs_cats remakes them.
tar czf "$out/bench.tgz" -C "$out" --exclude work/dogs_vs_cats RESULTS.md results work bench.log plan.txt
ls -l "$out/bench.tgz"
