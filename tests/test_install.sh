#!/bin/sh
# The installed package (cmake/EngineInstall.cmake) as an outside project uses it: install the
# build into a temporary prefix, then build tests/install_consumer against it twice, through
# find_package(engine) and through pkg-config, and run both: each trains a small model and
# must print a falling loss. Then the examples (examples/README.md), built against the same
# prefix with -Wall -Wextra (not -Werror: GCC 13 sees a false array-bounds warning in
# std::vector copies at -O3) and run on the CPU, each checked on the number it prints:
#   csv_regression      "test mse: X"    X < 0.03   (about 0.004; the noise alone gives 0.0025)
#   custom_layer        "final loss: X"  X < 0.01   (about 0.0001, from 0.44; it also exits 1
#                                                    unless the loss fell tenfold)
#   save_and_predict    "accuracy: X"    X > 0.90   (about 0.99, by the program that loads
#                                                    the file the training program saved)
#   own_training_loop   "final loss: X"  X < 0.15   (about 0.03, from 0.52)
# Skipped (77) in a sanitizer build, whose library needs the sanitizers' runtime at link time.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR SCRATCH SANITIZE(ON|OFF)
build="$1"; source="$2"; tmp="$3"; sanitize="$4"
case "$sanitize" in ON|on|1|TRUE|true) echo "sanitizer build: not checked"; exit 77 ;; esac
set -e
rm -rf "$tmp"; mkdir -p "$tmp"
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
test -f "$tmp/prefix/include/engine/nn/sequential.h"
cmake -S "$source/tests/install_consumer" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$tmp/configure.log"
cmake --build "$tmp/cmake" > "$tmp/build.log"
"$tmp/cmake/consumer"
pc_dir=$(dirname "$(find "$tmp/prefix" -name engine.pc | head -1)")
# shellcheck disable=SC2046  # pkg-config's flags are meant to split
c++ -std=c++17 -O1 "$source/tests/install_consumer/main.cpp" -o "$tmp/pkgconfig_consumer" \
  $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs engine)
"$tmp/pkgconfig_consumer"

# Runs an example, keeping its output in $tmp/NAME.out; shows it and stops if the run fails.
run_example() {
  name="$1"; shift
  "$@" > "$tmp/$name.out" 2>&1 || { cat "$tmp/$name.out"; echo "example $name failed"; exit 1; }
}
# check NAME LABEL OP BOUND: the number after "LABEL: " on a line of NAME's output is OP (< or
# >) BOUND.
check() {
  value=$(sed -n "s/^$2: //p" "$tmp/$1.out" | tail -n 1)
  if awk -v v="$value" -v op="$3" -v b="$4" \
       'BEGIN { if (v !~ /^[0-9.eE+-]+$/) exit 1; exit !(op == "<" ? v + 0 < b : v + 0 > b) }'; then
    echo "example $1: $2 $value ($3 $4)"
  else
    cat "$tmp/$1.out"; echo "example $1: '$2: $value' is not $3 $4"; exit 1
  fi
}
ex="$tmp/examples"
cmake -S "$source/examples" -B "$ex" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="-Wall -Wextra" > "$tmp/examples_configure.log" 2>&1 ||
  { cat "$tmp/examples_configure.log"; exit 1; }
cmake --build "$ex" --parallel 2 > "$tmp/examples_build.log" 2>&1 || { cat "$tmp/examples_build.log"; exit 1; }
run_example csv_regression "$ex/csv_regression/csv_regression"
check csv_regression "test mse" "<" 0.03
run_example custom_layer "$ex/custom_layer/custom_layer"
check custom_layer "final loss" "<" 0.01
run_example train_classifier "$ex/save_and_predict/train_classifier" "$tmp/spirals.model"
run_example predict "$ex/save_and_predict/predict" "$tmp/spirals.model"
check predict "accuracy" ">" 0.90
run_example own_training_loop "$ex/own_training_loop/own_training_loop"
check own_training_loop "final loss" "<" 0.15
echo "installed package: find_package and pkg-config consumers and the four examples built and ran"
