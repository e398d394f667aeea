// The device-peaks cache (core/peaks_cache.h): measured once per device name, read back bit
// for bit, one line per device, malformed lines measured again, ENGINE_REMEASURE_PEAKS, and no
// cache at all when there is nowhere to keep it.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <fstream>
#include <iterator>
#include <string>

#include "core/peaks_cache.h"
#include "file_fixtures.h"

using engine::cached_peaks;
using engine::MeasuredPeaks;

namespace {

// A probe that counts its calls and returns peaks no round trip through decimal text would
// keep exactly unless it printed every digit.
struct CountingProbe {
  int calls = 0;
  MeasuredPeaks peaks{6.2e13 / 3.0, 3.0e12 / 7.0, 3.1e-6 / 3.0, 5.3e10 / 9.0, 4.9e10 / 11.0};
  MeasuredPeaks operator()() {
    ++calls;
    return peaks;
  }
};

void check_same(const MeasuredPeaks& a, const MeasuredPeaks& b) {
  CHECK(a.flops_per_s == b.flops_per_s);
  CHECK(a.bytes_per_s == b.bytes_per_s);
  CHECK(a.launch_seconds == b.launch_seconds);
  CHECK(a.host_to_device_bytes_per_s == b.host_to_device_bytes_per_s);
  CHECK(a.device_to_host_bytes_per_s == b.device_to_host_bytes_per_s);
}

std::string contents(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("peaks are measured once per device and read back bit for bit") {
  engine::test::TempDir dir;
  const std::string path = dir.file("sub/device_peaks.tsv");  // the folder is made as needed
  CountingProbe h100, cpu;
  cpu.peaks = {1.1e12, 2.0e11, 4.0e-6, 0.0, 0.0};  // no host <-> device copies on the CPU
  auto measure_h100 = [&] { return h100(); };
  auto measure_cpu = [&] { return cpu(); };

  check_same(cached_peaks("NVIDIA H100 (sm_90, 132 SMs, driver 13.0)", measure_h100, path), h100.peaks);
  check_same(cached_peaks("NVIDIA H100 (sm_90, 132 SMs, driver 13.0)", measure_h100, path), h100.peaks);
  CHECK(h100.calls == 1);
  // Another name (another driver, another thread count) is another entry; both lines stay.
  check_same(cached_peaks("cpu (OpenBLAS, 16 threads)", measure_cpu, path), cpu.peaks);
  check_same(cached_peaks("cpu (OpenBLAS, 16 threads)", measure_cpu, path), cpu.peaks);
  check_same(cached_peaks("NVIDIA H100 (sm_90, 132 SMs, driver 13.0)", measure_h100, path), h100.peaks);
  CHECK(cpu.calls == 1);
  CHECK(h100.calls == 1);
  const std::string text = contents(path);
  CHECK(text.find("NVIDIA H100 (sm_90, 132 SMs, driver 13.0)\t") != std::string::npos);
  CHECK(text.find("cpu (OpenBLAS, 16 threads)\t") != std::string::npos);

  SUBCASE("ENGINE_REMEASURE_PEAKS=1 probes again and replaces the line") {
    ::setenv("ENGINE_REMEASURE_PEAKS", "1", 1);
    h100.peaks.flops_per_s = 5.0e13;
    check_same(cached_peaks("NVIDIA H100 (sm_90, 132 SMs, driver 13.0)", measure_h100, path), h100.peaks);
    ::unsetenv("ENGINE_REMEASURE_PEAKS");
    CHECK(h100.calls == 2);
    check_same(cached_peaks("NVIDIA H100 (sm_90, 132 SMs, driver 13.0)", measure_h100, path), h100.peaks);
    CHECK(h100.calls == 2);
  }
}

TEST_CASE("a malformed cache line is measured again, the good lines are kept") {
  engine::test::TempDir dir;
  const std::string path = dir.file("device_peaks.tsv");
  {
    std::ofstream out(path);
    out << "# comment\n"
        << "gpu a\t1e13\t2e12\t3e-6\t0\t0\t2026-11-23T00:00:00Z\n"
        << "gpu b\tnot a number\t2e12\t3e-6\t0\t0\tx\n"
        << "gpu c\t0\t2e12\t3e-6\t0\t0\tx\n"  // a zero FLOP rate would divide by zero later
        << "truncated line\n";
  }
  CountingProbe probe;
  auto measure = [&] { return probe(); };
  const MeasuredPeaks a = cached_peaks("gpu a", measure, path);
  CHECK(a.flops_per_s == 1e13);
  CHECK(probe.calls == 0);
  check_same(cached_peaks("gpu b", measure, path), probe.peaks);
  check_same(cached_peaks("gpu c", measure, path), probe.peaks);
  CHECK(probe.calls == 2);
  const std::string text = contents(path);
  CHECK(text.find("gpu a\t") != std::string::npos);
  CHECK(text.find("not a number") == std::string::npos);
  CHECK(text.find("truncated line") == std::string::npos);
}

TEST_CASE("no cache path: measured every time; an unwritable cache only costs the next probe") {
  CountingProbe probe;
  auto measure = [&] { return probe(); };
  cached_peaks("gpu", measure, "");
  cached_peaks("gpu", measure, "");
  CHECK(probe.calls == 2);

  engine::test::TempDir dir;
  const std::string blocker = dir.file("a_file");
  std::ofstream(blocker) << "x";
  // Its "directory" is a file: creating it fails, the peaks are still returned.
  check_same(cached_peaks("gpu", measure, blocker + "/device_peaks.tsv"), probe.peaks);
  CHECK(probe.calls == 3);
}

TEST_CASE("the cache path follows ENGINE_CACHE_DIR, then XDG_CACHE_HOME, then HOME") {
  const char* saved = std::getenv("ENGINE_CACHE_DIR");
  const std::string saved_value = saved ? saved : "";
  ::setenv("ENGINE_CACHE_DIR", "/tmp/engine_cache_x", 1);
  CHECK(engine::peaks_cache_path() == "/tmp/engine_cache_x/device_peaks.tsv");
  ::unsetenv("ENGINE_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  CHECK(engine::peaks_cache_path() == "/tmp/xdg/engine/device_peaks.tsv");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/tmp/home_x", 1);
  CHECK(engine::peaks_cache_path() == "/tmp/home_x/.cache/engine/device_peaks.tsv");
  if (saved) ::setenv("ENGINE_CACHE_DIR", saved_value.c_str(), 1);
}
