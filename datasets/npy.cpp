// .npy reader and writer, .npz writer (formats and choices in npy.h). The reader checks the
// header against the file's size before it allocates anything, so a header that lies about its
// shape costs nothing; every failure is one line naming the file.
#include "datasets/npy.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "core/binary_file.h"
#include "core/error.h"
#include "core/logging.h"

namespace engine::datasets {
namespace {

constexpr char kMagic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
// NumPy's reader refuses longer headers too (numpy.lib.format, max_header_size): they cost a
// literal_eval, and no array of a plain dtype needs one. Ours is well under 2 KB at 64 dims.
constexpr uint32_t kMaxHeaderBytes = 10000;
constexpr size_t kMaxDims = 64;
// The largest data section a shape may ask for: far beyond any file, and far from overflow.
constexpr uint64_t kMaxDataBytes = uint64_t{1} << 62;
constexpr size_t kShownHeader = 120;   // header text in a "malformed header" message
constexpr size_t kChunkElements = 1 << 16;  // conversions read this many elements at a time
constexpr size_t kMaxNameLength = 200;      // of an .npz member, without ".npy"
constexpr uint32_t kZipLimit = 0xFFFFFFFFu; // sizes and offsets of a ZIP without ZIP64

// How the elements are stored in the file; the tensor's dtype follows from it.
enum class Stored { F32, F64, I32, I64, U8 };

size_t stored_size(Stored s) {
  switch (s) {
    case Stored::F64:
    case Stored::I64: return 8;
    case Stored::U8: return 1;
    default: return 4;
  }
}

DType tensor_dtype(Stored s) {
  switch (s) {
    case Stored::F32:
    case Stored::F64: return DType::F32;
    case Stored::I32:
    case Stored::I64: return DType::I32;
    default: return DType::U8;
  }
}

std::string hex_bytes(const unsigned char* p, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(p[i]));
    out += (i ? " " : "") + std::string(hex);
  }
  return out;
}

std::string number_text(double v) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

// The shape as Python writes a tuple: (), (3,), (2, 3).
std::string python_tuple(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

uint32_t load_le(const unsigned char* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

// The header dict, parsed by hand: exactly the keys 'descr' (a string), 'fortran_order' (True
// or False) and 'shape' (a tuple of integers), as numpy.lib.format writes and requires them.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  void parse() {
    skip();
    expect('{', "the header does not start with '{'");
    bool have_descr = false, have_order = false, have_shape = false;
    while (true) {
      skip();
      if (peek() == '}') break;
      const std::string key = string("a key");
      skip();
      expect(':', "no ':' after the key '" + printable(key, 20) + "'");
      skip();
      bool* seen = nullptr;
      if (key == "descr") {
        ENGINE_CHECK(peek() != '[', "NumPy file ", path_,
                     ": structured dtype (a list of fields) is not supported; read_npy takes "
                     "arrays of one number type");
        descr = string("the descr");
        seen = &have_descr;
      } else if (key == "fortran_order") {
        const std::string word = identifier();
        if (word != "True" && word != "False") fail("fortran_order is neither True nor False");
        fortran_order = word == "True";
        seen = &have_order;
      } else if (key == "shape") {
        shape_text_start_ = i_;
        tuple();
        shape_text = s_.substr(shape_text_start_, i_ - shape_text_start_);
        seen = &have_shape;
      } else {
        fail("unexpected key '" + printable(key, 20) + "'");
      }
      if (*seen) fail("the key '" + key + "' twice");
      *seen = true;
      skip();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != '}') fail("expected ',' or '}' after the value of '" + key + "'");
    }
    ++i_;  // the '}'
    skip();
    if (i_ != s_.size()) fail("text after the closing '}'");
    if (!have_descr) fail("no 'descr' key");
    if (!have_order) fail("no 'fortran_order' key");
    if (!have_shape) fail("no 'shape' key");
  }

  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> dims;
  bool negative = false;  // a dimension below 0
  bool huge = false;      // a dimension beyond int64
  std::string shape_text;

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("NumPy file " + path_ + ": malformed header (" + what + "): " +
                printable(s_, kShownHeader));
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip() {
    while (i_ < s_.size() && s_[i_] != '\0' && std::strchr(" \t\n\r\f\v", s_[i_]) != nullptr) ++i_;
  }
  void expect(char c, const std::string& what) {
    if (peek() != c || i_ >= s_.size()) fail(what);
    ++i_;
  }
  // A Python string literal in ' or ", without escapes (no descr or key needs one).
  std::string string(const char* what) {
    const char quote = peek();
    if (i_ >= s_.size() || (quote != '\'' && quote != '"')) fail(std::string("expected a string for ") + what);
    const size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != quote) {
      if (s_[i_] == '\\' || s_[i_] == '\n') fail("an escape or a line break inside a string");
      ++i_;
    }
    if (i_ >= s_.size()) fail("an unterminated string");
    return s_.substr(start, i_++ - start);
  }
  std::string identifier() {
    const size_t start = i_;
    while (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) ++i_;
    return s_.substr(start, i_ - start);
  }
  // ( [int {, int} [,]] ): Python's tuple literal; (3) is an int, not a tuple.
  void tuple() {
    expect('(', "the shape is not a tuple");
    skip();
    if (peek() == ')' && i_ < s_.size()) {
      ++i_;
      return;
    }
    while (true) {
      integer();
      if (dims.size() > kMaxDims) fail("more than " + std::to_string(kMaxDims) + " dimensions");
      skip();
      if (peek() == ',') {
        ++i_;
        skip();
        if (peek() == ')') break;
        continue;
      }
      if (peek() != ')') fail("expected ',' or ')' in the shape");
      if (dims.size() == 1) fail("the shape (n) is not a tuple: a 1-d shape is written (n,)");
      break;
    }
    ++i_;  // the ')'
  }
  // A Python int literal, maybe negative, maybe with Python 2's L suffix.
  void integer() {
    bool minus = false;
    if (peek() == '-') {
      minus = true;
      ++i_;
      skip();
    }
    if (!std::isdigit(static_cast<unsigned char>(peek())) || i_ >= s_.size()) {
      fail("a dimension of the shape is not an integer");
    }
    int64_t v = 0;
    for (; i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])); ++i_) {
      const int digit = s_[i_] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        huge = true;
      } else {
        v = v * 10 + digit;
      }
    }
    if (peek() == 'L' || peek() == 'l') ++i_;
    if (minus && v != 0) negative = true;
    dims.push_back(minus ? -v : v);
  }

  const std::string& s_;
  const std::string& path_;
  size_t i_ = 0;
  size_t shape_text_start_ = 0;
};

