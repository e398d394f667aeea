// IDX reader/writer and the MNIST-family loader, on files the tests write themselves:
// good files must round-trip; every kind of broken file must give one clear line that
// names the file and the problem, never a crash or a silent success.
#include <doctest/doctest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/error.h"
#include "datasets/idx.h"
#include "datasets/mnist.h"
#include "file_fixtures.h"
#include "special_files.h"

namespace fs = std::filesystem;
using engine::datasets::DigitsData;
using engine::datasets::IdxArray;
using engine::datasets::LabeledImages;
using engine::datasets::load_digits;
using engine::datasets::make_synthetic_images;
using engine::datasets::read_idx;
using engine::datasets::write_idx;
using engine::test::Bytes;
using engine::test::check_message;
using engine::test::error_of;
using engine::test::read_bytes;
using engine::test::TempDir;
using engine::test::write_bytes;

namespace {

// An IDX header: 0, 0, type, ndims, then big-endian sizes.
Bytes header(uint8_t type, std::initializer_list<uint32_t> dims) {
  Bytes h = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) h.push_back(static_cast<uint8_t>(d >> shift));
  return h;
}

Bytes concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes pattern(size_t n, unsigned mul = 37, unsigned add = 11) {
  Bytes data(n);
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<uint8_t>((i * mul + add) % 256);
  return data;
}

void check_read_fails(const std::string& path, std::initializer_list<std::string> parts) {
  const std::string message = error_of([&] { read_idx(path); });
  check_message(message, {path});
  check_message(message, parts);
}

// One gzip member holding `raw`, made in memory with zlib (as gzip(1) would write it).
Bytes gzipped(const Bytes& raw) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                       Z_DEFAULT_STRATEGY) == Z_OK);
  Bytes out(deflateBound(&z, static_cast<uLong>(raw.size())));
  z.next_in = const_cast<Bytef*>(raw.data());
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

TEST_CASE("IDX: a raw file round-trips, with the exact bytes of the format") {
  TempDir dir;
  const std::string path = dir.file("images-idx3-ubyte");
  IdxArray a;
  a.dims = {3, 5, 7};
  a.data = pattern(3 * 5 * 7);
  write_idx(path, a);

  // The bytes on disk: magic 0 0 8 3, sizes big-endian, then the data unchanged.
  const Bytes on_disk = read_bytes(path);
  CHECK(on_disk == concat(header(0x08, {3, 5, 7}), a.data));

  const IdxArray b = read_idx(path);
  CHECK(b.dims == a.dims);
  CHECK(b.data == a.data);
}

TEST_CASE("IDX: a .gz file is gzip-compressed and round-trips") {
  TempDir dir;
  for (const std::vector<int64_t>& dims :
       std::vector<std::vector<int64_t>>{{1000}, {4, 28, 28}, {2, 3, 4, 5}, {300, 0, 28}}) {
    CAPTURE(dims.size());
    const std::string path = dir.file("array.gz");
    IdxArray a;
    a.dims = dims;
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    a.data = pattern(n, 13, 5);
    write_idx(path, a);

    const Bytes on_disk = read_bytes(path);
    REQUIRE(on_disk.size() >= 2);
    CHECK(on_disk[0] == 0x1f);  // the gzip magic, so the file really is compressed
    CHECK(on_disk[1] == 0x8b);

    const IdxArray b = read_idx(path);
    CHECK(b.dims == a.dims);
    CHECK(b.data == a.data);
  }
}

TEST_CASE("IDX: the big-endian sizes are decoded correctly for sizes above 255") {
  TempDir dir;
  const std::string path = dir.file("labels-idx1-ubyte");
  const Bytes data = pattern(70000);
  write_bytes(path, concat(header(0x08, {70000}), data));  // 70000 = 0x00011170
  const IdxArray a = read_idx(path);
  REQUIRE(a.dims.size() == 1);
  CHECK(a.dims[0] == 70000);
  CHECK(a.data == data);
}

