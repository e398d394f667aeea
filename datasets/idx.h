// IDX files: the format MNIST and Fashion-MNIST ship in.
//
// An IDX file is a 4-byte magic number, then one 4-byte size per dimension, then the data:
//
//   byte 0, 1   always 0
//   byte 2      element type: 0x08 unsigned byte, 0x09 signed byte, 0x0B int16,
//               0x0C int32, 0x0D float32, 0x0E float64
//   byte 3      number of dimensions (1 for labels, 3 for images: count, rows, cols)
//   then        ndims sizes, each a big-endian uint32
//   then        the elements in row-major order (C order, last dimension fastest)
//
// The file ends right after the data. Only unsigned-byte files are read here, which is
// everything the MNIST family uses. Files may be raw or gzip-compressed (.gz).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace engine::datasets {

// An unsigned-byte IDX array: dims as stored (e.g. {60000, 28, 28}), data row-major.
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

// Reads a raw or gzipped IDX file of type 0x08 (gzip is recognised by its first two bytes,
// whatever the file's name). Throws engine::Error with one line naming the file and the problem
// for anything that is not a well-formed file of that type: a path that is not a regular file
// (a FIFO or a device is refused, not read), a header promising more data than the file can
// hold (checked before allocating), a gzip stream that is corrupt, cut short, followed by
// garbage or whose trailer (CRC-32, length) disagrees with its data.
IdxArray read_idx(const std::string& path);

// Writes `a` as an IDX file of type 0x08: gzip-compressed when `path` ends in ".gz",
// raw otherwise. Throws engine::Error if `a` is inconsistent or the write fails.
void write_idx(const std::string& path, const IdxArray& a);

}  // namespace engine::datasets