// What a descr names: one of the stored types we read, or a refusal that names it.
Stored classify(const std::string& descr, const std::string& path) {
  const std::string where = "NumPy file " + path + ": ";
  const std::string shown = "'" + printable(descr, 40) + "'";
  const char order = descr.empty() ? '\0' : descr[0];
  const bool has_order = std::strchr("<>|=", order) != nullptr && order != '\0';
  const std::string type = has_order ? descr.substr(1) : descr;
  ENGINE_CHECK(type.empty() || type[0] != 'O', where, "object arrays (descr ", shown,
               ") are not supported: they hold Python objects, not numbers (convert first, e.g. "
               "a.astype('float32'))");
  Stored stored = Stored::F32;
  bool known = true;
  if (type == "f4") {
    stored = Stored::F32;
  } else if (type == "f8") {
    stored = Stored::F64;
  } else if (type == "i4") {
    stored = Stored::I32;
  } else if (type == "i8") {
    stored = Stored::I64;
  } else if (type == "u1") {
    stored = Stored::U8;
  } else {
    known = false;
  }
  if (known) {
    // A single byte has no byte order; '=' (or none) is the host's, little-endian like every
    // host the engine runs on.
    ENGINE_CHECK(order != '>' || stored == Stored::U8, where, "big-endian data (descr ", shown,
                 ") is not supported: convert it in NumPy first (a.astype('<", type, "'))");
    return stored;
  }
  const char* kind = "an unknown kind";
  switch (type.empty() ? '\0' : type[0]) {
    case 'b': kind = "bool"; break;
    case 'i': kind = "a signed integer"; break;
    case 'u': kind = "an unsigned integer"; break;
    case 'f': kind = "a floating-point number"; break;
    case 'c': kind = "a complex number"; break;
    case 'U': kind = "a unicode string"; break;
    case 'S': case 'a': kind = "a byte string"; break;
    case 'V': kind = "raw bytes (void)"; break;
    case 'M': kind = "a datetime64"; break;
    case 'm': kind = "a timedelta64"; break;
    default: break;
  }
  throw Error(where + "unsupported dtype " + shown + " (" + kind +
              "): read_npy takes float32 ('<f4'), float64 ('<f8'), int32 ('<i4'), int64 ('<i8') "
              "and uint8 ('|u1'); convert in NumPy first, e.g. a.astype('float32')");
}

