#pragma once

// The dims a matmul or linear keeps in place, shared by the passes that follow dims through a
// fusion's ops (stream stages, sharding propagation).

#include <utility>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::host_detail {

/// The dims a contraction keeps in place, which lowering never pairs (its kernels are
/// templates): matmul's batch dims and M (from a) or N (from b), linear's leading dims (from x)
/// and N (from the weight and the bias). (input `input`'s dim, the output's dim) pairs.
std::vector<std::pair<const IterDomain*, const IterDomain*>> contractionPairs(const Expr& expr,
                                                                              size_t input);

using DimPairs = std::vector<std::pair<const IterDomain*, const IterDomain*>>;

/// The dims input `input` and output `output` of `expr` iterate alike: the exact pairs lowering
/// maps, and for a contraction the dims it keeps in place. (input's dim, output's dim) pairs.
DimPairs exactPairs(const Expr& expr, size_t input, size_t output);

/// The dim of input `input` that a matmul or linear contracts (K), or null for other ops.
const IterDomain* contractedDim(const Expr& expr, size_t input);

}  // namespace braze::host_detail
