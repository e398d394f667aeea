// IDX reader and writer (format described in idx.h). The reader opens the file through
// InputFile (core/binary_file.h: regular files only) and decompresses a gzipped one with
// GzipReader (gzip_reader.h), so one code path serves both; every allocation is checked against
// the file's size first, and every failure names the file and the problem.
#include "datasets/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "core/binary_file.h"
#include "core/error.h"
#include "datasets/gzip_reader.h"

namespace engine::datasets {
namespace {

// The largest data section we accept. MNIST-sized files are ~47 MB; anything beyond this
// is a corrupt header, and refusing it keeps the size arithmetic far from overflow.
constexpr uint64_t kMaxDataBytes = uint64_t{4} << 30;  // 4 GiB
constexpr uint8_t kUnsignedByte = 0x08;
constexpr int kMaxDims = 4;
// gzwrite takes an unsigned int length; write data in pieces of this size.
constexpr size_t kChunk = size_t{16} << 20;  // 16 MiB
// Trailing bytes are counted up to this many; a message then says "more than".
constexpr uint64_t kMaxTrailingCount = uint64_t{1} << 20;  // 1 MiB

const char* type_name(uint8_t code) {
  switch (code) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    default: return "not an IDX type";
  }
}

std::string hex_byte(uint8_t b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned>(b));
  return buf;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

uint32_t load_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string shape_string(const std::vector<int64_t>& dims) {
  std::string shape;
  for (int64_t d : dims) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
  return shape;
}

void store_be32(uint32_t v, uint8_t* p) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

// The bytes of an IDX file: read as they are, or decompressed as they are read when the file
// starts with gzip's signature, whatever its name.
class IdxBytes {
 public:
  explicit IdxBytes(InputFile& file) : file_(file) {
    uint8_t signature[2] = {};
    const size_t got = file_.read(signature, sizeof signature);
    file_.seek(0);
    if (starts_like_gzip(signature, got))
      gzip_.emplace([&file](uint8_t* dst, size_t n) { return file.read(dst, n); }, file.where());
  }

  // Reads up to n bytes into dst and returns how many arrived: fewer than n only at the end of
  // the data. A gzip stream cut short also ends the data (ended_early() says so).
  size_t read(uint8_t* dst, size_t n) { return gzip_ ? gzip_->read(dst, n) : file_.read(dst, n); }

  bool ended_early() const { return gzip_ && gzip_->cut_short(); }

  // The most bytes the data section of this file can hold after a header of `header_bytes`:
  // what is left of a raw file, and for a gzip file what its whole size decompresses to at
  // most. A header that promises more is refused before the data is allocated.
  uint64_t most_data_bytes(uint64_t header_bytes) const {
    if (gzip_) return file_.size() * kMaxDeflateRatio;
    return file_.size() > header_bytes ? file_.size() - header_bytes : 0;
  }

  bool gzip() const { return gzip_.has_value(); }

  // Counts the bytes after the data (for the trailing-bytes message), stopping once more than
  // `limit` are counted: past it the count changes nothing, and the rest of a gzip file could
  // decompress to gigabytes.
  uint64_t count_rest(uint64_t limit) {
    std::vector<uint8_t> scratch(size_t{64} << 10);
    uint64_t rest = 0;
    while (rest <= limit) {
      const size_t got = read(scratch.data(), scratch.size());
      if (got == 0) break;
      rest += got;
    }
    return rest;
  }

 private:
  InputFile& file_;
  std::optional<GzipReader> gzip_;
};

}  // namespace

