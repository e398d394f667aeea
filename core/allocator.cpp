#include "core/allocator.h"

#include <utility>

#include "core/error.h"

namespace engine {

struct CachingAllocator::Pool {
  std::multimap<size_t, void*> free_blocks;
};

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
  // A private pool reuses its own blocks first, then takes unused ones from the shared cache.
  for (std::multimap<size_t, void*>* free_list :
       {active_pool_ ? &active_pool_->free_blocks : nullptr, &free_blocks_}) {
    if (free_list == nullptr) continue;
    auto it = free_list->find(size);
    if (it == free_list->end()) continue;
    ptr = it->second;
    free_list->erase(it);
    stats_.cached_bytes -= size;
    break;
  }
  if (ptr == nullptr) {
    ptr = raw_alloc_(size);
    if (ptr == nullptr && !free_blocks_.empty()) {  // give the cache back and try once more
      for (auto& [cached_size, block] : free_blocks_) raw_free_(block);
      for (auto& [cached_size, block] : free_blocks_) stats_.cached_bytes -= cached_size;
      free_blocks_.clear();
      ptr = raw_alloc_(size);
    }
    if (ptr == nullptr) {
      throw DeviceError(detail::concat(name_, ": out of memory allocating ", size, " bytes (",
                                       stats_.current_bytes, " bytes in use, peak ",
                                       stats_.peak_bytes, ")"));
    }
    ++stats_.system_allocations;
  }
  if (active_pool_) pool_of_[ptr] = active_pool_;
  stats_.current_bytes += size;
  if (stats_.current_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.current_bytes;
  return ptr;
}

void CachingAllocator::deallocate(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  const size_t size = round_up(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  auto owner = pool_of_.find(ptr);
  if (owner != pool_of_.end()) {
    owner->second->free_blocks.emplace(size, ptr);
  } else {
    free_blocks_.emplace(size, ptr);
  }
  stats_.current_bytes -= size;
  stats_.cached_bytes += size;
}

void CachingAllocator::release_cached() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [size, ptr] : free_blocks_) {
    raw_free_(ptr);
    stats_.cached_bytes -= size;
  }
  free_blocks_.clear();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_bytes = stats_.current_bytes;
}

std::shared_ptr<CachingAllocator::Pool> CachingAllocator::begin_private_pool() {
  std::lock_guard<std::mutex> lock(mutex_);
  ENGINE_CHECK(!active_pool_, name_, ": a private pool is already being filled");
  active_pool_ = std::make_shared<Pool>();
  return active_pool_;
}

void CachingAllocator::end_private_pool() {
  std::lock_guard<std::mutex> lock(mutex_);
  active_pool_.reset();
}

void CachingAllocator::release_private_pool(const std::shared_ptr<Pool>& pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [size, ptr] : pool->free_blocks) free_blocks_.emplace(size, ptr);
  pool->free_blocks.clear();
  for (auto it = pool_of_.begin(); it != pool_of_.end();) {
    it = it->second == pool ? pool_of_.erase(it) : std::next(it);
  }
}

}  // namespace engine
