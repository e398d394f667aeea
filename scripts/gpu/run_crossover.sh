#!/usr/bin/env bash
# One call on the GPU machine for the crossover finder (issue 8): build apps/crossover in
# build-gpu, check its analysis, run the full sweep (every workload; the CPU on all host
# threads, our GPU kernels and cuBLAS/cuDNN in all three variants) and leave its CSV, gnuplot
# script, PNG/SVG (where the machine has gnuplot; else run `gnuplot crossover.gp` on the
# copies), --json record and log in OUT_DIR. Usage: scripts/gpu/run_crossover.sh OUT_DIR
#
# Budget (~3 minutes of sweep on an H100 host): the GPU's times are microseconds to a few
# milliseconds; the CPU's largest sizes dominate (matmul n = 4096: 137 GFLOP, conv 256 channels:
# 116 GFLOP, each ~0.1-0.5 s a step on 16 cores), and each measurement stops at 3 samples once
# it has used 1.5 s. Each step has its own time limit, so one slow step cannot eat the session.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
threads=$(nproc)
echo "== host"; lscpu | grep -E "Model name|^CPU\(s\)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
timeout 120 cmake -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
# Only what this run needs: the engine library, the app and its unit test.
timeout 540 cmake --build build-gpu -j "$threads" --target crossover test_crossover_analysis \
  > "$out/build.log" 2>&1 || { grep -E "error" -A5 "$out/build.log" | head -60; exit 1; }
echo "== test_crossover_analysis"
timeout 60 build-gpu/tests/test_crossover_analysis 2>&1 | tail -2
echo "== crossover --quick (a smoke run of every GPU path)"
timeout 60 build-gpu/apps/crossover --quick --threads "$threads" --no-plot --csv "$out/quick/crossover.csv" \
  > "$out/crossover_quick.log" 2>&1; echo "rc $?"
grep -E "not measured|error" "$out/crossover_quick.log"
echo "== crossover, full sweep"
timeout 300 build-gpu/apps/crossover --threads "$threads" --csv "$out/crossover.csv" \
  --json "$out/crossover.json" > "$out/crossover.log" 2>&1; echo "rc $?"
cat "$out/crossover.log"
# The seed's step against one CPU core: at tiny batches one thread skips the OpenMP team's
# wake-up per op (~3 us on 16 threads), which lowers the CPU's floor and moves the crossover.
echo "== crossover, mlp_step, the CPU on 1 thread"
timeout 120 build-gpu/apps/crossover --workload mlp_step --threads 1 --cpu --gpu \
  --csv "$out/threads1/crossover.csv" > "$out/crossover_threads1.log" 2>&1; echo "rc $?"
sed -n '/Where the GPU/,/^CSV/p' "$out/crossover_threads1.log"
ls -l "$out"
