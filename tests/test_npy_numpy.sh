#!/usr/bin/env bash
# The engine's .npy / .npz reader and writers (datasets/npy.h) against NumPy itself:
#  - NumPy writes arrays of every dtype the reader takes (float32, float64, int32, int64, uint8),
#    2-d, 1-d, 0-d and empty, with NaN and infinities, in format versions 1.0, 2.0 and 3.0; the
#    engine reads each and writes it back (tests/npy_roundtrip.cpp, "copy"); NumPy loads the copy
#    (allow_pickle=False) and numpy.array_equal checks it against the original (float64 and int64
#    come back as float32 and int32, the engine's dtypes, and are compared as such). Each copy must
#    be format 1.0 with its data at a multiple of 64 bytes, as NumPy writes it.
#  - the engine writes a .npz of two arrays (and one of a 0-d and an empty one): zipfile's CRC
#    check passes and numpy.load(path)[name] gives each array by its name, in order.
#  - Fortran-order arrays, object arrays, float16, big-endian data and int64 beyond int32 are
#    refused with one line naming the file and the reason (exit status 1).
# Usage: test_npy_numpy.sh PATH/TO/npy_roundtrip
# Exits 77 (skipped, loudly) when no python3 with NumPy is found (Debian: python3-numpy, which
# scripts/install_deps.sh installs).
set -uo pipefail
tool=${1:?usage: test_npy_numpy.sh PATH/TO/npy_roundtrip}
[ -x "$tool" ] || { echo "test_npy_numpy: $tool is not an executable" >&2; exit 2; }

# The first python3 that imports numpy: the one on PATH (maybe a virtualenv or pyenv's), else
# the system's, where Debian's python3-numpy lives.
python=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" > /dev/null 2>&1 && "$candidate" -c 'import numpy' > /dev/null 2>&1; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  echo "*** NUMPY TEST SKIPPED: no python3 that can 'import numpy' (Debian/Ubuntu: apt-get install python3-numpy; scripts/install_deps.sh installs it) ***" >&2
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "test_npy_numpy: $("$python" -c 'import sys, numpy; print("Python", sys.version.split()[0], "NumPy", numpy.__version__)') ($python)"

"$python" - "$tool" "$work" << 'EOF'
import os
import subprocess
import sys
import zipfile

import numpy as np

tool, work = sys.argv[1], sys.argv[2]
failures = 0


def fail(message):
    global failures
    failures += 1
    print("FAIL:", message)


def run(*args):
    return subprocess.run([tool, *args], capture_output=True, text=True)


def check_format(path):
    """The engine's file: format 1.0, the data at a multiple of 64 bytes."""
    with open(path, "rb") as f:
        major, minor = np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        if (major, minor) != (1, 0) or f.tell() % 64 != 0:
            fail(f"{path}: format {major}.{minor}, data at byte {f.tell()}")


rng = np.random.default_rng(23)
special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, 3.4e38, -1.5], dtype=np.float32)
i32 = np.iinfo(np.int32)
# name: (array as NumPy saves it, what the engine must give back)
cases = {
    "float32_2d": rng.standard_normal((13, 7)).astype(np.float32),
    "float32_special": special,
    "float64_2d": rng.standard_normal((5, 3, 2)),
    "float64_special": special.astype(np.float64),
    "int32": np.array([[i32.min, -1, 0], [1, 12345, i32.max]], dtype=np.int32),
    "int64": np.array([i32.min, -7, 0, 42, i32.max], dtype=np.int64),
    "uint8": rng.integers(0, 256, size=(4, 5, 3), dtype=np.uint8),
    "float32_0d": np.array(2.5, dtype=np.float32),
    "float64_0d": np.array(-1.25),
    "int64_0d": np.array(7, dtype=np.int64),
    "uint8_0d": np.array(200, dtype=np.uint8),
    "float32_empty": np.zeros((0, 3), dtype=np.float32),
    "int64_empty": np.zeros((4, 0), dtype=np.int64),
    "uint8_empty": np.zeros((0,), dtype=np.uint8),
    "float32_big": rng.standard_normal((1000, 37)).astype(np.float32),
}
expected_dtype = {np.dtype(np.float32): np.float32, np.dtype(np.float64): np.float32,
                  np.dtype(np.int32): np.int32, np.dtype(np.int64): np.int32,
                  np.dtype(np.uint8): np.uint8}


