#!/usr/bin/env bash
# The documentation's paths and runnable examples (issue 22). Usage:
#   test_docs.sh SOURCE_DIR [BUILD_DIR [DATA_DIR]]
#
# Pages checked: README.md, docs/*.md, docs/kernels/*.md, docs/results/*.md, docs/datasets/*.md
# (not docs/results/logs/: those are records of runs, kept as they were written).
#
# (a) Paths. Outside fenced code blocks, in every page:
#   - every relative link [text](target) or ![alt](target) must exist, resolved from the page's
#     folder. http(s)://, mailto: and #anchor-only links are skipped; "#anchor" and a link title
#     are stripped.
#   - every word inside `backticks` that looks like a repository path must exist, resolved from
#     the repository root or, failing that, from the page's folder. Looks like a path: contains
#     a slash and starts with a top-level folder (apps core cpu kernels nn datasets tests scripts
#     docs cmake), or contains a slash and ends in a known extension (.cpp .h .cu .cuh .md .sh
#     .py .txt .cmake .gp .png .svg .csv .json .log) and its first folder exists in the
#     repository root or the page's folder (or is ..): `include/cudnn.h` under a cuDNN folder
#     is not ours. A `:123` or `:12-34` line suffix and trailing punctuation are stripped; a
#     word with * or ? must match at least one file.
#   - Ignored (documented here, the whole list): absolute paths and ~/..., paths with $, <, >,
#     {, } or "..." (placeholders), a first folder in capitals (DIR/, OUT_DIR/: placeholders), what
#     runs create: build*/, data/, .devdata/, results/, out/ at the start of a path, and the words
#     of NOT_PATHS below (column names that look like paths, e.g. `cpu/it`).
#   A path without an extension also resolves when PATH.cpp exists: the program or test built
#   from it (`apps/mnist_mlp` is built from apps/mnist_mlp.cpp).
#   Each broken one is printed as page:line: path.
# (b) Runnable examples. A fenced block whose info string is `sh cpu-test` is run (only when
#   BUILD_DIR is given) with bash -e in a fresh temporary folder, "build/" at the start of a word
#   replaced by BUILD_DIR, ENGINE_DATA_DIR set to DATA_DIR (when given), 60 s at most; it must
#   exit 0. Write such blocks for the CPU build: CI has no GPU.
# Exit status: 0 when everything holds, 1 otherwise, 2 on bad usage.
set -uo pipefail
src=${1:?usage: test_docs.sh SOURCE_DIR [BUILD_DIR [DATA_DIR]]}
build=${2:-}
data=${3:-}
src=$(cd "$src" && pwd) || exit 2
if [[ -n $build ]]; then build=$(cd "$build" && pwd) || exit 2; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pages=()
for p in "$src"/README.md "$src"/docs/*.md "$src"/docs/kernels/*.md "$src"/docs/results/*.md \
         "$src"/docs/datasets/*.md; do
  [[ -f $p ]] && pages+=("$p")
done

# One awk pass per page prints "LINE<TAB>KIND<TAB>TARGET" for each link (KIND link) and each
# backticked word (KIND code) outside fenced blocks, and writes each `sh cpu-test` block to
# BLOCKS/NNN.sh with its first line's number in NNN.line. POSIX awk (Debian's mawk is enough).
# shellcheck disable=SC2016  # an awk program: its $ are awk's
extract='
function emit(kind, t) { printf "%d\t%s\t%s\n", NR, kind, t }
BEGIN { fence = 0; nblocks = 0 }
{
  line = $0
  if (line ~ /^[ \t]*(```|~~~)/) {
    if (!fence) {
      fence = 1
      info = line; sub(/^[ \t]*(```|~~~)[ \t]*/, "", info); sub(/[ \t]+$/, "", info)
      if (info == "sh cpu-test") {
        nblocks++; out = sprintf("%s/%03d.sh", blocks, nblocks)
        printf "%d\n", NR > (sprintf("%s/%03d.line", blocks, nblocks))
        printf "" > out
        capturing = 1
      }
    } else {
      fence = 0
      if (capturing) { close(out); capturing = 0 }
    }
    next
  }
  if (fence) { if (capturing) print line > out; next }
  # Code spans: the odd pieces between backticks. Their words are path candidates.
  n = split(line, piece, "`")
  prose = ""
  for (i = 1; i <= n; i++) {
    if (i % 2 == 0 && i < n) {
      m = split(piece[i], word, /[ \t]+/)
      for (j = 1; j <= m; j++) if (word[j] ~ /\//) emit("code", word[j])
    } else prose = prose " " piece[i]
  }
  # Links in the prose (code spans removed): ](target)
  s = prose
  while (match(s, /\]\([^)]+\)/)) {
    t = substr(s, RSTART + 2, RLENGTH - 3)
    emit("link", t)
    s = substr(s, RSTART + RLENGTH)
  }
}'