TEST_CASE("IDX: bad magic is refused with the bytes found") {
  TempDir dir;
  const std::string path = dir.file("not-idx.bin");
  Bytes bytes = concat(header(0x08, {2}), {1, 2});
  bytes[0] = 0x1f;
  bytes[1] = 0x07;
  write_bytes(path, bytes);
  check_read_fails(path, {"bad magic", "0x1f 0x07"});
}

TEST_CASE("IDX: another element type is refused and named") {
  TempDir dir;
  const std::string path = dir.file("floats-idx1");
  write_bytes(path, concat(header(0x0D, {2}), Bytes(8, 0)));
  check_read_fails(path, {"type code 0x0d", "float32", "0x08"});

  const std::string path2 = dir.file("garbage-type-idx1");
  write_bytes(path2, concat(header(0x42, {2}), Bytes(2, 0)));
  check_read_fails(path2, {"type code 0x42"});
}

TEST_CASE("IDX: 0 or more than 4 dimensions are refused") {
  TempDir dir;
  const std::string zero = dir.file("zero-dims");
  write_bytes(zero, {0, 0, 0x08, 0});
  check_read_fails(zero, {"0 dimensions"});

  const std::string five = dir.file("five-dims");
  write_bytes(five, concat(header(0x08, {1, 1, 1, 1, 1}), {7}));
  check_read_fails(five, {"5 dimensions"});
}

TEST_CASE("IDX: a truncated header is refused") {
  TempDir dir;
  const std::string short_magic = dir.file("short-magic");
  write_bytes(short_magic, {0, 0});
  check_read_fails(short_magic, {"truncated header"});

  const std::string short_dims = dir.file("short-dims");
  Bytes h = header(0x08, {10, 28, 28});
  h.resize(4 + 9);  // the third size is cut after one byte
  write_bytes(short_dims, h);
  check_read_fails(short_dims, {"truncated header", "found 9"});
}

TEST_CASE("IDX: truncated data is refused with expected and found byte counts") {
  TempDir dir;
  const std::string path = dir.file("short-data");
  write_bytes(path, concat(header(0x08, {2, 3}), {1, 2, 3, 4}));
  check_read_fails(path, {"truncated data", "expected 6 bytes of data, found 4"});

  // The same for a gzip file whose compressed stream is cut short.
  const std::string gz = dir.file("cut.gz");
  IdxArray a;
  a.dims = {50, 28, 28};
  a.data = pattern(50 * 28 * 28, 101, 3);
  write_idx(gz, a);
  Bytes compressed = read_bytes(gz);
  compressed.resize(compressed.size() / 2);
  write_bytes(gz, compressed);
  check_read_fails(gz, {"truncated data", "expected 39200 bytes of data", "gzip"});

  // All data present but the gzip trailer (CRC and length, 8 bytes) cut off.
  const std::string no_trailer = dir.file("no-trailer.gz");
  a.dims = {10};
  a.data = pattern(10);
  write_idx(no_trailer, a);
  compressed = read_bytes(no_trailer);
  compressed.resize(compressed.size() - 4);
  write_bytes(no_trailer, compressed);
  check_read_fails(no_trailer, {"truncated gzip"});

  // A .gz file cut inside its own header, before any data.
  const std::string header_only = dir.file("header-only.gz");
  write_bytes(header_only, {0x1f, 0x8b, 0x08, 0x00, 0x00});
  check_read_fails(header_only, {"truncated gzip"});
}

TEST_CASE("IDX: trailing bytes (header sizes disagree with the file) are refused") {
  TempDir dir;
  const std::string path = dir.file("long-data");
  write_bytes(path, concat(header(0x08, {2, 3}), pattern(9)));
  check_read_fails(path, {"3 trailing bytes", "disagree"});

  const std::string gz = dir.file("long-data.gz");  // read through gzip too
  gzFile f = gzopen(gz.c_str(), "wb");
  REQUIRE(f != nullptr);
  const Bytes bytes = concat(header(0x08, {4}), pattern(5));
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
          static_cast<int>(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
  check_read_fails(gz, {"1 trailing bytes"});
}

TEST_CASE("IDX: an empty file, a missing file and a directory are refused") {
  TempDir dir;
  const std::string empty = dir.file("empty-idx");
  write_bytes(empty, {});
  check_read_fails(empty, {"empty file"});

  check_read_fails(dir.file("does-not-exist-idx"), {"no such file"});
  check_read_fails(dir.str(), {"directory"});
}

TEST_CASE("IDX: absurd sizes are refused before any allocation") {
  TempDir dir;
  const std::string big = dir.file("eight-gib");
  write_bytes(big, concat(header(0x08, {65536, 65536, 2}), {1, 2, 3}));
  check_read_fails(big, {"absurd sizes", "65536 x 65536 x 2"});

  // Four maximal sizes would overflow 64-bit arithmetic if multiplied naively.
  const std::string huge = dir.file("overflow");
  write_bytes(huge, header(0x08, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}));
  check_read_fails(huge, {"absurd sizes"});
}

