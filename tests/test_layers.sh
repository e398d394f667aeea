#!/usr/bin/env bash
# The layers' arrows point one way (docs/ARCHITECTURE.md): apps -> nn -> core -> {cpu, kernels},
# datasets -> core. One library holds them all, so the compiler cannot refuse an include that
# points back; this test does: every #include "folder/..." of a layer must name a folder that
# layer may use. Usage: tests/test_layers.sh SOURCE_DIR
set -uo pipefail
cd "${1:?source dir}" || exit 1
# layer: the folders its files may include from (besides its own)
declare -A allowed=(
  [kernels]="core"
  [cpu]="core"
  [core]="cpu kernels"
  [datasets]="core"
  [nn]="core datasets"
)
failures=0
for layer in "${!allowed[@]}"; do
  while IFS= read -r hit; do
    file=${hit%%:*}
    folder=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<< "$hit")
    case " $layer ${allowed[$layer]} " in
      *" $folder "*) ;;
      *) echo "$file includes from $folder/, which $layer/ may not use: ${hit#*:}"; failures=$((failures + 1)) ;;
    esac
  done < <(grep -rnE '^#include "[a-z_]+/' "$layer" --include=*.h --include=*.cpp --include=*.cu --include=*.cuh)
done
echo "layers: $failures include(s) against the arrows"
[ "$failures" -eq 0 ]
