#pragma once

// Internal to core/src/runtime.

#include <cstdint>
#include <vector>

#include "braze/eval/expression_evaluator.h"
#include "braze/ir/fusion.h"

namespace braze::runtime_detail {

/// The user-visible sizes of an original fusion's tensor for a run whose extents `extents`
/// binds.
std::vector<int64_t> evaluatedSizes(const TensorView& tv, ExpressionEvaluator& extents);

}  // namespace braze::runtime_detail
