// What the fuzz targets of the engine's own files (fuzz_weights, fuzz_checkpoint,
// fuzz_model_file) share: the loaders' promise that a refused file leaves the model as it was,
// checked byte for byte, and the trick that gets mutations past the CRC-32 at their end.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/binary_file.h"
#include "core/error.h"
#include "nn/sequential.h"

namespace engine::fuzz {

// Runs load(); if it throws engine::Error, the model's weights must be what they were before
// (anything else thrown escapes and is a finding too). memcmp, not ==: a loaded NaN is not ==
// to itself but is still "unchanged".
template <typename Load>
void expect_unchanged_on_refusal(nn::Sequential& model, Load&& load) {
  const std::vector<float> before = model.parameters().values.to_vector();
  try {
    load();
  } catch (const Error&) {
    const std::vector<float> after = model.parameters().values.to_vector();
    if (after.size() != before.size() ||
        std::memcmp(after.data(), before.data(), before.size() * sizeof(float)) != 0)
      std::abort();  // a refused file changed the model
  }
}

// The last 4 bytes replaced by the CRC-32 of those before them (little-endian, as on disk): a
// random change to a valid file almost never keeps its checksum right, so without this nearly
// every input would stop at the checksum check and the parser behind it would never run.
inline void fix_checksum(std::vector<uint8_t>& bytes) {
  if (bytes.size() < 4) return;
  const size_t body = bytes.size() - 4;
  const uint32_t crc = crc32_of(reinterpret_cast<const char*>(bytes.data()), body);
  std::memcpy(bytes.data() + body, &crc, sizeof crc);
}

}  // namespace engine::fuzz
