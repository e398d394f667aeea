#include "nn/weights_io.h"

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/error.h"

namespace engine::nn {
namespace {

constexpr char MAGIC[8] = {'E', 'N', 'G', 'W', 'G', 'H', 'T', 'S'};

// Little-endian writers/readers over a byte buffer (the format is little-endian on disk,
// which is also every host this engine runs on; memcpy keeps it free of aliasing issues).
template <typename T>
void put(std::vector<char>& buf, T value) {
  const char* p = reinterpret_cast<const char*>(&value);
  buf.insert(buf.end(), p, p + sizeof(T));
}

class Reader {
 public:
  Reader(const std::vector<char>& buf, size_t end, std::string path)
      : buf_(buf), end_(end), path_(std::move(path)) {}
  template <typename T>
  T get(const char* what) {
    T value;
    bytes(&value, sizeof(T), what);
    return value;
  }
  void bytes(void* dst, size_t n, const char* what) {
    ENGINE_CHECK(n <= end_ - pos_, path_, ": file is truncated (while reading ", what, ")");
    std::memcpy(dst, buf_.data() + pos_, n);
    pos_ += n;
  }
  size_t position() const { return pos_; }

 private:
  const std::vector<char>& buf_;
  size_t end_;
  size_t pos_ = 0;
  std::string path_;
};

uint32_t crc32_of(const char* data, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large buffers in pieces.
  while (n > 0) {
    const uInt piece = n > (1u << 30) ? (1u << 30) : static_cast<uInt>(n);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), piece);
    data += piece;
    n -= piece;
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace

void save_weights(const Sequential& model, const std::string& path) {
  ENGINE_CHECK(model.built(), "save_weights: the model is not built");
  const ParameterStore& store = model.parameters();
  std::vector<char> buf(MAGIC, MAGIC + sizeof MAGIC);
  put<uint32_t>(buf, WEIGHTS_FORMAT_VERSION);
  put<uint32_t>(buf, static_cast<uint32_t>(store.params.size()));
  for (const Parameter& p : store.params) {
    put<uint32_t>(buf, static_cast<uint32_t>(p.name.size()));
    buf.insert(buf.end(), p.name.begin(), p.name.end());
    put<uint32_t>(buf, static_cast<uint32_t>(p.value.ndim()));
    for (int64_t d : p.value.shape()) put<int64_t>(buf, d);
    const std::vector<float> values = p.value.to_vector();
    const char* raw = reinterpret_cast<const char*>(values.data());
    buf.insert(buf.end(), raw, raw + values.size() * sizeof(float));
  }
  put<uint32_t>(buf, crc32_of(buf.data(), buf.size()));

  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    ENGINE_CHECK(out.good(), path, ": cannot open for writing");
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    out.flush();
    ENGINE_CHECK(out.good(), path, ": write failed (disk full?)");
  }
  ENGINE_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, path, ": cannot rename ", tmp,
               " into place");
}

void load_weights(Sequential& model, const std::string& path) {
  ENGINE_CHECK(model.built(), "load_weights: the model is not built");
  std::ifstream in(path, std::ios::binary);
  ENGINE_CHECK(in.good(), path, ": cannot open weights file (missing or unreadable)");
  const std::vector<char> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ENGINE_CHECK(buf.size() >= sizeof MAGIC + 3 * sizeof(uint32_t),
               path, ": file is truncated (", buf.size(), " bytes is too short for a weights file)");
  ENGINE_CHECK(std::memcmp(buf.data(), MAGIC, sizeof MAGIC) == 0, path,
               ": not a weights file (bad magic)");

  const size_t body = buf.size() - sizeof(uint32_t);  // everything before the checksum
  Reader r(buf, body, path);
  char magic[sizeof MAGIC];
  r.bytes(magic, sizeof magic, "magic");
  const auto version = r.get<uint32_t>("version");
  ENGINE_CHECK(version <= WEIGHTS_FORMAT_VERSION, path, ": written by a newer engine (format version ",
               version, "; this build reads up to ", WEIGHTS_FORMAT_VERSION, ")");
  ENGINE_CHECK(version >= 1, path, ": invalid format version 0");
  uint32_t stored_crc;
  std::memcpy(&stored_crc, buf.data() + body, sizeof stored_crc);
  ENGINE_CHECK(stored_crc == crc32_of(buf.data(), body), path,
               ": checksum mismatch (the file is corrupted or truncated)");

  ParameterStore& store = model.parameters();
  const auto count = r.get<uint32_t>("tensor count");
  ENGINE_CHECK(count == store.params.size(), path, ": holds ", count, " tensors but the model has ",
               store.params.size(), " (a different model)");
  std::vector<float> flat;
  flat.reserve(static_cast<size_t>(store.count()));
  for (const Parameter& p : store.params) {
    const auto name_length = r.get<uint32_t>("tensor name length");
    ENGINE_CHECK(name_length < 4096, path, ": implausible tensor name length ", name_length);
    std::string name(name_length, '\0');
    r.bytes(name.data(), name_length, "tensor name");
    ENGINE_CHECK(name == p.name, path, ": tensor '", name, "' where the model has '", p.name, "'");
    const auto ndim = r.get<uint32_t>("tensor rank");
    ENGINE_CHECK(ndim <= 8, path, ": implausible rank ", ndim, " for '", name, "'");
    Shape shape(ndim);
    for (auto& d : shape) d = r.get<int64_t>("tensor shape");
    ENGINE_CHECK(shape == p.value.shape(), path, ": '", name, "' has shape ", to_string(shape),
                 " in the file but ", to_string(p.value.shape()), " in the model");
    const size_t n = static_cast<size_t>(p.value.numel());
    flat.resize(flat.size() + n);
    r.bytes(flat.data() + flat.size() - n, n * sizeof(float), "tensor data");
  }
  ENGINE_CHECK(r.position() == body, path, ": ", body - r.position(),
               " unexpected bytes after the last tensor");
  // Parameters are laid out in the same order in the flat buffer: one copy moves them all.
  store.values.copy_from(Tensor::from_vector(flat, store.values.shape()));
}

}  // namespace engine::nn