TEST_CASE("IDX: corrupt gzip data is an error naming the file") {
  TempDir dir;
  const std::string path = dir.file("corrupt.gz");
  IdxArray a;
  a.dims = {20, 28, 28};
  a.data = pattern(20 * 28 * 28, 7, 1);
  write_idx(path, a);
  Bytes compressed = read_bytes(path);
  REQUIRE(compressed.size() > 40);
  for (size_t i = 20; i < compressed.size() - 8; ++i) compressed[i] ^= 0xA7;  // keep gzip header
  write_bytes(path, compressed);
  check_read_fails(path, {"corrupt gzip data"});

  // A damaged checksum alone is caught too.
  const std::string crc = dir.file("bad-crc.gz");
  write_idx(crc, a);
  compressed = read_bytes(crc);
  compressed[compressed.size() - 6] ^= 0x01;  // inside the CRC-32 of the gzip trailer
  write_bytes(crc, compressed);
  check_read_fails(crc, {"corrupt gzip data"});
}

TEST_CASE("IDX: the gzip trailer is checked, its length as well as its CRC-32") {
  TempDir dir;
  const std::string path = dir.file("trailer.gz");
  const Bytes packed = gzipped(concat(header(0x08, {6}), pattern(6)));
  Bytes crc = packed;
  crc[crc.size() - 8] ^= 0x01;  // the CRC-32: the trailer's first 4 bytes
  write_bytes(path, crc);
  check_read_fails(path, {"corrupt gzip data", "the CRC-32 in the gzip trailer does not match"});
  Bytes length = packed;
  length[length.size() - 4] ^= 0x01;  // the length (mod 2^32): its last 4 bytes
  write_bytes(path, length);
  check_read_fails(path, {"corrupt gzip data", "the length in the gzip trailer does not match"});
}

TEST_CASE("IDX: bytes after the gzip data that are not another gzip member are refused") {
  TempDir dir;
  const Bytes idx = concat(header(0x08, {4}), pattern(4));
  // Two members (as `gzip -c a b > ab.gz` writes them) make one file: read whole.
  const std::string two = dir.file("two-members.gz");
  write_bytes(two, concat(gzipped(Bytes(idx.begin(), idx.begin() + 6)),
                          gzipped(Bytes(idx.begin() + 6, idx.end()))));
  CHECK(read_idx(two).data == pattern(4));

  // Anything else after the last member: zlib's gzread skipped it in silence.
  const std::string garbage = dir.file("garbage.gz");
  const Bytes packed = gzipped(idx);
  write_bytes(garbage, concat(packed, {'j', 'u', 'n', 'k', '!'}));
  check_read_fails(garbage, {"5 bytes after the end of the gzip data",
                             "from byte " + std::to_string(packed.size()), "trailing garbage"});
  write_bytes(garbage, concat(packed, {0x1f}));  // half a gzip signature
  check_read_fails(garbage, {"1 bytes after the end of the gzip data", "trailing garbage"});
}

TEST_CASE("IDX: a gzip file whose header promises more than it can hold is refused at once") {
  TempDir dir;
  const std::string path = dir.file("promise.gz");
  const Bytes packed = gzipped(concat(header(0x08, {32768, 65536}), pattern(10)));
  write_bytes(path, packed);
  // Deflate compresses at most 1032:1: these few bytes hold far less than the 2 GiB promised.
  check_read_fails(path, {"truncated data", "expected 2147483648 bytes of data",
                          "the gzip file's " + std::to_string(packed.size()) + " bytes",
                          "decompress to at most " + std::to_string(packed.size() * 1032)});
}

