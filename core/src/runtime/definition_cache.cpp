#include "braze/runtime/definition_cache.h"

#include "braze/ir/structural_hash.h"

namespace braze {

DefinitionCache::DefinitionCache(size_t capacity, ExecutorCacheOptions options)
    : capacity_(capacity), options_(options) {
  BRAZE_USER_CHECK(capacity_ > 0) << "DefinitionCache: the capacity must be at least 1";
}

std::shared_ptr<FusionExecutorCache> DefinitionCache::get(const Fusion& fusion) {
  const size_t hash = structuralHash(fusion);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->hash != hash || !structurallyEqual(it->cache->fusion(), fusion)) continue;
      entries_.splice(entries_.begin(), entries_, it);
      ++counters_.hits;
      return entries_.front().cache;
    }
  }
  // Made outside the lock: cloning and checking the definition take time. Two threads that
  // race on one new definition both make one; the first kept serves both from then on.
  auto cache = std::make_shared<FusionExecutorCache>(fusion, options_);
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->hash == hash && structurallyEqual(it->cache->fusion(), fusion)) {
      ++counters_.hits;
      return it->cache;
    }
  }
  ++counters_.misses;
  entries_.push_front({hash, cache});
  while (entries_.size() > capacity_) {
    entries_.pop_back();
    ++counters_.evictions;
  }
  return cache;
}

DefinitionCacheCounters DefinitionCache::counters() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counters_;
}

size_t DefinitionCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace braze
