#include "core/allocator.h"

#include <utility>

#include "core/error.h"

namespace engine {

CachingAllocator::CachingAllocator(std::string name, size_t alignment, RawAlloc raw_alloc,
                                   RawFree raw_free)
    : name_(std::move(name)),
      alignment_(alignment),
      raw_alloc_(std::move(raw_alloc)),
      raw_free_(std::move(raw_free)) {}

CachingAllocator::~CachingAllocator() { release_cached(); }

size_t CachingAllocator::round_up(size_t bytes) const {
  if (bytes == 0) bytes = 1;  // empty tensors still get a unique, valid address
  return (bytes + alignment_ - 1) / alignment_ * alignment_;
}

void* CachingAllocator::allocate(size_t bytes) {
  const size_t size = round_up(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  void* ptr = nullptr;
  auto it = free_blocks_.find(size);
  if (it != free_blocks_.end()) {
    ptr = it->second;
    free_blocks_.erase(it);
    stats_.cached_bytes -= size;
  } else {
    ptr = raw_alloc_(size);
    ENGINE_CHECK(ptr != nullptr, name_, ": out of memory allocating ", size, " bytes (",
                 stats_.current_bytes, " bytes in use)");
    ++stats_.system_allocations;
  }
  stats_.current_bytes += size;
  if (stats_.current_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.current_bytes;
  return ptr;
}

void CachingAllocator::deallocate(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  const size_t size = round_up(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  free_blocks_.emplace(size, ptr);
  stats_.current_bytes -= size;
  stats_.cached_bytes += size;
}

void CachingAllocator::release_cached() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [size, ptr] : free_blocks_) raw_free_(ptr);
  free_blocks_.clear();
  stats_.cached_bytes = 0;
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace engine
