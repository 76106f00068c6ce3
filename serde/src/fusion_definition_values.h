#pragma once
// The value numbering that the writer and the reader of fusion definitions share
// (serde/schema/fusion_definition.fbs): both sides number values the same way as they appear,
// so an argument's number in the file means the same value on both sides.

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::serde::detail {

/// Limits that keep replayed shape arithmetic far from int64 overflow (sizes above 2^40
/// elements per dim do not exist on any GPU), and bound the work a file can ask for.
inline constexpr int64_t kMaxDefinitionSize = int64_t{1} << 40;
inline constexpr int64_t kMaxDefinitionRank = 64;
inline constexpr int64_t kMaxDefinitionBytes = int64_t{256} << 20;

class ValueTable {
 public:
  int64_t size() const { return static_cast<int64_t>(values_.size()); }
  /// The value of `number`; the caller has range-checked it.
  Val* at(int64_t number) const { return values_[static_cast<size_t>(number)]; }
  /// The number of `val`, or -1 when it has none yet.
  int64_t find(const Val* val) const {
    auto it = numbers_.find(val);
    return it == numbers_.end() ? -1 : it->second;
  }
  /// Numbers `val` (if new) and, for a tensor, its symbolic extents not numbered yet: in dim
  /// order, each dim's extent, then its expanded extent.
  void add(Val* val) {
    addOne(val);
    const auto* tv = val->dynCast<TensorView>();
    if (tv == nullptr) return;
    for (const IterDomain* id : tv->logical()) {
      for (Scalar* extent : {id->extent(), id->expandedExtent()}) {
        if (extent != nullptr && !extent->isConstant()) addOne(extent);
      }
    }
  }

 private:
  void addOne(Val* val) {
    if (numbers_.emplace(val, size()).second) values_.push_back(val);
  }

  std::vector<Val*> values_;
  std::unordered_map<const Val*, int64_t> numbers_;
};

}  // namespace braze::serde::detail
