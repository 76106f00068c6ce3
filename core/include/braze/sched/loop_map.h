#pragma once

#include <unordered_map>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// Which IterDomains of a producer and a consumer stand for the same iteration.
///
/// It starts from logicalMap (producer logical <-> consumer root) and follows both transform
/// histories forward: a consumer Split matches a producer Split of a mapped IterDomain with the
/// same factor and direction (their outputs map), a Merge matches a Merge of mapped inputs.
/// Where only one input of a Merge has a counterpart and the other exists on one side only
/// (a dim a broadcast op inserted, a squeezed or reduced dim), the Merge's output maps to the
/// counterpart of the input that has one: the producer is then recomputed along the extra dim.
///
///   T1[i0, i1] = exp(T0[i0, i1])        T1: split(1, 4) -> [i0, i1/4, 4]
///   T2[i0, i1] = add(T1, 1)             T2: split(1, 4) -> [i0, i1/4, 4]   all three map
///
/// Both maps hold logical, root and intermediate IterDomains as well as loop ones.
struct IterDomainMap {
  std::unordered_map<IterDomain*, IterDomain*> producer_to_consumer;
  std::unordered_map<IterDomain*, IterDomain*> consumer_to_producer;
};

/// The map between `producer` (an input of consumer's definition) and `consumer`.
IterDomainMap mapIterDomains(const TensorView* producer, const TensorView* consumer);

/// For each of the producer's loop IterDomains, the consumer loop IterDomain it shares a loop
/// with, or nullptr. This is what inlining checks and what lowering's loop map is built from.
std::vector<IterDomain*> mapLoopDomains(const TensorView* producer, const TensorView* consumer);

}  // namespace braze
