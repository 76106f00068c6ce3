#pragma once

// The segmenter's graph of groups: nodes (Exprs, numbered 0..n-1 in a topological order)
// partitioned into groups, with the producer-consumer edges between groups kept acyclic and in
// a topological order that each merge repairs locally. Internal to core/src/segment.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace braze::segment_detail {

/// The groups a merge takes and how it reorders the groups between them; valid until the next
/// merge.
struct MergePlan {
  /// The groups merged: the two asked for and every group on a path between them (merging only
  /// the two would put a cycle through those), in topological order.
  std::vector<int32_t> groups;
  /// Groups between the first and last of `groups` in the order that descend from the first:
  /// they move after the merged group.
  std::vector<int32_t> descendants;
};

class GroupGraph {
 public:
  /// One group per node, in the topological order 0..nodes-1, and an edge for each (producer,
  /// consumer) pair, which must go from a smaller node to a larger one.
  GroupGraph(int32_t nodes, const std::vector<std::pair<int32_t, int32_t>>& edges);

  int32_t groupOf(int32_t node) const { return group_of_[static_cast<size_t>(node)]; }
  /// The nodes of a live group, ascending.
  const std::vector<int32_t>& members(int32_t group) const {
    return members_[static_cast<size_t>(group)];
  }
  /// Increases each time the group takes in others.
  int64_t version(int32_t group) const { return version_[static_cast<size_t>(group)]; }

  /// What merging groups `a` and `b` (distinct, live) takes. Costs the number of groups between
  /// them in the order that descend from the earlier one, and their edges.
  MergePlan plan(int32_t a, int32_t b);
  /// Merges the groups of `plan` (made since the last merge) into one and returns it.
  int32_t merge(const MergePlan& plan);

  /// The live groups in topological order.
  std::vector<int32_t> groupsInOrder() const;

 private:
  int32_t position(int32_t group) const { return position_[static_cast<size_t>(group)]; }
  /// A fresh mark for the DFS and membership tests.
  uint32_t nextMark();

  std::vector<int32_t> group_of_;
  std::vector<std::vector<int32_t>> members_;
  std::vector<std::vector<int32_t>> successors_;
  std::vector<std::vector<int32_t>> predecessors_;
  std::vector<int64_t> version_;
  std::vector<int32_t> order_;     // groups by position; -1 where a merged group was
  std::vector<int32_t> position_;  // per group
  std::vector<uint32_t> forward_mark_;
  std::vector<uint32_t> backward_mark_;
  uint32_t mark_ = 0;
};

}  // namespace braze::segment_detail
