// Fuzz target: the IDX reader, datasets::read_idx (datasets/idx.h), raw and gzipped.
//
// What is fuzzed: the whole file. The input bytes become an IDX file on disk and read_idx
// parses it: the 4-byte magic number (two zeros, type code, number of dimensions), the
// big-endian dimension sizes, the data, and the check that nothing follows it. read_idx looks
// at the first two bytes, not at the file name, so an input that starts with the gzip
// signature (1f 8b) is decompressed first: the same target also fuzzes the gzip path, a
// stream cut short, corrupt deflate data, and sizes that only show after decompression
// (fuzz_gzip fuzzes that layer alone, in memory).
//
// Why: MNIST and Fashion-MNIST files come from downloads and from our own fetch scripts, and a
// file cut short or a header that lies about its sizes must give one clear engine::Error,
// never a crash, a huge allocation or a read past a buffer. The seeds in fuzz/corpus/idx/
// (fuzz/make_corpus.py) hold valid raw and gzipped files and broken ones of each kind.
//
// The contract checked: read_idx either returns an array whose data size is the product of its
// dims, or throws engine::Error. Anything else - a sanitizer report, another exception type
// escaping, a leak, an abort - is a finding that libFuzzer saves as crash-<sha1>.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/error.h"
#include "datasets/idx.h"
#include "fuzz/temp_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static engine::fuzz::TempFile file("idx");
  try {
    const engine::datasets::IdxArray a = engine::datasets::read_idx(file.write(data, size));
    // A file the reader accepts must be self-consistent: it is what the MNIST loader trusts.
    uint64_t elements = 1;
    for (int64_t d : a.dims) elements *= static_cast<uint64_t>(d);
    if (a.dims.empty() || elements != a.data.size()) std::abort();
  } catch (const engine::Error&) {
    // A refused file: the documented outcome for bad input.
  }
  return 0;
}
