// Counter-based random numbers (Philox-4x32-10, Salmon et al., SC'11). The value for
// (key, counter) is a pure function, so element i of a dropout mask or of an initializer
// is the same whatever thread or GPU block computes it, and nothing per element is stored.
// The same header compiles for the host and for CUDA kernels.
#pragma once
#include <math.h>  // logf, sqrtf, sinf, cosf: the same names in host and device code

#include <cstdint>

#include "core/host_device.h"

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
// step draws a fresh mask from a number that can live on the device (core/ops/dropout.h).
ENGINE_HOST_DEVICE float dropout_uniform(uint64_t key, uint32_t step, uint64_t i) {
  return uniform_from_bits(philox4x32(i >> 2, step, key).v[i & 3]);
}

// ---- normal numbers (raw::random_normal, core/ops/random.h) ---------------------------------------------
// The rule, identical on the CPU and the GPU: element i of random_normal(seed) comes from
// Philox block j = i / 4 with key = seed and counter = (j, 0) (the same words as
// philox_uniform(seed, i)). The block's four words make two Box-Muller pairs, words (0, 1)
// for elements 4j, 4j+1 and words (2, 3) for 4j+2, 4j+3:
//   u1 = w0 * 2^-32 + 2^-33  in (0, 1]  (never 0, so the log is finite)
//   u2 = w1 * 2^-32          in [0, 1]
//   r = sqrt(-2 ln u1), theta = 2 pi u2;  z(4j) = r cos theta,  z(4j+1) = r sin theta
// and y = mean + stddev * z. Every step is one IEEE-rounded float operation (the 2^-32
// product is exact), so the CPU and the GPU differ only where their logf, sinf and cosf round
// differently: a few ulp. |z| <= sqrt(2 * 33 ln 2) = 6.8 (u1 >= 2^-33), so the tails are
// cut beyond 6.8 sigma, where a normal has 1e-11 of its mass: 1e-3 numbers in 10^8.

// The uniforms u1 in (0, 1] and u2 in [0, 1] of the rule above (a word near 2^32 rounds to
// 2^32 as a float, hence the closed ends). uint32 -> float rounds to nearest on both
// implementations; the product by a power of two is exact, so an FMA contraction cannot change u1.
ENGINE_HOST_DEVICE float box_muller_u1(uint32_t bits) {
  return static_cast<float>(bits) * 2.3283064365386963e-10f + 1.1641532182693481e-10f;
}
ENGINE_HOST_DEVICE float box_muller_u2(uint32_t bits) {
  return static_cast<float>(bits) * 2.3283064365386963e-10f;
}

struct Normal4 {
  float z[4];
};

// Four standard normal numbers from one Philox block (the rule above).
ENGINE_HOST_DEVICE Normal4 box_muller4(const Philox4x32& r) {
  constexpr float TWO_PI = 6.2831853071795865f;
  Normal4 out{};
  for (int pair = 0; pair < 2; ++pair) {
    const float radius = sqrtf(-2.0f * logf(box_muller_u1(r.v[2 * pair])));
    const float theta = TWO_PI * box_muller_u2(r.v[2 * pair + 1]);
    float s, c;
#if defined(__CUDA_ARCH__)
    sincosf(theta, &s, &c);  // one range reduction for both (same results as sinf, cosf)
#else
    s = sinf(theta);  // GCC merges these into one sincosf call
    c = cosf(theta);
#endif
    out.z[2 * pair] = radius * c;
    out.z[2 * pair + 1] = radius * s;
  }
  return out;
}

// y = mean + stddev * z, rounded twice (multiply, then add) on the CPU and the GPU: nvcc would
// otherwise fuse it into one FMA, rounded once, and differ from the CPU by half an ulp.
ENGINE_HOST_DEVICE float scale_normal(float z, float mean, float stddev) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(mean, __fmul_rn(stddev, z));
#else
  return mean + stddev * z;
#endif
}

// A host-side stream: a key plus a running counter, for initializers, shuffles and the
// augmentation draws (dropout keys each call by derive_seed instead: nn/layers.cpp).
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
