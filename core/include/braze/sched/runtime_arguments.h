#pragma once

// What the arguments of one run tell a scheduler before it chooses params: whether they fit
// the fusion's inputs at all, and the sizes they give the fusion's dims.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "braze/eval/argument_binding.h"
#include "braze/eval/expression_evaluator.h"
#include "braze/ir/fusion.h"

namespace braze {

/// Why `arguments` cannot be the arguments of a run of `fusion`, or nullopt: not one argument
/// per input, a tensor where the input is a scalar or the other way round, or a tensor whose
/// sizes and strides do not have the input's rank. A scheduler refuses with this reason before
/// reading sizes; the core's full validation (evaluateExtents) runs after it.
std::optional<std::string> argumentProblem(const Fusion& fusion,
                                           const std::vector<ArgumentInfo>& arguments);

/// The tensor argument of fusion input `input` (a TensorView of `fusion`), or null when
/// `arguments` has no tensor at its position.
const TensorArgumentInfo* tensorArgumentOf(const Fusion& fusion,
                                           const std::vector<ArgumentInfo>& arguments,
                                           const Val* input);

/// The extent of each of `dims` (their logicalExtent: an expanded broadcast counts its
/// expanded size) for these arguments, nullopt where it depends on a scalar the arguments do
/// not bind. Runs the core's validation of the arguments first (counts, dtypes, ranks, fixed
/// and shared sizes, broadcast dims, layouts), which throws a braze::Error on a mismatch whose
/// message begins with `caller`, and leaves the bound values in `evaluator` for later
/// evaluations (persistent buffer sizes). Requires argumentProblem to be nullopt.
std::vector<std::optional<int64_t>> evaluateExtents(const Fusion& fusion,
                                                    const std::vector<ArgumentInfo>& arguments,
                                                    const std::vector<IterDomain*>& dims,
                                                    std::string_view caller,
                                                    ExpressionEvaluator& evaluator);

}  // namespace braze
