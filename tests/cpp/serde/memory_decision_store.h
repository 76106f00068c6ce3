#pragma once

// A decision store in memory for tests: counts inserts, and `tamper` changes what find()
// returns (a damaged or outdated entry without going through a file).

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "braze/runtime/decision_store.h"

namespace braze::test {

class MemoryDecisionStore : public DecisionStore {
 public:
  std::optional<RuntimeDecisions> find(const std::string& key) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = kept_.find(key);
    if (it == kept_.end()) return std::nullopt;
    RuntimeDecisions decisions = it->second;
    if (tamper) tamper(decisions);
    return decisions;
  }
  void insert(const std::string& key, const RuntimeDecisions& decisions) override {
    std::lock_guard<std::mutex> lock(mutex_);
    kept_[key] = decisions;
    ++inserts;
  }
  /// The key of the one kept entry.
  std::string onlyKey() {
    std::lock_guard<std::mutex> lock(mutex_);
    return kept_.size() == 1 ? kept_.begin()->first : std::string();
  }
  std::function<void(RuntimeDecisions&)> tamper;
  int inserts = 0;

 private:
  std::mutex mutex_;
  std::map<std::string, RuntimeDecisions> kept_;
};

}  // namespace braze::test
