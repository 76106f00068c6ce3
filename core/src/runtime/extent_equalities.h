#pragma once

#include <string>
#include <vector>

#include "braze/eval/expression_evaluator.h"
#include "braze/ir/fusion.h"

namespace braze::runtime_detail {

/// Two extents a kernel computes with as one: the sizes of dimensions its ops pair (sched's
/// logicalMap) without broadcasting. Generated code indexes both dimensions with one loop, so
/// different sizes at run time would read or write out of bounds.
struct ExtentEquality {
  const Val* a;
  const Val* b;
  std::string where;  ///< "add T2 = f(T0, T1): dim 0 of T1 and dim 0 of T2"
};

/// Every pair of distinct, not provably equal extents paired by an op of `fusion`, and the
/// symbolic extents a scatter runs with as equal (scatter_as_matches.h).
std::vector<ExtentEquality> collectExtentEqualities(const Fusion& fusion);

/// Checks each equality with the bound `extents`: a mismatch is an Error saying that
/// `subject` ("kernel k", "the fusion") cannot run with these inputs, which dims disagree and
/// their sizes.
void checkExtentEqualities(const std::vector<ExtentEquality>& equalities,
                           ExpressionEvaluator& extents, std::string_view subject);

}  // namespace braze::runtime_detail
