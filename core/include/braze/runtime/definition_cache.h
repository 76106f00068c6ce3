#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>

#include "braze/runtime/fusion_executor_cache.h"

namespace braze {

struct DefinitionCacheCounters {
  int64_t hits = 0;    ///< definitions found (structurally equal to one seen before)
  int64_t misses = 0;  ///< new definitions, each given a FusionExecutorCache
  int64_t evictions = 0;
};

/// Fusions that are structurally equal (same canonical form: same ops, dtypes, domains, layouts
/// and constants, whatever their statement ids) share one FusionExecutorCache, so a framework
/// that rebuilds the same fusion every step pays for segmentation and compilation once. Least
/// recently used definitions beyond `capacity` are dropped (a cache still held elsewhere lives
/// on). Safe to use from several threads.
class DefinitionCache {
 public:
  explicit DefinitionCache(size_t capacity = 256, ExecutorCacheOptions options = {});

  /// The executor cache for `fusion`'s definition, made from a copy of it on first sight.
  std::shared_ptr<FusionExecutorCache> get(const Fusion& fusion);

  DefinitionCacheCounters counters() const;
  size_t size() const;

 private:
  struct Entry {
    size_t hash = 0;
    std::shared_ptr<FusionExecutorCache> cache;
  };

  size_t capacity_;
  ExecutorCacheOptions options_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
  DefinitionCacheCounters counters_;
};

}  // namespace braze
