// Weights files: exact round trip, and every kind of bad file refused with a clear message.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "core/binary_file.h"
#include "core/error.h"
#include "nn/layers.h"
#include "nn/weights_io.h"
#include "special_files.h"

using namespace engine;

namespace {

nn::Sequential small_model(int64_t hidden, uint64_t seed) {
  nn::Sequential model{nn::flatten(), nn::dense(hidden, Activation::Relu), nn::dropout(0.2f),
                       nn::dense(3, Activation::Softmax)};
  model.build({2, 3}, Device::cpu(), seed);
  return model;
}

std::string temp_path(const std::string& name) {
  return "/tmp/engine_test_weights_" + std::to_string(::getpid()) + "_" + name;
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The message of the engine::Error that loading `path` into `model` throws ("" if none).
std::string load_error(nn::Sequential& model, const std::string& path) {
  try {
    nn::load_weights(model, path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("save then load round-trips every parameter exactly") {
  nn::Sequential a = small_model(5, 1);
  nn::Sequential b = small_model(5, 2);  // different initial weights
  REQUIRE(a.parameters().values.to_vector() != b.parameters().values.to_vector());
  const std::string path = temp_path("roundtrip");
  nn::save_weights(a, path);
  nn::load_weights(b, path);
  CHECK(a.parameters().values.to_vector() == b.parameters().values.to_vector());
  std::remove(path.c_str());
}

TEST_CASE("bad weights files are refused with a message naming the file and the problem") {
  nn::Sequential model = small_model(5, 1);
  const std::string good = temp_path("good");
  nn::save_weights(model, good);
  const std::vector<char> bytes = read_bytes(good);
  const std::string bad = temp_path("bad");
  const std::vector<float> before = model.parameters().values.to_vector();

  SUBCASE("missing file") {
    CHECK(load_error(model, temp_path("does_not_exist")).find("no such file") != std::string::npos);
  }
  SUBCASE("empty file") {
    write_bytes(bad, {});
    CHECK(load_error(model, bad).find("truncated") != std::string::npos);
  }
  SUBCASE("truncated file") {
    write_bytes(bad, std::vector<char>(bytes.begin(), bytes.begin() + bytes.size() / 2));
    const std::string msg = load_error(model, bad);
    CHECK(msg.find(bad) != std::string::npos);
    CHECK((msg.find("truncated") != std::string::npos || msg.find("checksum") != std::string::npos));
  }
  SUBCASE("one corrupted byte in the data") {
    std::vector<char> corrupt = bytes;
    corrupt[corrupt.size() - 10] ^= 0x40;
    write_bytes(bad, corrupt);
    CHECK(load_error(model, bad).find("checksum mismatch") != std::string::npos);
  }
  SUBCASE("bad magic") {
    std::vector<char> corrupt = bytes;
    corrupt[0] = 'X';
    write_bytes(bad, corrupt);
    CHECK(load_error(model, bad).find("bad magic") != std::string::npos);
  }
  SUBCASE("a newer format version") {
    std::vector<char> newer = bytes;
    newer[8] = static_cast<char>(nn::WEIGHTS_FORMAT_VERSION + 1);  // version: bytes 8..11, LE
    write_bytes(bad, newer);
    CHECK(load_error(model, bad).find("newer") != std::string::npos);
  }
  SUBCASE("a model with other shapes") {
    nn::Sequential wider = small_model(7, 1);
    const std::string msg = load_error(wider, good);
    CHECK(msg.find("shape") != std::string::npos);
    CHECK(msg.find("(6, 5)") != std::string::npos);  // the file's kernel shape is named
  }
  SUBCASE("a model with other layers") {
    nn::Sequential other{nn::flatten(), nn::dense(3, Activation::Softmax)};
    other.build({2, 3}, Device::cpu(), 1);
    CHECK(load_error(other, good).find("different model") != std::string::npos);
  }
  // A refused file leaves the model's weights untouched.
  CHECK(model.parameters().values.to_vector() == before);
  std::remove(good.c_str());
  std::remove(bad.c_str());
}

TEST_CASE("saving writes through a temporary file and leaves no stray file behind") {
  nn::Sequential model = small_model(4, 3);
  const std::string path = temp_path("atomic");
  nn::save_weights(model, path);
  CHECK(std::ifstream(path).good());
  CHECK_FALSE(std::ifstream(path + ".tmp").good());
  CHECK_THROWS_AS(nn::save_weights(model, "/nonexistent_dir/x.weights"), Error);
  std::remove(path.c_str());
}

TEST_CASE("NaN weights are never saved, and a weights file holding one is refused, naming it") {
  nn::Sequential model = small_model(5, 1);
  const std::string path = temp_path("nan");
  nn::save_weights(model, path);
  const std::vector<char> good = read_bytes(path);
  const std::vector<float> before = model.parameters().values.to_vector();
  std::vector<float> values = before;
  values[3] = std::numeric_limits<float>::quiet_NaN();  // dense/kernel, the first parameter
  model.parameters().values.copy_from(Tensor::from_vector(values, {model.parameter_count()}));
  std::string message;
  try {
    nn::save_weights(model, path);
  } catch (const Error& e) {
    message = e.what();
  }
  // Before issue 24 the NaN was written and the good file replaced.
  CHECK(message == path + ": not saving the weights: dense/kernel holds nan in the weights "
                          "(nothing written; a file already there is kept)");
  CHECK(read_bytes(path) == good);
  message.clear();
  try {
    nn::save_weights_npz(model, path + ".npz");
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK(message.find("not saving the weights") != std::string::npos);
  CHECK_FALSE(std::ifstream(path + ".npz").good());

  // A file with an infinity in its last number (dense_1/bias) and a checksum made right again.
  std::vector<char> bytes = good;
  const size_t body = bytes.size() - 4;
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(bytes.data() + body - sizeof inf, &inf, sizeof inf);
  const uint32_t crc = crc32_of(bytes.data(), body);
  std::memcpy(bytes.data() + body, &crc, sizeof crc);
  const std::string bad = temp_path("inf");
  write_bytes(bad, bytes);
  nn::Sequential other = small_model(5, 2);
  const std::vector<float> other_before = other.parameters().values.to_vector();
  // Before issue 24 it loaded.
  CHECK(load_error(other, bad) == bad + ": refusing the weights: dense_1/bias holds inf in the "
                                        "file (save_weights never writes one)");
  CHECK(other.parameters().values.to_vector() == other_before);
  std::remove(path.c_str());
  std::remove(bad.c_str());
}

TEST_CASE("--load of a device or a FIFO: refused at once, naming what it is; the model unchanged") {
  nn::Sequential model = small_model(5, 1);
  const std::vector<float> before = model.parameters().values.to_vector();
  // /dev/zero used to be read until std::bad_alloc (1.3 GB in issue 24), a FIFO waited on.
  CHECK(load_error(model, "/dev/zero") ==
        "weights file /dev/zero: is a character device, not a regular file");
  const engine::test::WatchedFifo fifo(temp_path("fifo"));
  CHECK(load_error(model, fifo.path()) ==
        "weights file " + fifo.path() + ": is a FIFO (named pipe), not a regular file");
  CHECK(model.parameters().values.to_vector() == before);
}
