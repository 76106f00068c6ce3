#pragma once

// Which dim of a reference tensor every tensor's dims index. Schedulers pick one tensor whose
// loop all others follow (the reference) and need to know, for each tensor, which of its dims
// walk along which of the reference's:
//
//   T0[i0, i1] = input;  T1[b0, i1] = input (broadcast along 0);  T2[i0, i1] = T0 + T1
//   reference T2:  T0 -> {0, 1},  T1 -> {0, 1},  T2 -> {0, 1}
//   T3[i0, r1(R)] = sum(T2, {1});  T4[i0, b1] = broadcast(T3);  T5[i0, i1] = T2 - T4
//   reference T3:  T2, T4, T5 -> {0, 1} (T4's b1 meets r1 through T5 and T2)

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// Per tensor, per logical dim (reduced dims included): the reference's logical dim it indexes,
/// or -1 when no chain of ops pairs it with one.
using ReferenceDimMap = std::unordered_map<const TensorView*, std::vector<int64_t>>;

/// Maps every tensor of `fusion` to `reference`'s logical dims by carrying each dim through
/// every op's logicalMap (broadcast dims included), both from producer to consumer and back,
/// until nothing changes. Requires `reference` to be a tensor of `fusion`. Read before
/// rFactor, while each tensor's root and logical dims are the same.
ReferenceDimMap mapDimsToReference(const Fusion& fusion, const TensorView* reference);

/// Why `reference`'s loops cannot write every output, or nullopt: an output has a dim that is
/// not a broadcast and that `map` (from mapDimsToReference) pairs with no dim of the
/// reference, so no loop of the kernel walks it.
std::optional<std::string> unmappedOutputDimProblem(const Fusion& fusion,
                                                    const ReferenceDimMap& map,
                                                    const TensorView* reference);

/// The position among `fusion`'s outputs (all tensors) of the one with the fewest broadcast
/// dims, the first of them on a tie: its loop covers every element any output has, so
/// schedulers that follow one output take it as their reference.
int64_t outputWithFewestBroadcasts(const Fusion& fusion);

/// The position of `id` in tv's root domain, else in its logical domain (reduced dims
/// included), or -1 when `tv` holds neither.
int64_t logicalPosition(const TensorView* tv, const IterDomain* id);

}  // namespace braze
