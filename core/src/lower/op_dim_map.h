#pragma once

// How an op relates the logical dims of a tensor input to the logical dims of its output(s):
// the edges lowering uses to carry loop indices from a consumer to its producers.
//
//   T2[i0, i1] = add(T0[i0, i1], T1[b2, i3])   -> (T0.i0, T2.i0) exact, (T1.b2, T2.i0) broadcast
//   T4[i0, r1] = sum(T3[i0, i1], axes=[1])     -> (T3.i1, T4.r1) exact
//   T6[i1, i0] = permute(T5[i0, i1], [1, 0])   -> (T5.i1, T6.i1) exact, (T5.i0, T6.i0) exact
//
// An exact pair iterates over the same index space (the producer's index equals the
// consumer's). A broadcast pair maps a producer Broadcast dim (index 0 in storage) to whatever
// the consumer iterates. Dims of slice, pad and cat whose index is shifted, and all dims of
// reshape and gather's data input, are not paired at all: the index pass maps them with the
// op's own formula.

#include <vector>

#include "braze/ir/fusion.h"

namespace braze::lower {

struct DimPair {
  const IterDomain* producer = nullptr;
  const IterDomain* consumer = nullptr;
  bool exact = false;
};

/// The pairs between input `input` of `expr` (its user-visible logical dims) and output
/// `output` of `expr` (all its root dims, reductions included; the root is the logical domain
/// except for rFactor's partial results). Scalar inputs have none.
std::vector<DimPair> mapProducerToConsumer(const Expr& expr, size_t input, size_t output = 0);

}  // namespace braze::lower