top='^(apps|core|cpu|kernels|nn|datasets|tests|scripts|docs|cmake)/'
ext='\.(cpp|h|cu|cuh|md|sh|py|txt|cmake|gp|png|svg|csv|json|log)$'
ignored='^(build[^/]*|data|\.devdata|results|out|[A-Z][A-Z0-9_]*)/'
NOT_PATHS=(cpu/it)  # crossover's column "cpu/it" (docs/PROFILING.md), not a file

# exists PATH DIR...: whether PATH names a file or folder from one of the DIRs (a glob must match).
exists() {
  local path=$1; shift
  local dir
  for dir in "$@"; do
    if [[ $path == *[*?]* ]]; then
      compgen -G "$dir/$path" >/dev/null && return 0
    elif [[ -e $dir/$path ]]; then
      return 0
    fi
  done
  return 1
}

broken=0
nblocks_total=0
block_files=()
for page in "${pages[@]}"; do
  rel=${page#"$src"/}
  dir=$(dirname "$page")
  blocks="$tmp/blocks/${rel//\//_}"
  mkdir -p "$blocks"
  while IFS=$'\t' read -r line kind target; do
    if [[ $kind == link ]]; then
      target=${target#<}; target=${target%>}
      target=${target%% *}            # a link title: (path "title")
      [[ $target =~ ^(https?:|mailto:|#) ]] && continue
      target=${target%%#*}
      [[ -z $target ]] && continue
      [[ $target == /* ]] && continue
      exists "$target" "$dir" && continue
    else
      target=${target%%[,.;:)]}       # trailing punctuation, once...
      target=${target%[,.;:)]}        # ...or twice ("path).")
      target=${target#(}
      target=$(sed -E 's/:[0-9]+(-[0-9]+)?$//' <<<"$target")
      [[ $target =~ $top || $target =~ $ext ]] || continue
      # Only by its extension: a path of this repository only if its first folder is one here.
      first=${target%%/*}
      [[ $target =~ $top || $first == .. || -e $src/$first || -e $dir/$first ]] || continue
      [[ $target =~ ^(/|~) || $target == *[\$\<\>\{\}]* || $target == *...* ]] && continue
      [[ $target =~ $ignored ]] && continue
      [[ " ${NOT_PATHS[*]} " == *" $target "* ]] && continue
      exists "$target" "$src" "$dir" && continue
      [[ $target != *.* ]] && exists "$target.cpp" "$src" "$dir" && continue
    fi
    echo "$rel:$line: broken path: $target"
    broken=$((broken + 1))
  done < <(awk -v blocks="$blocks" "$extract" "$page")
  for b in "$blocks"/*.sh; do
    [[ -f $b ]] || continue
    block_files+=("$rel:$(cat "${b%.sh}.line"):$b")
    nblocks_total=$((nblocks_total + 1))
  done
done
echo "checked the paths of ${#pages[@]} pages: $broken broken"

failed=0
if [[ -z $build ]]; then
  echo "no BUILD_DIR: the $nblocks_total 'sh cpu-test' blocks were not run"
else
  for entry in "${block_files[@]}"; do
    where=${entry%:*}; file=${entry##*:}
    work=$(mktemp -d "$tmp/run.XXXX")
    sed -E "s#(^|[[:space:](=\"'])build/#\\1$build/#g" "$file" >"$work/block.sh"
    if (cd "$work" && ENGINE_DATA_DIR=${data:-${ENGINE_DATA_DIR:-}} timeout 60 bash -e block.sh) \
         >"$work/output" 2>&1; then
      echo "ran the block at $where: ok"
    else
      status=$?
      echo "$where: the 'sh cpu-test' block failed (status $status$([[ $status == 124 ]] && echo ', over 60 s')):"
      sed 's/^/    /' "$work/block.sh"
      echo "  its last output:"
      tail -n 15 "$work/output" | sed 's/^/    /'
      failed=$((failed + 1))
    fi
  done
  echo "ran $nblocks_total 'sh cpu-test' blocks: $failed failed"
fi

((broken == 0 && failed == 0)) || exit 1
exit 0
