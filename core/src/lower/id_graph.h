#pragma once

// The relations between IterDomains that lowering needs, computed once per kernel:
//
//  - exact groups: IterDomains that iterate over the same index space (a producer dim and
//    the consumer dim an op maps it to, and the outputs of identical splits and merges of
//    those). Indices found for one member hold for all, which is how a loop index reaches
//    every tensor of a loop nest.
//  - loop groups: loop IterDomains that are one loop in the kernel, because a producer is
//    inlined into its consumers there (as the scheduling primitives' loop map relates them:
//    a producer's broadcast loop may share its consumer's). Each group has a promoted IterDomain:
//    the one of the tensor that owns the loop (is not inlined further), whose extent the loop has.

#include <unordered_map>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::lower {

/// A union-find over IterDomains.
class IdSets {
 public:
  int64_t find(const IterDomain* id) const;
  /// True when the union changed anything.
  bool join(const IterDomain* a, const IterDomain* b);
  bool same(const IterDomain* a, const IterDomain* b) const { return find(a) == find(b); }

 private:
  int64_t slot(const IterDomain* id) const;
  mutable std::unordered_map<const IterDomain*, int64_t> slot_of_;
  mutable std::vector<int64_t> parent_;
};

class IdGraph {
 public:
  /// `exprs`: the tensor Exprs of the kernel in topological order.
  explicit IdGraph(const std::vector<const Expr*>& exprs);

  int64_t exactGroup(const IterDomain* id) const { return exact_.find(id); }
  bool exactMapped(const IterDomain* a, const IterDomain* b) const { return exact_.same(a, b); }
  int64_t loopGroup(const IterDomain* id) const { return loop_.find(id); }
  /// The IterDomain whose extent and parallel type the loop of `loop_id`'s group has.
  const IterDomain* promoted(const IterDomain* loop_id) const;

  /// Every tensor an Expr of the kernel reads or writes, in first-seen order.
  const std::vector<const TensorView*>& tensors() const { return tensors_; }
  /// Split and Merge Exprs between `tv`'s logical and loop domains, in creation order.
  const std::vector<const Expr*>& transformsOf(const TensorView* tv) const;
  /// The union of transformsOf() over tensors(), in creation order.
  const std::vector<const Expr*>& allTransforms() const { return all_transforms_; }
  /// Every IterDomain of every tensor (root, logical, loop and in between), by statement id.
  std::vector<const IterDomain*> allIds() const;
  /// The tensor an IterDomain belongs to (logical, loop or in between), or null.
  const TensorView* ownerOf(const IterDomain* id) const;
  /// The inline position that counts for `tv` in this kernel: its own, or 0 when nothing in the
  /// kernel consumes it (a fusion output computed last owns all its loops).
  int64_t inlinePositionOf(const TensorView* tv) const;
  /// Consumers of `tv` among the kernel's Exprs' outputs.
  const std::vector<const TensorView*>& consumersOf(const TensorView* tv) const;

 private:
  void collectTransforms(const TensorView* tv);
  void mapThroughTransforms(IdSets& sets);
  void buildLoopGroups(const std::vector<const Expr*>& exprs);
  void checkSelfMapping() const;

  std::vector<const TensorView*> tensors_;
  std::unordered_map<const TensorView*, std::vector<const Expr*>> transforms_;
  std::unordered_map<const TensorView*, std::vector<const TensorView*>> consumers_;
  std::vector<const Expr*> all_transforms_;
  std::unordered_map<const IterDomain*, const TensorView*> owner_;
  IdSets exact_;
  IdSets loop_;
  std::unordered_map<int64_t, const IterDomain*> promoted_;
};

}  // namespace braze::lower
