// Reading a gzip file (RFC 1952) as it is decompressed: the layer under the IDX reader
// (datasets/idx.h), which MNIST and Fashion-MNIST ship gzipped.
//
// A gzip file is one or more members (`gzip -c a b > ab.gz` makes two), each a header, deflate
// data and an 8-byte trailer: the CRC-32 of the member's decompressed bytes and their length
// (mod 2^32). zlib's inflate checks both when it reaches a member's end; the reader makes sure
// it does get there and refuses anything after the last member that is not another member.
//
// The reader decompresses only as much as it is asked for: how much a file may hold is the
// caller's to bound (read_idx asks for what the IDX header promises and a little more), so a
// small file that would decompress to gigabytes costs no more than what is asked.
#pragma once
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace engine::datasets {

// Deflate's largest compression ratio (zlib's documentation: "the maximum compression factor
// is 1032:1"): n compressed bytes never decompress to more than 1032 n. A header that promises
// more than that of a file's size is lying, and can be refused before anything is allocated.
constexpr uint64_t kMaxDeflateRatio = 1032;

// Whether `data` (n bytes) starts with gzip's signature, 1f 8b.
bool starts_like_gzip(const uint8_t* data, size_t n);

class GzipReader {
 public:
  // Where the compressed bytes come from: fills up to n bytes of dst and returns how many,
  // 0 only at the end of the input.
  using Source = std::function<size_t(uint8_t* dst, size_t n)>;

  // `where` begins every message ("IDX file data/mnist/train-images-idx3-ubyte.gz").
  GzipReader(Source source, std::string where);
  ~GzipReader();
  GzipReader(const GzipReader&) = delete;
  GzipReader& operator=(const GzipReader&) = delete;

  // Decompresses up to n bytes into dst and returns how many arrived: fewer than n only at the
  // end. The end is either the end of the last member, after its CRC-32 and length were checked,
  // or the input running out inside a member (cut_short() then says so). Throws engine::Error,
  // one line beginning with `where`, for corrupt deflate data, a trailer that does not match
  // the data, and bytes after the last member that are not another gzip member.
  size_t read(uint8_t* dst, size_t n);

  // The input ended inside a member: the file was cut short.
  bool cut_short() const { return cut_short_; }

 private:
  bool refill();
  void start_next_member();
  [[noreturn]] void throw_corrupt(int status) const;

  Source source_;
  std::string where_;
  z_stream z_{};
  std::vector<uint8_t> input_;  // compressed bytes read from the source, not yet inflated
  uint64_t fed_ = 0;            // compressed bytes read from the source so far
  bool ended_ = false;
  bool cut_short_ = false;
};

}  // namespace engine::datasets
