#pragma once

// A SegmentChecker given as a function, for the segmenter's tests that decide by what a
// segment computes.

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "braze/segment/segmented_fusion.h"

namespace braze::test {

/// Answers what `decide` returns for each segment.
class FunctionChecker : public SegmentChecker {
 public:
  explicit FunctionChecker(std::function<std::optional<std::string>(const Segment&)> decide)
      : decide_(std::move(decide)) {}
  std::optional<std::string> accepts(const Segment& segment) override { return decide_(segment); }

 private:
  std::function<std::optional<std::string>(const Segment&)> decide_;
};

/// Whether one of the segment's Exprs is an `op`.
inline bool computes(const Segment& segment, OpKind op) {
  return std::any_of(segment.exprs.begin(), segment.exprs.end(),
                     [op](const Expr* expr) { return expr->op() == op; });
}

}  // namespace braze::test