// Reads exactly n bytes or says the file ended early.
void read_exactly(InputFile& file, void* dst, size_t n) {
  const size_t got = file.read(dst, n);
  ENGINE_CHECK(got == n, file.where(), ": truncated data (", got, " of ", n,
               " bytes read; did the file change while being read?)");
}

// Reads `count` elements of type From and converts each into `out` with `convert`, which checks
// the element's range; chunk by chunk, so a large file is not held twice.
template <typename From, typename To, typename Convert>
void read_converted(InputFile& file, size_t count, To* out, Convert convert) {
  std::vector<From> chunk(std::min(count, kChunkElements));
  for (size_t done = 0; done < count;) {
    const size_t n = std::min(count - done, chunk.size());
    read_exactly(file, chunk.data(), n * sizeof(From));
    for (size_t i = 0; i < n; ++i) out[done + i] = convert(chunk[i], done + i);
    done += n;
  }
}

void put16(std::vector<char>& b, uint32_t v) {
  b.push_back(static_cast<char>(v & 0xff));
  b.push_back(static_cast<char>((v >> 8) & 0xff));
}

void put32(std::vector<char>& b, uint32_t v) {
  put16(b, v & 0xffff);
  put16(b, v >> 16);
}

void append(std::vector<char>& b, const void* data, size_t n) {
  const size_t at = b.size();
  b.resize(at + n);
  if (n > 0) std::memcpy(b.data() + at, data, n);
}

// Why an .npz member name is refused; empty when it is fine.
std::string name_problem(const std::string& name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxNameLength) return "is longer than 200 characters";
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::strchr("_-./", c) == nullptr) {
      return "holds a character other than letters, digits and _ - . /";
    }
  }
  size_t start = 0;
  while (true) {
    const size_t slash = name.find('/', start);
    const std::string part = name.substr(start, slash == std::string::npos ? slash : slash - start);
    if (part.empty()) return "has an empty part (a '/' at the start or end, or '//')";
    if (part == "." || part == "..") return "has a '.' or '..' part";
    if (slash == std::string::npos) return "";
    start = slash + 1;
  }
}

}  // namespace

