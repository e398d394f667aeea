// The gzip layer of the IDX reader (see gzip_reader.h): zlib's inflate over compressed bytes
// pulled from a source as they are needed, member after member.
#include "datasets/gzip_reader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/error.h"

namespace engine::datasets {
namespace {

constexpr size_t kInputChunk = size_t{64} << 10;  // compressed bytes read at a time
// inflate counts output in an unsigned int: hand it at most this much room at a time.
constexpr size_t kMaxPiece = size_t{1} << 30;
// 16 + the largest window: a gzip wrapper only, with its trailer checked (not zlib's wrapper,
// not raw deflate).
constexpr int kGzipWindowBits = 16 + MAX_WBITS;

}  // namespace

bool starts_like_gzip(const uint8_t* data, size_t n) {
  return n >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

GzipReader::GzipReader(Source source, std::string where)
    : source_(std::move(source)), where_(std::move(where)), input_(kInputChunk) {
  const int status = inflateInit2(&z_, kGzipWindowBits);
  ENGINE_CHECK(status == Z_OK, where_, ": cannot start gzip decompression (", zError(status), ")");
}

GzipReader::~GzipReader() { inflateEnd(&z_); }

size_t GzipReader::read(uint8_t* dst, size_t n) {
  size_t total = 0;
  while (total < n && !ended_) {
    z_.next_out = dst + total;
    z_.avail_out = static_cast<uInt>(std::min(n - total, kMaxPiece));
    const uInt room = z_.avail_out;
    const int status = inflate(&z_, Z_NO_FLUSH);
    total += room - z_.avail_out;
    if (status == Z_STREAM_END) {
      start_next_member();
      continue;
    }
    // Z_BUF_ERROR: no progress was possible, which with room left means no input was left.
    if (status != Z_OK && status != Z_BUF_ERROR) throw_corrupt(status);
    // Room left in dst: inflate stopped because it used all its input. Without more, the file
    // ended inside a member.
    if (z_.avail_out > 0 && !refill()) ended_ = cut_short_ = true;
  }
  return total;
}

// Moves the compressed bytes inflate has not used yet to the front of input_ and reads more
// after them; returns whether any arrived.
bool GzipReader::refill() {
  const size_t kept = z_.avail_in;
  if (kept > 0) std::memmove(input_.data(), z_.next_in, kept);
  const size_t got = source_(input_.data() + kept, input_.size() - kept);
  fed_ += got;
  z_.next_in = input_.data();
  z_.avail_in = static_cast<uInt>(kept + got);
  return got > 0;
}

// At the end of a member, whose CRC-32 and length inflate has just checked: the file ends here,
// or another member starts. Anything else is refused (zlib's gzread skipped it in silence).
void GzipReader::start_next_member() {
  while (z_.avail_in < 2 && refill()) {
  }
  if (z_.avail_in == 0) {
    ended_ = true;
    return;
  }
  if (!starts_like_gzip(z_.next_in, z_.avail_in)) {
    const uint64_t at = fed_ - z_.avail_in;  // where the stray bytes start in the file
    uint64_t stray = z_.avail_in;
    for (size_t got; (got = source_(input_.data(), input_.size())) > 0;) stray += got;
    throw Error(detail::concat(where_, ": ", stray, " bytes after the end of the gzip data (from ",
                               "byte ", at, ") that are not another gzip member: trailing garbage"));
  }
  const int status = inflateReset(&z_);
  ENGINE_CHECK(status == Z_OK, where_, ": cannot restart gzip decompression (", zError(status),
               ")");
}

void GzipReader::throw_corrupt(int status) const {
  if (status == Z_MEM_ERROR) throw Error(where_ + ": out of memory while decompressing gzip data");
  const std::string what = z_.msg != nullptr ? z_.msg : zError(status);
  // zlib's words for a trailer that disagrees with the data, said in the trailer's terms.
  if (what == "incorrect data check")
    throw Error(where_ + ": corrupt gzip data (the CRC-32 in the gzip trailer does not match the "
                         "decompressed data)");
  if (what == "incorrect length check")
    throw Error(where_ + ": corrupt gzip data (the length in the gzip trailer does not match the "
                         "decompressed data)");
  throw Error(where_ + ": corrupt gzip data (" + what + ")");
}

}  // namespace engine::datasets