TEST_CASE("IDX: what follows the data of a gzip file is decompressed only up to a bound") {
  TempDir dir;
  const std::string path = dir.file("bomb.gz");
  // 64 MiB of zeros after the data compress to 64 KB; they used to be decompressed to the end
  // only to count them, as a gigabyte of them would have been.
  Bytes raw = concat(header(0x08, {4}), pattern(4));
  raw.resize(raw.size() + (size_t{64} << 20), 0);
  write_bytes(path, gzipped(raw));
  check_read_fails(path, {"more than 1048576 trailing bytes after the 4 bytes of data"});
}

TEST_CASE("IDX: write_idx refuses arrays whose dims disagree with their data") {
  TempDir dir;
  const std::string path = dir.file("bad-write");
  IdxArray a;
  a.dims = {2, 3};
  a.data = pattern(5);
  check_message(error_of([&] { write_idx(path, a); }), {path, "6", "5"});

  a.dims = {};
  check_message(error_of([&] { write_idx(path, a); }), {path, "0 dimensions"});

  a.dims = {-1};
  check_message(error_of([&] { write_idx(path, a); }), {path, "uint32"});

  a.dims = {5};
  check_message(error_of([&] { write_idx(dir.file("no-such-dir/x"), a); }), {"no-such-dir/x"});
}

// ---- load_digits on small fake MNIST folders -------------------------------------------

namespace {

// Writes images (count x rows x cols, pixel pattern) and labels files as IDX.
void write_set(const std::string& images_path, const std::string& labels_path, uint32_t count,
               uint32_t rows, uint32_t cols, const Bytes& labels) {
  IdxArray images;
  images.dims = {count, rows, cols};
  images.data = pattern(size_t{count} * rows * cols, 29, count);
  write_idx(images_path, images);
  IdxArray lab;
  lab.dims = {static_cast<int64_t>(labels.size())};
  lab.data = labels;
  write_idx(labels_path, lab);
}

// A fake <dir>/<name>/ holding 5 train and 3 test images of 4x3; test files gzipped.
fs::path write_fake_digits(const TempDir& dir, const std::string& name) {
  fs::path sub = fs::path(dir.str()) / name;
  fs::create_directories(sub);
  write_set((sub / "train-images-idx3-ubyte").string(), (sub / "train-labels-idx1-ubyte").string(),
            5, 4, 3, {3, 1, 4, 1, 5});
  write_set((sub / "t10k-images-idx3-ubyte.gz").string(),
            (sub / "t10k-labels-idx1-ubyte.gz").string(), 3, 4, 3, {9, 2, 6});
  return sub;
}

}  // namespace

TEST_CASE("load_digits: a good folder loads, raw and .gz files alike") {
  TempDir dir;
  const fs::path sub = write_fake_digits(dir, "mnist");
  std::ofstream(sub / "SOURCE.txt") << "a test fixture\nmore details\n";

  const DigitsData d = load_digits("mnist", dir.str());
  CHECK(d.train.count == 5);
  CHECK(d.train.rows == 4);
  CHECK(d.train.cols == 3);
  CHECK(d.test.count == 3);
  CHECK(d.train.labels == std::vector<int32_t>{3, 1, 4, 1, 5});
  CHECK(d.test.labels == std::vector<int32_t>{9, 2, 6});
  REQUIRE(d.train.pixels.size() == 5 * 4 * 3);
  REQUIRE(d.test.pixels.size() == 3 * 4 * 3);
  const Bytes train_bytes = pattern(5 * 4 * 3, 29, 5);
  for (size_t i = 0; i < train_bytes.size(); ++i)
    CHECK(d.train.pixels[i] == doctest::Approx(train_bytes[i] / 255.0));
  CHECK(d.test.pixels[7] == doctest::Approx(pattern(36, 29, 3)[7] / 255.0));
  check_message(d.description, {"mnist", "5 train / 3 test", "a test fixture", sub.string()});
  CHECK(d.description.find("more details") == std::string::npos);
}

