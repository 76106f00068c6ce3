#pragma once

// Helpers every op builder uses to make the domains of its outputs. Internal to core/src/ops.
//
// Invariant: every TensorView owns its own IterDomain statements; no IterDomain appears in two
// tensors' logical domains. Outputs share *extent Vals* with their inputs, never IterDomains.
// Every extent of an op's output is a constant, an extent of an input, a scalar input of the
// fusion, or a scalar Expr over those, so evaluation never meets an unbound extent.

#include <string_view>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/ops/operand.h"

namespace braze::ops_detail {

/// `dim` normalized into [0, rank) (negative counts from the end), or an Error that names the
/// op, the tensor, the dim and the valid range. `rank` is usually x->rank(); unsqueeze passes
/// rank + 1.
int64_t normalizeDim(std::string_view op, const TensorView* x, int64_t dim, int64_t rank);

/// A fresh IterDomain of the same extent (and expanded extent) as `like`. A Reduction domain
/// becomes an Iteration one unless `keep_reduction`.
IterDomain* freshIterDomain(const IterDomain* like, bool keep_reduction = false);

/// Fresh IterDomains for x's user-visible dims (reductions dropped).
std::vector<IterDomain*> freshDomain(const TensorView* x);

/// A new Iteration IterDomain of the given extent, or a Broadcast one when the extent is the
/// constant 1.
IterDomain* iterDomainOfExtent(Fusion& fusion, Scalar* extent);

/// An Index-typed scalar for a size or position argument: int constants become Index constants;
/// integral scalar Vals are used as they are. Anything else (a float, a bool, a tensor) is an
/// Error naming `op` and `argument`.
Scalar* toIndexScalar(Fusion& fusion, const Operand& operand, std::string_view op,
                      std::string_view argument);

/// "T3" plus, for fusion inputs, " (input 2)": how errors name a tensor.
std::string tensorLabel(const TensorView* tv);

}  // namespace braze::ops_detail
