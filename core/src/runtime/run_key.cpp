#include "braze/runtime/run_key.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>

namespace braze {

void RunKey::addTensor(int64_t kind, DataType dtype, int64_t device,
                       const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                       uint64_t data, bool exact) {
  words_.push_back(kind);
  words_.push_back(static_cast<int64_t>(dtype));
  words_.push_back(device);
  words_.push_back(static_cast<int64_t>(sizes.size()));
  // The alignment vector accesses may rely on: the data pointer's lowest set bit, up to 16. A
  // null pointer is its own class, so it never matches a plan validated with real storage.
  const uint64_t lowest = data & (~data + 1);
  words_.push_back(data == 0 ? 0 : static_cast<int64_t>(std::min<uint64_t>(lowest, 16)));
  if (exact) {
    words_.insert(words_.end(), sizes.begin(), sizes.end());
    words_.insert(words_.end(), strides.begin(), strides.end());
    return;
  }
  // Broadcast pattern, stride order (outermost first) and contiguity along it.
  std::vector<int64_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  int64_t expected = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto d = static_cast<size_t>(*it);
    const bool contiguous = sizes[d] == 1 || strides[d] == expected;
    words_.push_back((*it << 2) | (sizes[d] == 1 ? 2 : 0) | (contiguous ? 1 : 0));
    if (sizes[d] != 1) expected = strides[d] * sizes[d];
  }
}

void RunKey::addScalar(const ScalarValue& value, bool exact) {
  words_.push_back(3);
  words_.push_back(static_cast<int64_t>(value.index()));
  if (!exact) return;
  std::visit(
      [&](const auto& v) {
        int64_t bits = 0;
        static_assert(sizeof(v) <= sizeof(bits));
        std::memcpy(&bits, &v, sizeof(v));
        words_.push_back(bits);
      },
      value);
}

void RunKey::finish(std::string_view options) {
  words_.push_back(static_cast<int64_t>(std::hash<std::string_view>{}(options)));
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the words
  for (const int64_t word : words_) {
    hash ^= static_cast<uint64_t>(word);
    hash *= 1099511628211ull;
  }
  hash_ = static_cast<size_t>(hash);
}

}  // namespace braze