TEST_CASE("load_digits: fashion reads <data_dir>/fashion when it is there") {
  TempDir dir;
  const fs::path sub = write_fake_digits(dir, "fashion");
  const DigitsData d = load_digits("fashion", dir.str());
  CHECK(d.train.count == 5);
  CHECK(d.test.count == 3);
  check_message(d.description, {"fashion", "5 train / 3 test", sub.string()});
}

TEST_CASE("load_digits: images and labels that disagree in count are refused") {
  TempDir dir;
  const fs::path sub = write_fake_digits(dir, "mnist");
  const std::string labels = (sub / "train-labels-idx1-ubyte").string();
  IdxArray four;
  four.dims = {4};
  four.data = {1, 2, 3, 4};
  write_idx(labels, four);
  check_message(error_of([&] { load_digits("mnist", dir.str()); }),
                {"mismatch", (sub / "train-images-idx3-ubyte").string(), labels, "5 images",
                 "4 labels"});

  IdxArray six;  // more labels than images is just as wrong
  six.dims = {6};
  six.data = {1, 2, 3, 4, 5, 6};
  write_idx(labels, six);
  check_message(error_of([&] { load_digits("mnist", dir.str()); }),
                {"mismatch", labels, "5 images", "6 labels"});
}

TEST_CASE("load_digits: a label of 10 or more is refused") {
  TempDir dir;
  const fs::path sub = write_fake_digits(dir, "mnist");
  const std::string labels = (sub / "t10k-labels-idx1-ubyte.gz").string();
  IdxArray lab;
  lab.dims = {3};
  lab.data = {0, 10, 2};
  write_idx(labels, lab);
  check_message(error_of([&] { load_digits("mnist", dir.str()); }),
                {labels, "label 10", "index 1"});
}

TEST_CASE("load_digits: wrong numbers of dimensions are refused") {
  TempDir dir;
  const fs::path sub = write_fake_digits(dir, "mnist");
  const std::string images = (sub / "train-images-idx3-ubyte").string();
  IdxArray flat;
  flat.dims = {5, 12};
  flat.data = pattern(60);
  write_idx(images, flat);
  check_message(error_of([&] { load_digits("mnist", dir.str()); }), {images, "3 dimensions"});

  write_fake_digits(dir, "mnist");
  const std::string labels = (sub / "train-labels-idx1-ubyte").string();
  IdxArray two_d;
  two_d.dims = {5, 1};
  two_d.data = {1, 2, 3, 4, 5};
  write_idx(labels, two_d);
  check_message(error_of([&] { load_digits("mnist", dir.str()); }), {labels, "1 dimension"});
}

TEST_CASE("load_digits: test images of another size than the training images are refused") {
  TempDir dir;
  const fs::path sub = write_fake_digits(dir, "mnist");
  write_set((sub / "t10k-images-idx3-ubyte.gz").string(),
            (sub / "t10k-labels-idx1-ubyte.gz").string(), 3, 5, 3, {1, 2, 3});
  check_message(error_of([&] { load_digits("mnist", dir.str()); }), {"t10k-images", "5x3", "4x3"});
}

TEST_CASE("load_digits: missing files point at scripts/fetch_data.sh") {
  TempDir dir;
  check_message(error_of([&] { load_digits("mnist", dir.str()); }),
                {"fetch_data.sh", "train-images-idx3-ubyte", dir.str()});

  const fs::path sub = write_fake_digits(dir, "mnist");
  fs::remove(sub / "t10k-labels-idx1-ubyte.gz");
  check_message(error_of([&] { load_digits("mnist", dir.str()); }),
                {"fetch_data.sh", (sub / "t10k-labels-idx1-ubyte").string()});
}

TEST_CASE("load_digits: a FIFO in place of a data file is refused, named, not called missing") {
  TempDir dir;
  const fs::path sub = write_fake_digits(dir, "mnist");
  fs::remove(sub / "train-labels-idx1-ubyte");
  const engine::test::WatchedFifo fifo((sub / "train-labels-idx1-ubyte").string());
  const std::string message = error_of([&] { load_digits("mnist", dir.str()); });
  check_message(message, {fifo.path() + ": is a FIFO (named pipe), not a regular file"});
  CHECK(message.find("fetch_data.sh") == std::string::npos);
}

