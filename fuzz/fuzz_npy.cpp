// Fuzz target: the NumPy .npy reader, datasets::read_npy, and its writer, encode_npy
// (datasets/npy.h).
//
// What is fuzzed: the whole file. read_npy checks the magic "\x93NUMPY", the version (1.0, 2.0,
// 3.0), the header's length field (2 or 4 bytes) against the file and the 10,000-byte limit,
// parses the header, a Python dict literal, by hand ('descr', 'fortran_order', 'shape': strings,
// True/False, tuples of integers that may be negative, huge, or not a tuple), maps the descr to
// a dtype or a refusal, checks the shape's product against overflow and the data's size against
// the file's, and converts float64 to float32 and int64 to int32 with their range checks. Every
// tensor it returns is then written with encode_npy and read back from a second scratch file:
// it must come back with the same dtype, shape and bytes.
//
// Why: .npy files come from other people's scripts and other NumPy versions; a cut download, a
// header from a newer format or a hand-edited shape must give one engine::Error, never a crash,
// an allocation the size of a lying header, or a signed overflow in a shape's product. Seeds:
// fuzz/corpus/npy/ (written by NumPy: each dtype the reader takes, 0-d, empty, versions 2.0 and
// 3.0; and refused ones: Fortran order, an object array, float16, big-endian, truncated data,
// trailing bytes, a .npz).
//
// The contract checked: a tensor that is read has as many bytes as its shape needs, and its
// .npy bytes read back to the same tensor; anything else, or another exception than
// engine::Error, is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "datasets/npy.h"
#include "fuzz/temp_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static engine::fuzz::TempFile file("npy");
  static engine::fuzz::TempFile copy("npy_copy");
  engine::Tensor t;
  try {
    t = engine::datasets::read_npy(file.write(data, size));
  } catch (const engine::Error&) {
    return 0;  // a refused file: the documented outcome for bad input
  }
  if (!t.defined() || t.nbytes() != static_cast<size_t>(t.numel()) * engine::element_size(t.dtype()))
    std::abort();

  // What the engine writes, it reads back unchanged.
  const std::vector<char> bytes = engine::datasets::encode_npy(t);
  engine::Tensor back;
  try {
    back = engine::datasets::read_npy(
        copy.write(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  } catch (const engine::Error&) {
    std::abort();  // our own file refused
  }
  if (back.dtype() != t.dtype() || back.shape() != t.shape() ||
      (t.nbytes() > 0 && std::memcmp(back.raw_data(), t.raw_data(), t.nbytes()) != 0))
    std::abort();
  return 0;
}
