// NumPy files (datasets/npy.h) on bytes the tests write themselves: the writer's exact bytes,
// round trips of every dtype, the reader's conversions (float64 -> float32, int64 -> int32),
// every refused file with its exact one-line message, and the .npz archive taken apart by hand
// (ZIP signatures, CRC-32s, member bytes). tests/test_npy_numpy.sh checks both against NumPy.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "datasets/npy.h"
#include "file_fixtures.h"

using engine::DType;
using engine::Shape;
using engine::Tensor;
using engine::datasets::encode_npy;
using engine::datasets::read_npy;
using engine::datasets::write_npy;
using engine::datasets::write_npz;
using engine::test::Bytes;
using engine::test::error_of;
using engine::test::read_bytes;
using engine::test::TempDir;
using engine::test::write_bytes;

namespace {

template <typename T>
Bytes raw(const std::vector<T>& values) {
  Bytes out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// A .npy file: magic, version major.0, the header length (2 bytes in 1.0, 4 otherwise), the
// dict padded with spaces and a '\n' to a multiple of 64 (unless `pad` is false), the data.
Bytes npy(const std::string& dict, const Bytes& data, int major = 1, bool pad = true) {
  const size_t length_bytes = major == 1 ? 2 : 4;
  std::string header = dict;
  if (pad) {
    const size_t unpadded = 8 + length_bytes + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header += '\n';
  }
  Bytes out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  for (size_t i = 0; i < length_bytes; ++i) out.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

std::string write_npy_bytes(const TempDir& dir, const std::string& name, const Bytes& bytes) {
  const std::string path = dir.file(name);
  write_bytes(path, bytes);
  return path;
}

// read_npy must refuse `bytes` with exactly "NumPy file <path>: <message>".
void check_refused(const Bytes& bytes, const std::string& message) {
  TempDir dir;
  const std::string path = write_npy_bytes(dir, "bad.npy", bytes);
  CHECK(error_of([&] { read_npy(path); }) == "NumPy file " + path + ": " + message);
}

uint32_t le32(const Bytes& b, size_t at) {
  return uint32_t{b.at(at)} | uint32_t{b.at(at + 1)} << 8 | uint32_t{b.at(at + 2)} << 16 |
         uint32_t{b.at(at + 3)} << 24;
}
uint32_t le16(const Bytes& b, size_t at) { return uint32_t{b.at(at)} | uint32_t{b.at(at + 1)} << 8; }

}  // namespace

TEST_CASE("npy: the writer's bytes are NumPy's: version 1.0, a padded dict, the data at 64") {
  TempDir dir;
  const std::string path = dir.file("a.npy");
  const Tensor t = Tensor::from_vector({1.5f, -2.0f, 3.25f, 0.0f, 5.0f, 6.0f}, {2, 3});
  write_npy(path, t);
  const Bytes on_disk = read_bytes(path);
  const Bytes expected = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                             raw(t.to_vector()));
  CHECK(on_disk == expected);
  CHECK(on_disk.size() == 128 + 24);
  CHECK(on_disk[127] == '\n');
  const std::vector<char> encoded = encode_npy(t);
  CHECK(Bytes(encoded.begin(), encoded.end()) == on_disk);
  CHECK(!std::filesystem::exists(path + ".tmp"));  // written atomically, nothing left over

  const Tensor back = read_npy(path);
  CHECK(back.shape() == Shape{2, 3});
  CHECK(back.dtype() == DType::F32);
  CHECK(back.to_vector() == t.to_vector());
}

TEST_CASE("npy: int32 and uint8 round-trip; 1-d, 0-d and empty shapes are written as Python tuples") {
  TempDir dir;
  const Tensor ints = Tensor::from_ints({-7, 0, 2147483647, -2147483647 - 1}, {4});
  write_npy(dir.file("i.npy"), ints);
  CHECK(read_bytes(dir.file("i.npy")) ==
        npy("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", raw(ints.to_int_vector())));
  const Tensor ints_back = read_npy(dir.file("i.npy"));
  CHECK(ints_back.dtype() == DType::I32);
  CHECK(ints_back.to_int_vector() == ints.to_int_vector());

  const Tensor bytes = Tensor::from_bytes({0, 1, 128, 255, 7, 9}, {1, 2, 3});
  write_npy(dir.file("u.npy"), bytes);
  CHECK(read_bytes(dir.file("u.npy")) ==
        npy("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 2, 3), }", raw(bytes.to_bytes())));
  const Tensor bytes_back = read_npy(dir.file("u.npy"));
  CHECK(bytes_back.dtype() == DType::U8);
  CHECK(bytes_back.shape() == Shape{1, 2, 3});
  CHECK(bytes_back.to_bytes() == bytes.to_bytes());

  const Tensor scalar = Tensor::from_vector({42.5f}, {});
  write_npy(dir.file("s.npy"), scalar);
  CHECK(read_bytes(dir.file("s.npy")) ==
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", raw(std::vector<float>{42.5f})));
  const Tensor scalar_back = read_npy(dir.file("s.npy"));
  CHECK(scalar_back.shape() == Shape{});
  CHECK(scalar_back.item() == 42.5f);

  const Tensor empty = Tensor::empty({0, 3}, DType::F32);
  write_npy(dir.file("e.npy"), empty);
  CHECK(read_bytes(dir.file("e.npy")) ==
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", {}));
  const Tensor empty_back = read_npy(dir.file("e.npy"));
  CHECK(empty_back.shape() == Shape{0, 3});
  CHECK(empty_back.numel() == 0);
}

TEST_CASE("npy: float64 is read as float32 and int64 as int32, range-checked") {
  TempDir dir;
  const std::vector<double> doubles = {0.1, -2.5, 1e30, -3.4e38, 1e-50};
  const Tensor f = read_npy(write_npy_bytes(dir, "f8.npy", npy(dict("<f8", "(5,)"), raw(doubles))));
  CHECK(f.dtype() == DType::F32);
  std::vector<float> want;
  for (double d : doubles) want.push_back(static_cast<float>(d));
  CHECK(f.to_vector() == want);
  const std::vector<double> special = {std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::quiet_NaN()};
  const std::vector<float> s =
      read_npy(write_npy_bytes(dir, "inf.npy", npy(dict("<f8", "(2,)"), raw(special)))).to_vector();
  CHECK(s[0] == std::numeric_limits<float>::infinity());
  CHECK(s[1] != s[1]);  // NaN stays NaN

  const std::vector<int64_t> longs = {0, -1, 2147483647, -2147483648LL, 12345678};
  const Tensor i = read_npy(write_npy_bytes(dir, "i8.npy", npy(dict("<i8", "(5, 1)"), raw(longs))));
  CHECK(i.dtype() == DType::I32);
  CHECK(i.shape() == Shape{5, 1});
  CHECK(i.to_int_vector() == std::vector<int32_t>{0, -1, 2147483647, -2147483647 - 1, 12345678});

  // More elements than one conversion chunk (65,536), so the chunks join up.
  std::vector<int64_t> many(70000);
  for (size_t k = 0; k < many.size(); ++k) many[k] = static_cast<int64_t>(k) - 35000;
  const std::vector<int32_t> got =
      read_npy(write_npy_bytes(dir, "many.npy", npy(dict("<i8", "(70000,)"), raw(many)))).to_int_vector();
  CHECK(got.front() == -35000);
  CHECK(got[65536] == 30536);
  CHECK(got.back() == 34999);

  const std::string big = write_npy_bytes(
      dir, "big.npy", npy(dict("<f8", "(2, 2)"), raw(std::vector<double>{1, 2, 3, 1e39})));
  CHECK(error_of([&] { read_npy(big); }) ==
        "NumPy file " + big + ": element 3 (C order) is 1e+39, beyond float32's range (about "
                              "3.4e38); float64 data is read as float32");
  const std::string wide = write_npy_bytes(
      dir, "wide.npy", npy(dict("<i8", "(3,)"), raw(std::vector<int64_t>{1, 3000000000LL, 2})));
  CHECK(error_of([&] { read_npy(wide); }) ==
        "NumPy file " + wide + ": element 1 (C order) is 3000000000, outside int32's range; int64 "
                               "data is read as int32, the engine's integers");
}

TEST_CASE("npy: headers NumPy may write: versions 2.0 and 3.0, other quotes, orders, spacing") {
  TempDir dir;
  const Bytes four = raw(std::vector<float>{1, 2, 3, 4});
  const std::vector<Bytes> variants = {
      npy(dict("<f4", "(2, 2)"), four, 2),
      npy(dict("<f4", "(2, 2)"), four, 3),
      npy("{\"shape\": (2,2), \"fortran_order\": False, \"descr\": \"<f4\"}", four),
      npy("  {'descr':'=f4','fortran_order':False,'shape':(2L, 2L,)}\n", four, 1, false),
      npy("{'descr': '<f4', 'fortran_order': False, 'shape': (\n 2 ,\t2 ) ,}", four),
      npy("{'descr': 'f4', 'fortran_order': False, 'shape': (2, 2), }", four),
  };
  for (size_t k = 0; k < variants.size(); ++k) {
    CAPTURE(k);
    const Tensor t = read_npy(write_npy_bytes(dir, "v" + std::to_string(k) + ".npy", variants[k]));
    CHECK(t.shape() == Shape{2, 2});
    CHECK(t.to_vector() == std::vector<float>{1, 2, 3, 4});
  }
  // Bytes have no byte order: '|u1', '<u1' and '>u1' are the same.
  for (const char* descr : {"|u1", "<u1", ">u1"}) {
    const Tensor t = read_npy(write_npy_bytes(dir, "u.npy", npy(dict(descr, "(3,)"), {1, 2, 3})));
    CHECK(t.to_bytes() == std::vector<uint8_t>{1, 2, 3});
  }
}

TEST_CASE("npy: a missing file, a directory, an empty file, bad magic, a ZIP, a cut prefix") {
  TempDir dir;
  const std::string missing = dir.file("missing.npy");
  CHECK(error_of([&] { read_npy(missing); }) == "NumPy file " + missing + ": no such file");
  CHECK(error_of([&] { read_npy(dir.str()); }) ==
        "NumPy file " + dir.str() + ": is a directory, not a file");
  check_refused({}, "empty file (0 bytes)");
  check_refused({'x', ',', 'y', '\n', '1', ',', '2', '\n'},
                "not a .npy file (bad magic: it starts with 78 2c 79 0a 31 2c; a .npy file starts "
                "with 93 4e 55 4d 50 59, \"\\x93NUMPY\")");
  check_refused({0x93, 'N', 'U'}, "truncated header: 3 bytes end before the format version");
  check_refused({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0x40},
                "truncated header: 9 bytes end inside the header-length field");
  check_refused({'P', 'K', 3, 4, 20, 0, 0, 0},
                "a ZIP archive (an .npz?), not a .npy file: read_npy reads one array; unpack the "
                "archive, or save each array with np.save");
}

TEST_CASE("npy: versions, header lengths and malformed headers") {
  const Bytes data = raw(std::vector<float>{1, 2});
  Bytes v4 = npy(dict("<f4", "(2,)"), data);
  v4[6] = 4;
  check_refused(v4, "unsupported .npy format version 4.0 (this reader knows 1.0, 2.0 and 3.0)");
  Bytes v11 = npy(dict("<f4", "(2,)"), data);
  v11[7] = 1;
  check_refused(v11, "unsupported .npy format version 1.1 (this reader knows 1.0, 2.0 and 3.0)");

  check_refused(npy(dict("<f4", "(2,)") + std::string(10000, ' '), data, 2),
                "header of 10100 bytes is too long (at most 10000, as NumPy's own reader allows "
                "by default)");
  Bytes cut = npy(dict("<f4", "(2,)"), {});
  cut.resize(40);
  check_refused(cut, "truncated header: it is 118 bytes long but the file ends 30 bytes into it");

  const auto malformed = [&](const std::string& header, const std::string& why) {
    check_refused(npy(header, data, 1, false), "malformed header (" + why + "): " + header);
  };
  malformed("[1, 2]", "the header does not start with '{'");
  malformed("{'descr': '<f4', 'fortran_order': False}", "no 'shape' key");
  malformed("{'descr': '<f4', 'shape': (2,)}", "no 'fortran_order' key");
  malformed("{'fortran_order': False, 'shape': (2,)}", "no 'descr' key");
  malformed("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
            "unexpected key 'extra'");
  malformed("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
            "the key 'descr' twice");
  malformed("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}",
            "fortran_order is neither True nor False");
  malformed("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}",
            "the shape (n) is not a tuple: a 1-d shape is written (n,)");
  malformed("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", "the shape is not a tuple");
  malformed("{'descr': '<f4', 'fortran_order': False, 'shape': (two,)}",
            "a dimension of the shape is not an integer");
  malformed("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) 'x'}",
            "expected ',' or '}' after the value of 'shape'");
  malformed("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x",
            "text after the closing '}'");
  malformed("{'descr': '<f\\x34', 'fortran_order': False, 'shape': (2,)}",
            "an escape or a line break inside a string");
  malformed("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}",
            "expected ',' or '}' after the value of 'descr'");
  malformed("{'descr' '<f4'}", "no ':' after the key 'descr'");
  malformed("{descr: '<f4'}", "expected a string for a key");
  malformed("{'descr': '<f4", "an unterminated string");
  malformed("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", "expected ',' or ')' in the shape");
  // The message shows the header as one line, whatever it holds.
  check_refused(npy("{'descr':\x01'<f4'}\n", data, 1, false),
                "malformed header (expected a string for the descr): {'descr':\\x01'<f4'}\\n");
}

TEST_CASE("npy: Fortran order, object arrays, other dtypes and big-endian data are refused") {
  const Bytes data = raw(std::vector<float>{1, 2, 3, 4});
  check_refused(npy(dict("<f4", "(2, 2)", true), data),
                "Fortran-order array (fortran_order: True) is not supported: save a C-order copy "
                "(np.save(path, np.ascontiguousarray(a)))");
  check_refused(npy(dict("|O", "(2,)"), raw(std::vector<uint64_t>{1, 2})),
                "object arrays (descr '|O') are not supported: they hold Python objects, not "
                "numbers (convert first, e.g. a.astype('float32'))");
  check_refused(npy("{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (2,), }", data),
                "structured dtype (a list of fields) is not supported; read_npy takes arrays of "
                "one number type");
  const std::string takes =
      "read_npy takes float32 ('<f4'), float64 ('<f8'), int32 ('<i4'), int64 ('<i8') and uint8 "
      "('|u1'); convert in NumPy first, e.g. a.astype('float32')";
  check_refused(npy(dict("<c8", "(2,)"), data), "unsupported dtype '<c8' (a complex number): " + takes);
  check_refused(npy(dict("<i2", "(2,)"), data), "unsupported dtype '<i2' (a signed integer): " + takes);
  check_refused(npy(dict("<u4", "(2,)"), data), "unsupported dtype '<u4' (an unsigned integer): " + takes);
  check_refused(npy(dict("<f2", "(2,)"), data), "unsupported dtype '<f2' (a floating-point number): " + takes);
  check_refused(npy(dict("|b1", "(4,)"), data), "unsupported dtype '|b1' (bool): " + takes);
  check_refused(npy(dict("<U3", "(2,)"), data), "unsupported dtype '<U3' (a unicode string): " + takes);
  check_refused(npy(dict("", "(2,)"), data), "unsupported dtype '' (an unknown kind): " + takes);
  check_refused(npy(dict(">f4", "(2,)"), data),
                "big-endian data (descr '>f4') is not supported: convert it in NumPy first "
                "(a.astype('<f4'))");
  check_refused(npy(dict(">i8", "(2,)"), data),
                "big-endian data (descr '>i8') is not supported: convert it in NumPy first "
                "(a.astype('<i8'))");
}

TEST_CASE("npy: negative and absurd shapes, truncated data, trailing bytes") {
  const Bytes data = raw(std::vector<float>{1, 2, 3, 4, 5, 6});
  check_refused(npy(dict("<f4", "(2, -3)"), data), "negative extent in shape (2, -3)");
  check_refused(npy(dict("<f4", "(99999999999999999999,)"), data),
                "absurd shape (99999999999999999999,): an extent beyond 2^63");
  check_refused(npy(dict("<f4", "(4294967296, 4294967296)"), data),
                "absurd shape (4294967296, 4294967296): more than 2^59 elements");
  // A zero extent makes the rest harmless: no elements, whatever the other extents.
  TempDir dir;
  const Tensor none = read_npy(write_npy_bytes(dir, "z.npy", npy(dict("<f4", "(0, 4294967296)"), {})));
  CHECK(none.numel() == 0);
  check_refused(npy(dict("<f4", "(9223372036854775807, 0, 9223372036854775807)"), {}),
                "absurd shape (9223372036854775807, 0, 9223372036854775807): more than 2^59 elements");

  check_refused(npy(dict("<f4", "(2, 4)"), data),
                "truncated data: shape (2, 4) of '<f4' needs 32 bytes after the 128-byte header, "
                "the file has 24");
  check_refused(npy(dict("<f8", "(100000000, 1000000000)"), data),
                "truncated data: shape (100000000, 1000000000) of '<f8' needs 800000000000000000 "
                "bytes after the 128-byte header, the file has 24");
  check_refused(npy(dict("<f4", "(5,)"), data),
                "4 bytes after the data: shape (5,) of '<f4' needs 20 bytes after the 128-byte "
                "header, the file has 24 (the shape disagrees with the file size)");
  check_refused(npy(dict("<f4", "()"), data),
                "20 bytes after the data: shape () of '<f4' needs 4 bytes after the 128-byte "
                "header, the file has 24 (the shape disagrees with the file size)");
}

TEST_CASE("npy: writing refuses an undefined tensor and a path it cannot write") {
  TempDir dir;
  const std::string path = dir.file("u.npy");
  CHECK(error_of([&] { write_npy(path, Tensor()); }) ==
        "cannot write NumPy file " + path + ": the tensor is undefined");
  const std::string nowhere = dir.file("no/such/dir/x.npy");
  CHECK(error_of([&] { write_npy(nowhere, Tensor::from_vector({1}, {1})); }) ==
        nowhere + ": cannot open for writing (No such file or directory)");
}

TEST_CASE("npz: a stored ZIP of name.npy members, each the .npy bytes, with CRC-32s") {
  TempDir dir;
  const std::string path = dir.file("w.npz");
  const Tensor kernel = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor labels = Tensor::from_ints({3, 1, 4}, {3});
  write_npz(path, {{"dense/kernel", kernel}, {"labels", labels}});
  CHECK(!std::filesystem::exists(path + ".tmp"));
  const Bytes zip = read_bytes(path);

  // Walk the local headers, then check the central directory and its end record against them.
  const std::vector<std::pair<std::string, Tensor>> want = {{"dense/kernel.npy", kernel},
                                                            {"labels.npy", labels}};
  size_t at = 0;
  std::vector<size_t> offsets;
  for (const auto& member_of_want : want) {
    const std::string& name = member_of_want.first;  // not a structured binding: CAPTURE's
    const Tensor& tensor = member_of_want.second;     // lambda cannot take one under Clang
    CAPTURE(name);
    offsets.push_back(at);
    const std::vector<char> encoded = encode_npy(tensor);
    const Bytes member(encoded.begin(), encoded.end());
    CHECK(le32(zip, at) == 0x04034b50);
    CHECK(le16(zip, at + 8) == 0);  // stored
    const uint32_t crc = le32(zip, at + 14);
    CHECK(crc == crc32(0, member.data(), static_cast<uInt>(member.size())));
    CHECK(le32(zip, at + 18) == member.size());
    CHECK(le32(zip, at + 22) == member.size());
    const uint32_t name_length = le16(zip, at + 26);
    CHECK(le16(zip, at + 28) == 0);
    CHECK(std::string(zip.begin() + static_cast<long>(at) + 30,
                      zip.begin() + static_cast<long>(at + 30 + name_length)) == name);
    at += 30 + name_length;
    CHECK(Bytes(zip.begin() + static_cast<long>(at),
                zip.begin() + static_cast<long>(at + member.size())) == member);
    at += member.size();
  }
  const size_t directory = at;
  for (size_t k = 0; k < want.size(); ++k) {
    CHECK(le32(zip, at) == 0x02014b50);
    CHECK(le32(zip, at + 42) == offsets[k]);
    const uint32_t name_length = le16(zip, at + 28);
    CHECK(std::string(zip.begin() + static_cast<long>(at) + 46,
                      zip.begin() + static_cast<long>(at + 46 + name_length)) == want[k].first);
    at += 46 + name_length;
  }
  REQUIRE(zip.size() == at + 22);
  CHECK(le32(zip, at) == 0x06054b50);
  CHECK(le16(zip, at + 8) == 2);
  CHECK(le16(zip, at + 10) == 2);
  CHECK(le32(zip, at + 12) == at - directory);
  CHECK(le32(zip, at + 16) == directory);

  // The same arrays give the same bytes (fixed dates), and an empty archive is its end record.
  write_npz(dir.file("again.npz"), {{"dense/kernel", kernel}, {"labels", labels}});
  CHECK(read_bytes(dir.file("again.npz")) == zip);
  write_npz(dir.file("empty.npz"), {});
  CHECK(read_bytes(dir.file("empty.npz")) ==
        Bytes{'P', 'K', 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("npz: bad names, a name used twice and an undefined tensor are refused by name") {
  TempDir dir;
  const std::string path = dir.file("w.npz");
  const Tensor t = Tensor::from_vector({1}, {1});
  const auto refused = [&](const std::vector<std::pair<std::string, Tensor>>& arrays,
                           const std::string& message) {
    CHECK(error_of([&] { write_npz(path, arrays); }) ==
          "cannot write NumPy archive " + path + ": " + message);
  };
  refused({{"", t}}, "array name '' is empty");
  refused({{std::string(201, 'a'), t}},
          "array name '" + std::string(60, 'a') + "...' is longer than 200 characters");
  refused({{"a b", t}}, "array name 'a b' holds a character other than letters, digits and _ - . /");
  refused({{"a\nb", t}},
          "array name 'a\\nb' holds a character other than letters, digits and _ - . /");
  refused({{"/abs", t}}, "array name '/abs' has an empty part (a '/' at the start or end, or '//')");
  refused({{"dir/", t}}, "array name 'dir/' has an empty part (a '/' at the start or end, or '//')");
  refused({{"a//b", t}}, "array name 'a//b' has an empty part (a '/' at the start or end, or '//')");
  refused({{"../up", t}}, "array name '../up' has a '.' or '..' part");
  refused({{"a/./b", t}}, "array name 'a/./b' has a '.' or '..' part");
  refused({{"w", t}, {"w", t}}, "array name 'w' is used twice");
  refused({{"w", Tensor()}}, "array 'w' is undefined (it holds no data)");
  CHECK(!std::filesystem::exists(path));
}