IdxArray read_idx(const std::string& path) {
  InputFile file(path, "IDX file " + path);
  IdxBytes in(file);
  const std::string where = file.where() + ": ";
  const char* gz_note = " (the gzip stream also ends early: the .gz file is cut short)";

  // Magic number: 0, 0, type code, number of dimensions.
  uint8_t magic[4] = {};
  const size_t got_magic = in.read(magic, 4);
  ENGINE_CHECK(got_magic > 0, where,
               in.ended_early() ? "truncated gzip file: the stream ends before any data"
                                : "empty file (0 bytes)");
  ENGINE_CHECK(got_magic == 4, where, "truncated header: only ", got_magic,
               " of the 4 bytes of the magic number", in.ended_early() ? gz_note : "");
  ENGINE_CHECK(magic[0] == 0 && magic[1] == 0, where, "bad magic number ", hex_byte(magic[0]), " ",
               hex_byte(magic[1]), " ", hex_byte(magic[2]), " ", hex_byte(magic[3]),
               ": an IDX file starts with two zero bytes");
  ENGINE_CHECK(magic[2] == kUnsignedByte, where, "bad magic: unsupported type code ",
               hex_byte(magic[2]), " (", type_name(magic[2]),
               "); only unsigned byte (0x08) IDX files are supported");
  const int ndims = magic[3];
  ENGINE_CHECK(ndims >= 1 && ndims <= kMaxDims, where, "bad magic: ", ndims,
               " dimensions; expected 1 to ", kMaxDims);

  // Dimension sizes, big-endian uint32 each.
  uint8_t raw_dims[4 * kMaxDims] = {};
  const size_t want_dims = 4 * static_cast<size_t>(ndims);
  const size_t got_dims = in.read(raw_dims, want_dims);
  ENGINE_CHECK(got_dims == want_dims, where, "truncated header: ", ndims, " dimensions need ",
               want_dims, " bytes of sizes after the magic number, found ", got_dims,
               in.ended_early() ? gz_note : "");

  IdxArray out;
  for (size_t i = 0; i < want_dims; i += 4) out.dims.push_back(int64_t{load_be32(raw_dims + i)});
  const bool any_zero = std::find(out.dims.begin(), out.dims.end(), 0) != out.dims.end();
  uint64_t bytes = any_zero ? 0 : 1;
  for (size_t i = 0; i < out.dims.size() && bytes != 0; ++i) {
    bytes *= static_cast<uint64_t>(out.dims[i]);  // no overflow: bytes <= 4 GiB, dim < 2^32
    ENGINE_CHECK(bytes <= kMaxDataBytes, where, "absurd sizes ", shape_string(out.dims),
                 ": more than 4 GiB of data (corrupt header?)");
  }

  // The data, allocated only once the file is known to be large enough to hold it.
  const auto expected = static_cast<size_t>(bytes);
  const uint64_t most = in.most_data_bytes(4 + want_dims);
  ENGINE_CHECK(expected <= most, where, "truncated data (dims ", shape_string(out.dims),
               "): expected ", expected, " bytes of data, ",
               in.gzip() ? detail::concat("but the gzip file's ", file.size(),
                                          " bytes decompress to at most ", most, " (deflate "
                                          "compresses at most ", kMaxDeflateRatio, ":1)")
                         : detail::concat("found ", most));
  out.data.resize(expected);
  const size_t have = in.read(out.data.data(), expected);
  ENGINE_CHECK(have == expected, where, "truncated data (dims ", shape_string(out.dims),
               "): expected ", expected, " bytes of data, found ", have,
               in.ended_early() ? gz_note : "");

  // Reading on to the end also checks a gzip file's trailer (CRC-32 and length).
  const uint64_t trailing = in.count_rest(kMaxTrailingCount);
  ENGINE_CHECK(trailing == 0, where, trailing > kMaxTrailingCount ? "more than " : "",
               std::min(trailing, kMaxTrailingCount), " trailing bytes after the ", expected,
               " bytes of data: the header sizes disagree with the file size");
  ENGINE_CHECK(!in.ended_early(), where,
               "truncated gzip file: all data arrived but the gzip stream ends early");
  return out;
}

void write_idx(const std::string& path, const IdxArray& a) {
  const std::string where = "cannot write IDX file " + path + ": ";
  const size_t ndims = a.dims.size();
  ENGINE_CHECK(ndims >= 1 && ndims <= static_cast<size_t>(kMaxDims), where, ndims,
               " dimensions; an IDX file has 1 to ", kMaxDims);

  uint8_t header[4 + 4 * kMaxDims] = {0, 0, kUnsignedByte, static_cast<uint8_t>(ndims)};
  uint64_t bytes = 1;
  for (size_t i = 0; i < ndims; ++i) {
    const int64_t d = a.dims[i];
    ENGINE_CHECK(d >= 0 && d <= std::numeric_limits<uint32_t>::max(), where, "dimension ", i,
                 " is ", d, "; sizes must fit in a uint32");
    bytes = (bytes == 0 || d == 0) ? 0 : bytes * static_cast<uint64_t>(d);
    ENGINE_CHECK(bytes <= kMaxDataBytes, where, "more than 4 GiB of data");
    store_be32(static_cast<uint32_t>(d), header + 4 + 4 * i);
  }
  ENGINE_CHECK(bytes == a.data.size(), where, "the dims hold ", bytes, " elements but data has ",
               a.data.size());
  const size_t header_size = 4 + 4 * ndims;

  if (ends_with(path, ".gz")) {
    errno = 0;
    gzFile f = gzopen(path.c_str(), "wb");
    ENGINE_CHECK(f != nullptr, where, errno != 0 ? std::strerror(errno) : "out of memory");
    bool ok =
        gzwrite(f, header, static_cast<unsigned>(header_size)) == static_cast<int>(header_size);
    for (size_t done = 0; ok && done < a.data.size();) {
      const auto step = static_cast<unsigned>(std::min(a.data.size() - done, kChunk));
      ok = gzwrite(f, a.data.data() + done, step) == static_cast<int>(step);
      done += step;
    }
    const int close_status = gzclose(f);
    ENGINE_CHECK(ok && close_status == Z_OK, where, "gzip write failed (",
                 errno != 0 ? std::strerror(errno) : "zlib error", ")");
  } else {
    errno = 0;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ENGINE_CHECK(f != nullptr, where, std::strerror(errno));
    bool ok = std::fwrite(header, 1, header_size, f) == header_size;
    ok = ok && std::fwrite(a.data.data(), 1, a.data.size(), f) == a.data.size();
    const int close_status = std::fclose(f);
    ENGINE_CHECK(ok && close_status == 0, where, "write failed (", std::strerror(errno), ")");
  }
}

}  // namespace engine::datasets
