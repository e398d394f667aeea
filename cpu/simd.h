// ENGINE_VECTOR_CLONES: compile a hot loop for AVX-512, AVX2 and baseline x86-64, and let the
// loader pick the best one for the CPU it runs on (GCC function multi-versioning). The build
// stays portable (no -march=native) while the loops that are compute-heavy per byte (Adam's
// sqrt and divide, dropout's Philox) get full-width vectors where the CPU has them.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define ENGINE_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ENGINE_VECTOR_CLONES
#endif