Tensor read_npy(const std::string& path) {
  InputFile file(path, "NumPy file " + path);
  const std::string where = file.where() + ": ";
  const uint64_t size = file.size();
  ENGINE_CHECK(size > 0, where, "empty file (0 bytes)");

  // Magic, version, header length: 10 bytes in version 1.0, 12 in 2.0 and 3.0.
  unsigned char prefix[12] = {};
  const size_t have = static_cast<size_t>(std::min<uint64_t>(size, sizeof prefix));
  read_exactly(file, prefix, have);
  const size_t magic_seen = std::min(have, sizeof kMagic);
  const bool magic_ok = std::memcmp(prefix, kMagic, magic_seen) == 0;
  if (!magic_ok && have >= 4 && std::memcmp(prefix, "PK", 2) == 0 &&
      (prefix[2] == 3 || prefix[2] == 5)) {
    throw Error(where + "a ZIP archive (an .npz?), not a .npy file: read_npy reads one array; "
                        "unpack the archive, or save each array with np.save");
  }
  ENGINE_CHECK(magic_ok, where, "not a .npy file (bad magic: it starts with ",
               hex_bytes(prefix, magic_seen), "; a .npy file starts with 93 4e 55 4d 50 59, "
               "\"\\x93NUMPY\")");
  ENGINE_CHECK(have >= 8, where, "truncated header: ", size,
               " bytes end before the format version");
  const int major = prefix[6], minor = prefix[7];
  ENGINE_CHECK((major == 1 || major == 2 || major == 3) && minor == 0, where,
               "unsupported .npy format version ", major, ".", minor,
               " (this reader knows 1.0, 2.0 and 3.0)");
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t header_start = 8 + length_bytes;
  ENGINE_CHECK(have >= header_start, where, "truncated header: ", size,
               " bytes end inside the header-length field");
  const uint32_t header_length = load_le(prefix + 8, length_bytes);
  ENGINE_CHECK(header_length <= kMaxHeaderBytes, where, "header of ", header_length,
               " bytes is too long (at most ", kMaxHeaderBytes,
               ", as NumPy's own reader allows by default)");
  const uint64_t data_start = header_start + uint64_t{header_length};
  ENGINE_CHECK(data_start <= size, where, "truncated header: it is ", header_length,
               " bytes long but the file ends ", size - header_start, " bytes into it");

  std::string header(header_length, '\0');
  const size_t already = have - header_start;  // header bytes read with the prefix (v1.0: 2)
  std::memcpy(header.data(), prefix + header_start, std::min<size_t>(already, header_length));
  if (header_length > already) {
    read_exactly(file, header.data() + already, header_length - already);
  } else if (already > header_length) {
    file.seek(data_start);  // the prefix read ran into the data: go back to where it starts
  }

  HeaderParser parser(header, path);
  parser.parse();
  const Stored stored = classify(parser.descr, path);
  ENGINE_CHECK(!parser.fortran_order, where,
               "Fortran-order array (fortran_order: True) is not supported: save a C-order copy "
               "(np.save(path, np.ascontiguousarray(a)))");
  const std::string shape_text = printable(parser.shape_text, 80);
  ENGINE_CHECK(!parser.negative, where, "negative extent in shape ", shape_text);
  ENGINE_CHECK(!parser.huge, where, "absurd shape ", shape_text, ": an extent beyond 2^63");
  uint64_t nonzero = 1;  // the product of the non-zero extents, kept far from overflow
  for (int64_t d : parser.dims) {
    if (d == 0) continue;
    ENGINE_CHECK(static_cast<uint64_t>(d) <= kMaxDataBytes / 8 / nonzero, where, "absurd shape ",
                 shape_text, ": more than 2^59 elements");
    nonzero *= static_cast<uint64_t>(d);
  }
  const Shape shape(parser.dims.begin(), parser.dims.end());
  const auto count = static_cast<uint64_t>(numel(shape));
  const uint64_t expected = count * stored_size(stored);
  const uint64_t available = size - data_start;
  const std::string what = "shape " + shape_text + " of '" + printable(parser.descr, 40) +
                           "' needs " + std::to_string(expected) + " bytes after the " +
                           std::to_string(data_start) + "-byte header";
  ENGINE_CHECK(available >= expected, where, "truncated data: ", what, ", the file has ",
               available);
  ENGINE_CHECK(available == expected, where, available - expected,
               " bytes after the data: ", what, ", the file has ", available,
               " (the shape disagrees with the file size)");

  Tensor t = Tensor::empty(shape, tensor_dtype(stored), Device::cpu());
  const auto n = static_cast<size_t>(count);
  switch (stored) {
    case Stored::F32:
    case Stored::I32:
    case Stored::U8:
      read_exactly(file, t.raw_data(), static_cast<size_t>(expected));
      break;
    case Stored::F64:
      read_converted<double>(file, n, t.data<float>(), [&](double v, size_t i) {
        ENGINE_CHECK(!std::isfinite(v) || std::fabs(v) <= std::numeric_limits<float>::max(),
                     where, "element ", i, " (C order) is ", number_text(v),
                     ", beyond float32's range (about 3.4e38); float64 data is read as float32");
        return static_cast<float>(v);
      });
      break;
    case Stored::I64:
      read_converted<int64_t>(file, n, t.data<int32_t>(), [&](int64_t v, size_t i) {
        ENGINE_CHECK(v >= std::numeric_limits<int32_t>::min() &&
                         v <= std::numeric_limits<int32_t>::max(),
                     where, "element ", i, " (C order) is ", v,
                     ", outside int32's range; int64 data is read as int32, the engine's integers");
        return static_cast<int32_t>(v);
      });
      break;
  }
  return t;
}

std::vector<char> encode_npy(const Tensor& tensor) {
  ENGINE_CHECK(tensor.defined(), "encode_npy: the tensor is undefined (it holds no data)");
  const Tensor t = tensor.device().is_cpu() ? tensor : tensor.to(Device::cpu());
  const char* descr = t.dtype() == DType::F32 ? "<f4" : t.dtype() == DType::I32 ? "<i4" : "|u1";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + python_tuple(t.shape()) + ", }";
  // Spaces, then a '\n', up to the next multiple of 64 (magic 6 + version 2 + length 2).
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  ENGINE_CHECK(header.size() <= 0xFFFF, "encode_npy: a header of ", header.size(),
               " bytes does not fit format version 1.0");

  std::vector<char> out;
  out.reserve(10 + header.size() + t.nbytes());
  append(out, kMagic, sizeof kMagic);
  out.push_back(1);  // version 1.0
  out.push_back(0);
  put16(out, static_cast<uint32_t>(header.size()));
  append(out, header.data(), header.size());
  append(out, t.raw_data(), t.nbytes());
  return out;
}

