#!/usr/bin/env bash
# scripts/install_deps.sh's choice of packages, installing nothing: for the os-release files of
# Debian 12, Ubuntu 22.04, Ubuntu 24.04 and a derivative (Linux Mint 21.3, on jammy),
# --print-packages prints exactly the expected list; for systems it does not support (Debian 11,
# Debian testing, Ubuntu 20.04, Fedora) it exits with status 1 and one line naming the system and
# the supported ones.
# Usage: test_install_deps.sh [PATH/TO/install_deps.sh [FIXTURE_DIR]]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
script=${1:-$here/../scripts/install_deps.sh}
fixtures=${2:-$here/data/os-release}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The same on all three systems.
common="build-essential cmake ninja-build pkg-config ca-certificates libopenblas-openmp-dev
  doctest-dev libspdlog-dev libcli11-dev nlohmann-json3-dev libjpeg-dev zlib1g-dev gnuplot-nox
  dataset-fashion-mnist clang libomp-dev llvm npm python3-numpy"
# fixture | expected packages beyond $common
table="
debian-12      | libclang-rt-dev
ubuntu-22.04   |
ubuntu-24.04   | libclang-rt-dev
linuxmint-21.3 |
"
# Names that must never be chosen: Debian-only, or absent from the system the row is for.
never_all="libjpeg62-turbo-dev libjpeg-turbo8-dev"
never_ubuntu_22_04="libclang-rt-dev libclang-rt-14-dev"

sorted() { tr -s '[:space:]' '\n' | sed '/^$/d' | sort; }

while IFS='|' read -r fixture extra; do
  fixture=${fixture// /}
  [ -n "$fixture" ] || continue
  "$script" --print-packages --os-release "$fixtures/$fixture" > "$tmp/out" 2> "$tmp/err"
  status=$?
  if [ "$status" -ne 0 ]; then fail "$fixture: exit status $status: $(cat "$tmp/err")"; continue; fi
  [ -s "$tmp/err" ] && fail "$fixture: unexpected stderr: $(cat "$tmp/err")"
  want=$(echo "$common $extra" | sorted)
  got=$(sorted < "$tmp/out")
  if [ "$got" != "$want" ]; then
    fail "$fixture: packages differ (< expected, > printed):"
    diff <(echo "$want") <(echo "$got") | grep '^[<>]'
  else
    echo "ok: $fixture: $(echo "$got" | wc -l) packages, beyond the common ones:${extra:- none}"
  fi
  never=$never_all
  case $fixture in ubuntu-22.04 | linuxmint-21.3) never="$never $never_ubuntu_22_04" ;; esac
  for p in $never; do
    grep -qx -- "$p" "$tmp/out" && fail "$fixture: chose $p"
  done
done <<< "$table"

# Unsupported systems: status 1, nothing on stdout, one line on stderr naming the system (its
# PRETTY_NAME) and the supported ones.
supported="Debian 12 (bookworm), Ubuntu 22.04 (jammy), Ubuntu 24.04 (noble)"
for row in "debian-11|Debian GNU/Linux 11 (bullseye)" "debian-testing|Debian GNU/Linux trixie/sid" \
  "ubuntu-20.04|Ubuntu 20.04.6 LTS" "fedora-42|Fedora Linux 42 (Forty Two)"; do
  fixture=${row%%|*} pretty=${row#*|}
  "$script" --print-packages --os-release "$fixtures/$fixture" > "$tmp/out" 2> "$tmp/err"
  status=$?
  if [ "$status" -ne 1 ]; then fail "$fixture: exit status $status, expected 1"; continue; fi
  [ -s "$tmp/out" ] && fail "$fixture: printed packages: $(tr '\n' ' ' < "$tmp/out")"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$fixture: expected one line on stderr, got: $(cat "$tmp/err")"
  grep -qF -- "$pretty is not supported" "$tmp/err" || fail "$fixture: stderr does not name '$pretty': $(cat "$tmp/err")"
  grep -qF -- "$supported" "$tmp/err" || fail "$fixture: stderr does not list the supported systems: $(cat "$tmp/err")"
  echo "ok: $fixture refused ($(cat "$tmp/err"))"
done

# A missing os-release file and an unknown flag.
"$script" --print-packages --os-release "$tmp/no-such-file" > "$tmp/out" 2> "$tmp/err"
status=$?
if [ "$status" -eq 1 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -qF "$supported" "$tmp/err"; then
  echo "ok: missing os-release refused ($(cat "$tmp/err"))"
else
  fail "missing os-release: exit status $status: $(cat "$tmp/err")"
fi
"$script" --no-such-flag > "$tmp/out" 2> "$tmp/err"
status=$?
if [ "$status" -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ]; then
  echo "ok: unknown flag refused ($(cat "$tmp/err"))"
else
  fail "unknown flag: exit status $status, expected 2: $(cat "$tmp/err")"
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
