// The engine's .npy reader and .npy / .npz writers as a command, for tests/test_npy_numpy.sh,
// which checks them against NumPy itself:
//
//   npy_roundtrip copy IN.npy OUT.npy            read IN with read_npy, write it with write_npy
//   npy_roundtrip npz OUT.npz NAME=IN.npy ...    read each IN, write them all into one .npz,
//                                                each under its NAME, in the order given
//
// Prints "<dtype> <shape>" of every array read, one a line. Exit status 0 on success; 1 with
// the engine's one-line error on stderr when a file is refused; 2 on bad usage.
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/shape.h"
#include "core/tensor.h"
#include "datasets/npy.h"

using engine::Tensor;
using engine::datasets::read_npy;

namespace {

Tensor read_and_describe(const std::string& path) {
  Tensor t = read_npy(path);
  std::printf("%s %s\n", engine::to_string(t.dtype()), engine::to_string(t.shape()).c_str());
  return t;
}

int usage() {
  std::fprintf(stderr,
               "usage: npy_roundtrip copy IN.npy OUT.npy\n"
               "       npy_roundtrip npz OUT.npz NAME=IN.npy [NAME=IN.npy ...]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string mode = argv[1];
  try {
    if (mode == "copy" && argc == 4) {
      engine::datasets::write_npy(argv[3], read_and_describe(argv[2]));
      return 0;
    }
    if (mode == "npz") {
      std::vector<std::pair<std::string, Tensor>> arrays;
      for (int i = 3; i < argc; ++i) {
        const char* eq = std::strchr(argv[i], '=');
        if (eq == nullptr) return usage();
        arrays.emplace_back(std::string(argv[i], static_cast<size_t>(eq - argv[i])),
                            read_and_describe(eq + 1));
      }
      engine::datasets::write_npz(argv[2], arrays);
      return 0;
    }
  } catch (const engine::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return usage();
}