void write_npy(const std::string& path, const Tensor& t) {
  ENGINE_CHECK(t.defined(), "cannot write NumPy file ", path, ": the tensor is undefined");
  const std::vector<char> bytes = encode_npy(t);
  write_file_atomically(path, bytes.data(), bytes.size());
}

void write_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& arrays) {
  const std::string where = "cannot write NumPy archive " + path + ": ";
  ENGINE_CHECK(arrays.size() < 0xFFFF, where, arrays.size(),
               " arrays; a ZIP without ZIP64 holds at most 65,534");
  struct Member {
    std::string file_name;
    uint32_t crc, size, offset;
  };
  std::vector<Member> members;
  std::set<std::string> names;
  std::vector<char> zip;
  // ZIP's fields (APPNOTE.TXT 4.3.7, 4.3.12, 4.3.16), every one little-endian. Entries are
  // stored (method 0), dated 1980-01-01 00:00, so the same arrays give the same bytes.
  constexpr uint32_t kVersion = 20;  // 2.0: the oldest that reads a plain stored entry
  constexpr uint32_t kDosDate = (0 << 9) | (1 << 5) | 1;
  for (const auto& [name, tensor] : arrays) {
    const std::string problem = name_problem(name);
    ENGINE_CHECK(problem.empty(), where, "array name '", printable(name, 60), "' ", problem);
    ENGINE_CHECK(names.insert(name).second, where, "array name '", name, "' is used twice");
    ENGINE_CHECK(tensor.defined(), where, "array '", name, "' is undefined (it holds no data)");
    const std::vector<char> npy = encode_npy(tensor);
    // 512: room for this member's headers (30 + 46 bytes and its name, twice) and the end record.
    ENGINE_CHECK(npy.size() < kZipLimit - 512 && zip.size() < kZipLimit - 512 - npy.size(), where,
                 "array '", name, "' takes the archive past 4 GiB, and this writer makes no "
                 "ZIP64: write the big arrays with write_npy");
    Member m{name + ".npy", crc32_of(npy.data(), npy.size()), static_cast<uint32_t>(npy.size()),
             static_cast<uint32_t>(zip.size())};
    put32(zip, 0x04034b50);  // local file header
    put16(zip, kVersion);
    put16(zip, 0);  // flags
    put16(zip, 0);  // method: stored
    put16(zip, 0);  // time
    put16(zip, kDosDate);
    put32(zip, m.crc);
    put32(zip, m.size);  // compressed size
    put32(zip, m.size);  // uncompressed size
    put16(zip, static_cast<uint32_t>(m.file_name.size()));
    put16(zip, 0);  // extra field length
    append(zip, m.file_name.data(), m.file_name.size());
    append(zip, npy.data(), npy.size());
    members.push_back(std::move(m));
  }
  const auto directory_start = static_cast<uint32_t>(zip.size());
  for (const Member& m : members) {
    put32(zip, 0x02014b50);  // central directory header
    put16(zip, kVersion);    // made by (MS-DOS attributes)
    put16(zip, kVersion);    // needed to extract
    put16(zip, 0);
    put16(zip, 0);
    put16(zip, 0);
    put16(zip, kDosDate);
    put32(zip, m.crc);
    put32(zip, m.size);
    put32(zip, m.size);
    put16(zip, static_cast<uint32_t>(m.file_name.size()));
    put16(zip, 0);  // extra field length
    put16(zip, 0);  // comment length
    put16(zip, 0);  // disk number
    put16(zip, 0);  // internal attributes
    put32(zip, 0);  // external attributes
    put32(zip, m.offset);
    append(zip, m.file_name.data(), m.file_name.size());
  }
  ENGINE_CHECK(zip.size() < kZipLimit - 22, where,
               "the archive passes 4 GiB, and this writer makes no ZIP64");
  const auto directory_size = static_cast<uint32_t>(zip.size() - directory_start);
  put32(zip, 0x06054b50);  // end of central directory
  put16(zip, 0);           // this disk
  put16(zip, 0);           // the disk the directory starts on
  put16(zip, static_cast<uint32_t>(members.size()));
  put16(zip, static_cast<uint32_t>(members.size()));
  put32(zip, directory_size);
  put32(zip, directory_start);
  put16(zip, 0);  // comment length
  write_file_atomically(path, zip.data(), zip.size());
}

}  // namespace engine::datasets
