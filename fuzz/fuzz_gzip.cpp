// Fuzz target: the gzip layer of the IDX reader, datasets::GzipReader (datasets/gzip_reader.h),
// all in memory: no file is written per input.
//
// What is fuzzed, for every input:
// 1. The input as a gzip file, handed to the reader a few bytes at a time (so that member
//    boundaries and trailers fall across refills) and read in pieces of growing size.
//    Checked: no read returns more than it was asked for; the reader decompresses at most 1032
//    bytes per input byte (deflate's limit, which read_idx relies on to refuse a lying header
//    before allocating); and where zlib's inflate, driven the plain way (all the input at once,
//    one output buffer), decodes the input as exactly one whole member, the reader gives the
//    same bytes and no error.
// 2. The input as data: gzipped by zlib (one member, or two), it must read back exactly; with
//    one bit of its trailer flipped (the CRC-32 or the length) or a stray byte after it, it must
//    be refused; cut one byte short, it must end early (cut_short) with a prefix of the data.
//
// Why: MNIST files come gzipped from downloads; a corrupt, cut or padded .gz must be one clear
// engine::Error, never a wrong array accepted in silence or a decompression without bound. The
// seeds in fuzz/corpus/gzip/ (fuzz/make_corpus.py) hold valid files, files of two members and
// broken ones of each kind. Anything but engine::Error escaping, a sanitizer report, or a broken
// property (abort) is a finding.
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "datasets/gzip_reader.h"

namespace {

using engine::datasets::GzipReader;
using engine::datasets::kMaxDeflateRatio;
using Bytes = std::vector<uint8_t>;

// Output read from one input at most: enough for every seed, small enough to stay fast.
constexpr size_t kMaxOutput = size_t{1} << 20;
// The largest piece one read asks for.
constexpr size_t kMaxPiece = 4096;

// A source over bytes in memory that hands out at most `step` bytes per call.
GzipReader::Source memory_source(const uint8_t* data, size_t size, size_t step) {
  return [data, size, step, pos = size_t{0}](uint8_t* dst, size_t n) mutable {
    const size_t k = std::min({n, step, size - pos});
    if (k > 0) std::memcpy(dst, data + pos, k);
    pos += k;
    return k;
  };
}

struct Outcome {
  bool refused = false;    // engine::Error
  bool cut_short = false;  // the input ended inside a member
  bool at_end = false;     // read to the end (not stopped by `limit`)
  Bytes bytes;             // what was decompressed before the end or the refusal
};

// Reads `data` as a gzip file through GzipReader, up to `limit` bytes, in pieces of 1, 4, 13,
// 40 ... bytes, at most kMaxPiece.
Outcome read_gzip(const Bytes& data, size_t step, size_t limit) {
  Outcome out;
  try {
    GzipReader reader(memory_source(data.data(), data.size(), step), "fuzz input");
    for (size_t piece = 1; out.bytes.size() < limit; piece = std::min(piece * 3 + 1, kMaxPiece)) {
      const size_t at = out.bytes.size();
      const size_t want = std::min(piece, limit - at);
      out.bytes.resize(at + want);
      const size_t got = reader.read(out.bytes.data() + at, want);
      if (got > want) std::abort();  // more than was asked for
      out.bytes.resize(at + got);
      if (got < want) {
        out.at_end = true;
        break;
      }
    }
    out.cut_short = reader.cut_short();
  } catch (const engine::Error&) {
    out.refused = true;
  }
  return out;
}

// zlib's inflate driven the plain way. True, with the bytes in `out`, when `data` is exactly one
// whole gzip member (trailer checked, nothing after it) of at most `limit` bytes.
bool inflate_one_member(const Bytes& data, size_t limit, Bytes& out) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) std::abort();
  out.resize(limit);
  z.next_in = const_cast<Bytef*>(data.data());
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  const int status = inflate(&z, Z_FINISH);
  const bool whole = status == Z_STREAM_END && z.avail_in == 0;
  out.resize(z.total_out);
  inflateEnd(&z);
  return whole;
}

// `data` gzipped by zlib at `level`, as one member.
Bytes gzip(const uint8_t* data, size_t size, int level) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    std::abort();
  Bytes out(deflateBound(&z, static_cast<uLong>(size)));
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Property 1: the input as a gzip file.
void check_as_gzip(const Bytes& input, size_t step) {
  // What deflate can make of this input at most, and one byte more to see whether it does.
  const size_t bound = std::min(kMaxOutput, input.size() * kMaxDeflateRatio);
  const Outcome got = read_gzip(input, step, bound + 1);
  if (got.bytes.size() > input.size() * kMaxDeflateRatio) std::abort();
  const bool accepted = !got.refused && !got.cut_short && got.at_end;
  Bytes expected;
  if (inflate_one_member(input, bound, expected) && (!accepted || got.bytes != expected))
    std::abort();  // zlib decodes one whole member; the reader must agree
}

// Property 2: the input as data, gzipped.
void check_round_trip(const Bytes& data, size_t step) {
  const int level = data.empty() ? 6 : data[0] % 10;
  // Odd sizes: one member of all the data; even sizes: the two halves as two members, as
  // `gzip -c a b` writes them. The reader must give the same data either way.
  const size_t split = data.size() % 2 == 0 ? data.size() / 2 : 0;
  Bytes packed = split > 0 ? gzip(data.data(), split, level) : Bytes();
  const Bytes last = gzip(data.data() + split, data.size() - split, level);
  packed.insert(packed.end(), last.begin(), last.end());

  const Outcome whole = read_gzip(packed, step, data.size() + 1);
  if (whole.refused || whole.cut_short || !whole.at_end || whole.bytes != data) std::abort();

  Bytes flipped = packed;  // one bit of the last member's trailer: CRC-32, then length
  const size_t trailer_byte = data.empty() ? 0 : data.back() % 8;
  flipped[flipped.size() - 8 + trailer_byte] ^= static_cast<uint8_t>(1u << (data.size() % 8));
  if (!read_gzip(flipped, step, data.size() + 1).refused) std::abort();

  Bytes padded = packed;
  padded.push_back(0);  // not the start of another member
  if (!read_gzip(padded, step, data.size() + 1).refused) std::abort();

  const Bytes cut(packed.begin(), packed.end() - 1);
  const Outcome early = read_gzip(cut, step, data.size() + 1);
  if (early.refused || !early.cut_short || early.bytes.size() > data.size() ||
      !std::equal(early.bytes.begin(), early.bytes.end(), data.begin()))
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Bytes input(data, data + size);
  // 1 to 7 bytes per refill, so that every split of a stream gets tried, or 64 KiB, the size a
  // file gives; chosen by the input.
  const unsigned choice = size == 0 ? 0 : data[size / 2] % 8;
  const size_t step = choice == 0 ? size_t{64} << 10 : choice;
  check_as_gzip(input, step);
  check_round_trip(input, step);
  return 0;
}