TEST_CASE("load_digits: a folder that cannot be searched gives the system's reason, not missing") {
  TempDir dir;
  const fs::path sub = write_fake_digits(dir, "mnist");
  const engine::test::UnreadableFolder unreadable(sub.string());
  if (unreadable.bypassed()) {
    MESSAGE("not checked: this process (root) reads a folder whatever its permissions");
    return;
  }
  const std::string message = error_of([&] { load_digits("mnist", dir.str()); });
  check_message(message, {(sub / "train-images-idx3-ubyte").string(),
                          "cannot tell whether it exists (Permission denied)"});
  CHECK(message.find("fetch_data.sh") == std::string::npos);
}

TEST_CASE("load_digits: an unknown dataset name is refused") {
  check_message(error_of([] { load_digits("cifar", "data"); }), {"unknown dataset", "cifar"});
}

TEST_CASE("make_synthetic_images: deterministic for a seed, different across seeds") {
  const LabeledImages a = make_synthetic_images(500, 28, 28, 10, 42);
  const LabeledImages b = make_synthetic_images(500, 28, 28, 10, 42);
  const LabeledImages c = make_synthetic_images(500, 28, 28, 10, 43);
  CHECK(a.count == 500);
  CHECK(a.rows == 28);
  CHECK(a.cols == 28);
  REQUIRE(a.pixels.size() == 500 * 28 * 28);
  REQUIRE(a.labels.size() == 500);
  CHECK(a.pixels == b.pixels);
  CHECK(a.labels == b.labels);
  CHECK(a.pixels != c.pixels);
  CHECK(a.labels != c.labels);

  // Pixels are bytes / 255 spread over [0, 1]; labels cover 0..9 about evenly.
  double sum = 0;
  int not_a_byte = 0;
  for (float p : a.pixels) {
    const float byte = p * 255.0f;
    if (!(p >= 0.0f && p <= 1.0f) || std::abs(byte - std::round(byte)) > 1e-3f) ++not_a_byte;
    sum += p;
  }
  CHECK(not_a_byte == 0);
  CHECK(sum / static_cast<double>(a.pixels.size()) == doctest::Approx(0.5).epsilon(0.02));
  int histogram[10] = {};
  int out_of_range = 0;
  for (int32_t label : a.labels) {
    if (label < 0 || label >= 10) ++out_of_range;
    else ++histogram[label];
  }
  CHECK(out_of_range == 0);
  for (int count : histogram) {
    CHECK(count > 20);  // expected 50 each
    CHECK(count < 90);
  }

  const LabeledImages three = make_synthetic_images(300, 2, 2, 3, 7);
  CHECK(*std::max_element(three.labels.begin(), three.labels.end()) == 2);
  CHECK(*std::min_element(three.labels.begin(), three.labels.end()) == 0);

  check_message(error_of([] { make_synthetic_images(10, 0, 28, 10, 1); }), {"bad size"});
  check_message(error_of([] { make_synthetic_images(10, 28, 28, 0, 1); }), {"classes"});
}

TEST_CASE("load_digits: synthetic is full MNIST size and says it is not real data") {
  const DigitsData d = load_digits("synthetic", "/nonexistent-data-dir", 5);
  CHECK(d.train.count == 60000);
  CHECK(d.test.count == 10000);
  CHECK(d.train.rows == 28);
  CHECK(d.test.cols == 28);
  CHECK(d.train.pixels.size() == size_t{60000} * 28 * 28);
  CHECK(d.test.labels.size() == 10000);
  // The test set is not a copy of the start of the training set.
  CHECK(!std::equal(d.test.pixels.begin(), d.test.pixels.begin() + 784, d.train.pixels.begin()));
  check_message(d.description,
                {"synthetic", "60,000 train / 10,000 test", "seed 5", "NOT real data", "timing"});
  const DigitsData again = load_digits("synthetic", "", 5);
  CHECK(again.train.labels == d.train.labels);
}
