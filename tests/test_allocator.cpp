// The caching allocator: reuse, statistics, and the private pools that keep a recorded CUDA
// graph's memory to itself (core/allocator.h). Runs on the host with malloc underneath.
#include <doctest/doctest.h>

#include <cstdlib>

#include "core/allocator.h"
#include "core/error.h"

using namespace engine;

TEST_CASE("a freed block is reused for the next request of its size") {
  CachingAllocator a("test", 64, [](size_t bytes) { return std::malloc(bytes); },
                     [](void* p) { std::free(p); });
  void* p = a.allocate(100);
  a.deallocate(p, 100);
  CHECK(a.allocate(120) == p);  // both round up to 128
  CHECK(a.stats().system_allocations == 1);
  CHECK(a.stats().current_bytes == 128);
  void* q = a.allocate(100);
  CHECK(q != p);
  CHECK(a.stats().peak_bytes == 256);
  a.deallocate(p, 100);
  a.deallocate(q, 100);
}

TEST_CASE("a private pool's blocks are never handed out while the pool lives") {
  CachingAllocator a("test", 64, [](size_t bytes) { return std::malloc(bytes); },
                     [](void* p) { std::free(p); });
  void* shared = a.allocate(64);
  a.deallocate(shared, 64);

  auto pool = a.begin_private_pool();
  void* in_pool = a.allocate(64);  // the pool may take an unused block from the shared cache
  CHECK(in_pool == shared);
  a.deallocate(in_pool, 64);       // freed while recording: back to the pool, not the cache
  CHECK(a.allocate(64) == in_pool);
  a.deallocate(in_pool, 64);
  a.end_private_pool();

  void* outside = a.allocate(64);  // the pool keeps its block: this one is new
  CHECK(outside != in_pool);
  a.deallocate(outside, 64);

  a.release_private_pool(pool);    // the graph is gone: its blocks join the shared cache
  void* x = a.allocate(64);
  void* y = a.allocate(64);
  CHECK(((x == in_pool) || (y == in_pool)));
  a.deallocate(x, 64);
  a.deallocate(y, 64);
  CHECK(a.stats().current_bytes == 0);
}

TEST_CASE("out of memory is a DeviceError naming the allocator and the size") {
  CachingAllocator a("gpu-like", 64, [](size_t) -> void* { return nullptr; }, [](void*) {});
  try {
    a.allocate(1000);
    FAIL("no exception");
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    CHECK(what.find("gpu-like: out of memory allocating 1024 bytes") != std::string::npos);
  }
}
