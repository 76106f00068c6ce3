#include "braze/host/store.h"

#include "braze/error.h"

namespace braze::host {

int64_t Store::nextGeneration(std::string_view name) {
  std::lock_guard<std::mutex> lock(generations_mutex_);
  auto it = generations_.find(name);
  if (it == generations_.end()) it = generations_.emplace(std::string(name), 0).first;
  return it->second++;
}

void Store::throwTimeout(const std::string& key, std::chrono::milliseconds timeout) const {
  BRAZE_THROW() << "timed out after " << timeout.count() << " ms waiting for key '" << key
                << "' in " << describe()
                << ": no rank set it. Check that every rank of the job started and reached the "
                   "same point, and that all of them use the same store";
}

}  // namespace braze::host