def round_trip(name, a, path):
    out = os.path.join(work, name + ".out.npy")
    r = run("copy", path, out)
    if r.returncode != 0:
        fail(f"{name}: the engine refused it: {r.stderr.strip()}")
        return
    want = a.astype(expected_dtype[a.dtype])
    got = np.load(out, allow_pickle=False)
    check_format(out)
    equal_nan = want.dtype.kind == "f"
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want, equal_nan=equal_nan):
        fail(f"{name}: wrote {a.dtype} {a.shape}, got back {got.dtype} {got.shape}")
    elif equal_nan and not np.array_equal(np.signbit(got), np.signbit(want)):
        fail(f"{name}: signs of zero differ")
    else:
        print(f"ok: {name}: {a.dtype} {a.shape} -> {got.dtype} {got.shape} ({r.stdout.strip()})")


for name, a in cases.items():
    path = os.path.join(work, name + ".npy")
    np.save(path, a)
    round_trip(name, a, path)

# Format versions 2.0 and 3.0 (NumPy writes them for huge headers and non-Latin-1 names).
for version in [(2, 0), (3, 0)]:
    name = f"version_{version[0]}_{version[1]}"
    path = os.path.join(work, name + ".npy")
    with open(path, "wb") as f:
        np.lib.format.write_array(f, cases["float32_2d"], version=version)
    round_trip(name, cases["float32_2d"], path)

# Refusals: exit status 1 and one line naming the file and the reason.
fortran = np.asfortranarray(rng.standard_normal((3, 4)).astype(np.float32))
refusals = {
    "fortran": (fortran, "Fortran-order array (fortran_order: True) is not supported"),
    "object": (np.array([1, "a", None], dtype=object), "object arrays (descr '|O') are not supported"),
    "float16": (np.ones(3, dtype=np.float16), "unsupported dtype '<f2'"),
    "big_endian": (np.ones(3, dtype=">f4"), "big-endian data (descr '>f4') is not supported"),
    "int64_too_big": (np.array([1, 2**40], dtype=np.int64), "element 1 (C order) is 1099511627776, outside int32's range"),
}
for name, (a, reason) in refusals.items():
    path = os.path.join(work, name + ".npy")
    np.save(path, a, allow_pickle=True)
    r = run("copy", path, os.path.join(work, name + ".out.npy"))
    line = r.stderr.strip()
    if r.returncode != 1 or "\n" in line or not line.startswith(f"NumPy file {path}: ") or reason not in line:
        fail(f"{name}: expected status 1 and one line with '{reason}', got {r.returncode}: {r.stderr!r}")
    else:
        print(f"ok: {name} refused: {line}")

# .npz: the arrays by name, in order, and zipfile's CRC check.
archives = {
    "weights": [("dense/kernel", cases["float32_2d"]), ("dense/bias", cases["int32"])],
    "odd_shapes": [("scalar", cases["float32_0d"]), ("nothing", cases["uint8_empty"])],
}
for archive, members in archives.items():
    out = os.path.join(work, archive + ".npz")
    args = []
    for name, a in members:
        path = os.path.join(work, archive + "_" + name.replace("/", "_") + ".npy")
        np.save(path, a)
        args.append(f"{name}={path}")
    r = run("npz", out, *args)
    if r.returncode != 0:
        fail(f"{archive}.npz: the engine refused it: {r.stderr.strip()}")
        continue
    with zipfile.ZipFile(out) as z:
        bad = z.testzip()
        if bad is not None:
            fail(f"{archive}.npz: zipfile's CRC check fails for {bad}")
        if any(info.compress_type != zipfile.ZIP_STORED for info in z.infolist()):
            fail(f"{archive}.npz: a member is compressed")
    with np.load(out, allow_pickle=False) as z:
        names = [name for name, _ in members]
        if list(z.files) != names:
            fail(f"{archive}.npz: members {z.files}, expected {names}")
        for name, a in members:
            got = z[name]
            if got.dtype != a.dtype or not np.array_equal(got, a):
                fail(f"{archive}.npz[{name!r}]: {got.dtype} {got.shape} differs from {a.dtype} {a.shape}")
    print(f"ok: {archive}.npz: numpy.load gives {', '.join(n for n, _ in members)} by name")

print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
EOF
