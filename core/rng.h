// Counter-based random numbers (Philox-4x32-10, Salmon et al., SC'11). The value for
// (key, counter) is a pure function, so element i of a dropout mask or of an initializer
// is the same whatever thread or GPU block computes it, and nothing per element is stored.
// The same header compiles for the host and for CUDA kernels.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define ENGINE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define ENGINE_HOST_DEVICE inline
#endif

namespace engine {

struct Philox4x32 {
  uint32_t v[4];
};

ENGINE_HOST_DEVICE uint32_t mulhi32(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
}

// Ten rounds of Philox over a 128-bit counter with a 64-bit key.
ENGINE_HOST_DEVICE Philox4x32 philox4x32(uint64_t counter_lo, uint64_t counter_hi, uint64_t key) {
  uint32_t c0 = static_cast<uint32_t>(counter_lo), c1 = static_cast<uint32_t>(counter_lo >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi), c3 = static_cast<uint32_t>(counter_hi >> 32);
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint32_t p0 = 0xD2511F53u * c0, p1 = 0xCD9E8D57u * c2;
    const uint32_t h0 = mulhi32(0xD2511F53u, c0), h1 = mulhi32(0xCD9E8D57u, c2);
    c0 = h1 ^ c1 ^ k0;
    c1 = p1;
    c2 = h0 ^ c3 ^ k1;
    c3 = p0;
    k0 += 0x9E3779B9u;  // Weyl sequence key schedule
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

// Uniform float in [0, 1) from the top 24 bits of a 32-bit draw (exactly representable).
ENGINE_HOST_DEVICE float uniform_from_bits(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

// Uniform [0, 1) number `index` of the stream `key`. One Philox call yields four 32-bit
// words, so numbers 4j .. 4j+3 share the call with counter j: a loop (or a GPU thread) that
// handles four consecutive numbers pays for one call.
ENGINE_HOST_DEVICE float philox_uniform(uint64_t key, uint64_t index) {
  return uniform_from_bits(philox4x32(index >> 2, 0, key).v[index & 3]);
}

// Dropout's number for element i at training step `step` of the stream `key`: the element
// picks the Philox block (i / 4) and word (i % 4), the step the high counter word, so every
// step draws a fresh mask from a number that can live on the device (backend.h).
ENGINE_HOST_DEVICE float dropout_uniform(uint64_t key, uint32_t step, uint64_t i) {
  return uniform_from_bits(philox4x32(i >> 2, step, key).v[i & 3]);
}

// A host-side stream: a key plus a running counter, for initializers, shuffles and for
// handing each dropout call its own (seed, offset) range.
class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : key_(seed) {}
  uint64_t key() const { return key_; }
  uint64_t offset() const { return offset_; }
  void set_offset(uint64_t offset) { offset_ = offset; }
  // Reserves `count` consecutive counters and returns the first.
  uint64_t reserve(uint64_t count) {
    const uint64_t first = offset_;
    offset_ += count;
    return first;
  }
  float uniform() { return philox_uniform(key_, offset_++); }
  // Uniform integer in [0, n), n > 0, by rejection so that it is unbiased.
  uint64_t below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
      const Philox4x32 r = philox4x32(offset_++, 0, key_);
      const uint64_t x = (static_cast<uint64_t>(r.v[0]) << 32) | r.v[1];
      if (x < limit) return x % n;
    }
  }

 private:
  uint64_t key_;
  uint64_t offset_ = 0;
};

// Derives independent seeds for the separate streams of one run (init, dropout, shuffle)
// from the user's --seed (splitmix64 finaliser).
inline uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace engine
