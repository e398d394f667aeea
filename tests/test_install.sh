#!/bin/sh
# The installed package (cmake/EngineInstall.cmake) as an outside project uses it: install the
# build into a temporary prefix, then build tests/install_consumer against it twice, through
# find_package(engine) and through pkg-config, and run both: each trains a small model and
# must print a falling loss. Skipped (77) in a sanitizer build, whose library needs the
# sanitizers' runtime at link time.
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
echo "installed package: find_package and pkg-config consumers built and ran"
