#pragma once

// The producer/consumer/sibling graph of a fusion's tensors, as the propagation helpers walk
// it. Internal to core/src/sched.

#include <unordered_set>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::sched_detail {

/// How a neighbor relates to the tensor it was reached from.
enum class Relation { Producer, Consumer, Sibling };

struct Neighbor {
  TensorView* tv;
  Relation relation;
};

/// The neighbors of `tv` within `allowed`: producers of its definition, consumers computed by
/// live Exprs, and the other outputs of its definition; not across an edge where the consumer
/// reads the producer only at data-dependent positions (select, index_select, gather).
std::vector<Neighbor> neighborsOf(TensorView* tv,
                                  const std::unordered_set<const TensorView*>& allowed);

/// Pairs (IterDomain of `from`, IterDomain of `to`) of the dims the edge relates: the logical
/// map for producer/consumer edges, position by position for siblings.
struct EdgeMap {
  std::vector<std::pair<IterDomain*, IterDomain*>> pairs;
  /// The domain of `from` the pairs start in (its logical or root domain).
  const std::vector<IterDomain*>* from_domain;
  /// The domain of `to` the pairs land in.
  const std::vector<IterDomain*>* to_domain;
};
EdgeMap edgeMap(TensorView* from, const Neighbor& to);

}  // namespace braze::sched_detail
