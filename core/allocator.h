// Device memory comes from a caching allocator: a freed block is kept in a free list keyed
// by its size and handed out again to the next request of that size. A training step with
// the same shapes makes the same requests, so after the first step nothing reaches the
// system allocator (malloc/cudaMalloc).
//
// A recorded CUDA graph writes to the addresses it was recorded with every time it is
// replayed, so the blocks it uses must never be handed to anyone else while it lives. A
// private pool gives it that: between begin_private_pool() and end_private_pool() every
// allocation comes from (and every free returns to) the pool, and release_private_pool()
// gives its blocks back to the shared cache when the graph is destroyed.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace engine {

struct AllocatorStats {
  size_t current_bytes = 0;  // handed out and not yet freed
  size_t peak_bytes = 0;     // most ever handed out at once
  size_t cached_bytes = 0;   // freed blocks kept for reuse (private pools included)
  size_t system_allocations = 0;  // calls that reached the system allocator
};

class CachingAllocator {
 public:
  using RawAlloc = std::function<void*(size_t bytes)>;  // nullptr when out of memory
  using RawFree = std::function<void(void* ptr)>;
  struct Pool;  // a free list of its own (allocator.cpp)

  // `alignment` rounds every request up, which also makes near-equal sizes share blocks.
  CachingAllocator(std::string name, size_t alignment, RawAlloc raw_alloc, RawFree raw_free);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  void* allocate(size_t bytes);
  void deallocate(void* ptr, size_t bytes);
  // Returns every block of the shared cache to the system (e.g. before reporting memory use).
  void release_cached();
  AllocatorStats stats() const;
  // Starts a new peak from what is in use now: peak_bytes then measures one phase of a run
  // (the working set of a Jacobian's sweep, nn/jacobian.cpp).
  void reset_peak();

  // Routes allocations to a new private pool until end_private_pool(); returns its handle.
  std::shared_ptr<Pool> begin_private_pool();
  void end_private_pool();
  // The pool's free blocks join the shared cache; blocks still in use join it when freed.
  void release_private_pool(const std::shared_ptr<Pool>& pool);

 private:
  size_t round_up(size_t bytes) const;

  std::string name_;
  size_t alignment_;
  RawAlloc raw_alloc_;
  RawFree raw_free_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_blocks_;  // the shared cache: rounded size -> block
  std::shared_ptr<Pool> active_pool_;         // where allocations go while recording
  std::unordered_map<void*, std::shared_ptr<Pool>> pool_of_;  // blocks owned by a pool
  AllocatorStats stats_;
};

}  // namespace engine
