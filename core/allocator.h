// Device memory comes from a caching allocator: a freed block is kept in a free list keyed
// by its size and handed out again to the next request of that size. A training step with
// the same shapes makes the same requests, so after the first step nothing reaches the
// system allocator (malloc/cudaMalloc) and, on the GPU, a captured graph's addresses stay
// valid (DESIGN.md section 3).
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace engine {

struct AllocatorStats {
  size_t current_bytes = 0;  // handed out and not yet freed
  size_t peak_bytes = 0;     // most ever handed out at once
  size_t cached_bytes = 0;   // freed blocks kept for reuse
  size_t system_allocations = 0;  // calls that reached the system allocator
};

class CachingAllocator {
 public:
  using RawAlloc = std::function<void*(size_t bytes)>;
  using RawFree = std::function<void(void* ptr)>;

  // `alignment` rounds every request up, which also makes near-equal sizes share blocks.
  CachingAllocator(std::string name, size_t alignment, RawAlloc raw_alloc, RawFree raw_free);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* allocate(size_t bytes);
  void deallocate(void* ptr, size_t bytes);
  // Returns every cached block to the system (e.g. before reporting memory use).
  void release_cached();
  AllocatorStats stats() const;

 private:
  size_t round_up(size_t bytes) const;

  std::string name_;
  size_t alignment_;
  RawAlloc raw_alloc_;
  RawFree raw_free_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_blocks_;  // rounded size -> block
  AllocatorStats stats_;
};

}  // namespace engine
