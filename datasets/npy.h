// NumPy's .npy files (one array) and .npz archives (several, by name): arrays in and out of
// the engine, for data prepared in Python and for weights and predictions to look at there.
//
//   Tensor x = read_npy("x_train.npy");                 // np.save("x_train.npy", x)
//   write_npy("pred.npy", model.predict(x));            // np.load("pred.npy")
//   write_npz("weights.npz", {{"dense/kernel", k}, {"dense/bias", b}});
//                                                       // np.load("weights.npz")["dense/bias"]
//
// The .npy format (numpy.lib.format; NEP 1): the 6 bytes "\x93NUMPY", a major and a minor
// version byte, the header's length (uint16 little-endian in version 1.0, uint32 in 2.0 and
// 3.0), the header, then the elements, C order (last index fastest) unless the header says
// fortran_order. The header is a Python dict literal padded with spaces to a '\n':
//
//   {'descr': '<f4', 'fortran_order': False, 'shape': (60000, 784), }
//
// descr is the dtype: a byte-order character ('<' little-endian, '>' big, '|' not applicable,
// '=' native), a kind and a size in bytes ('f4' float32, 'i8' int64, 'u1' uint8 ...).
//
// Read (versions 1.0, 2.0 and 3.0), into a tensor on the CPU:
//   '<f4' float32 -> float32        '<i4' int32 -> int32        '|u1' uint8 -> uint8
//   '<f8' float64 -> float32, CONVERTED: rounded to the nearest float32 (about 7 significant
//         digits); a finite value beyond float32's range (about 3.4e38) is refused, NaN and
//         infinity stay what they are.
//   '<i8' int64 -> int32, range-checked: a value outside int32's range is refused, naming the
//         element.
//   A 0-d array (shape ()) reads as a tensor of shape () holding one element; an empty one
//   (a 0 in its shape) as a tensor of no elements.
// Refused, each with one line naming the file: a bad magic string (and a .npz, or any ZIP,
// given to read_npy), a version other than those, a header longer than 10,000 bytes (NumPy's
// own reader refuses those too) or one that is not such a dict, Fortran order, object arrays
// ('|O'), structured dtypes and every dtype not listed above (by its descr), big-endian data,
// a shape with a negative or absurd extent, data shorter than the shape needs (truncated) or
// longer (trailing bytes).
//
// Written: float32 as '<f4', int32 as '<i4', uint8 as '|u1', C order, format version 1.0,
// header padded so that the data starts at a multiple of 64 bytes, as NumPy writes it. A tensor
// on a GPU is copied to the host first. Files are replaced atomically (core/binary_file.h): a
// crash mid-write leaves the previous file whole.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace engine::datasets {

// Reads a .npy file into a tensor on the CPU (dtypes and refusals above). Throws engine::Error
// with one line naming the file and the problem.
Tensor read_npy(const std::string& path);

// The bytes of `t` as a .npy file: the version 1.0 header, then the elements.
std::vector<char> encode_npy(const Tensor& t);

// Writes `t` as a .npy file, atomically. Throws engine::Error naming the file if it cannot.
void write_npy(const std::string& path, const Tensor& t);

// Writes a .npz archive: an uncompressed ZIP holding one member "<name>.npy" per array, in the
// order given, as numpy.savez does; numpy.load(path)[name] reads each back. Names are 1 to 200
// characters of letters, digits and _ - . /, neither starting nor ending with '/', without an
// empty, "." or ".." part ("dense/kernel" is fine), each used once. No ZIP64: each array and
// the whole archive must stay under 4 GiB (write bigger arrays with write_npy). Atomic, like
// write_npy. Throws engine::Error naming the file and the array for anything it refuses.
void write_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& arrays);

}  // namespace engine::datasets
