// doctest's main() for GPU-only test executables (test_gpu_parity, test_gpu_backend). Without a usable GPU it
// runs no test and exits 77, which tests/CMakeLists.txt declares as SKIP_RETURN_CODE: ctest
// then reports the test as "Skipped", never as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "core/device_services.h"
#include "core/device.h"

int main(int argc, char** argv) {
  std::string why;
  if (!engine::device_available(engine::Device::cuda(), &why)) {
    std::fprintf(stderr, "*** GPU TEST SKIPPED: no GPU: %s ***\n", why.c_str());
    return 77;
  }
  doctest::Context context;
  context.applyCommandLine(argc, argv);
  return context.run();
}
