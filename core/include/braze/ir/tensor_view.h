#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "braze/ir/iter_domain.h"
#include "braze/ir/sharding.h"
#include "braze/ir/statement.h"
#include "braze/ir/stream_axes.h"

namespace braze {

/// Where a tensor lives in a kernel. Fusion inputs and outputs are Global; scheduling may
/// move intermediates to Shared or Local (registers).
enum class MemoryType : uint8_t { Global, Shared, Local };

std::string_view toString(MemoryType type);

/// A tensor: a dtype and two domains over IterDomains.
///
///  - The logical domain is what the user sees: one IterDomain per dimension, in user order.
///    A reduction's output keeps its reduced dimensions as Reduction IterDomains, so that
///    lowering can find the reduction loop; `logicalNoReductions()` is the user-visible shape.
///  - The loop domain is how the tensor is computed. It equals the logical domain until
///    scheduling splits, merges and reorders it; scheduling never touches the logical domain.
///
/// Fusion inputs also carry a layout: the allocation order (user-visible dims from outermost
/// to innermost in memory) and, per user-visible dim, whether its stride equals the extent
/// times the stride of the next inner non-broadcast dim in allocation order (the innermost
/// one: stride 1). Lowering may fold contiguous dims; inputs that break the promise are
/// refused when bound.
class TensorView : public Val {
 public:
  static bool classof(const Statement* s) {
    return s->statementKind() == StatementKind::TensorView;
  }

  TensorView(Fusion& fusion, DataType dtype, std::vector<IterDomain*> logical);

  const std::vector<IterDomain*>& logical() const { return logical_; }
  /// The logical domain without Reduction IterDomains: the tensor's user-visible shape.
  std::vector<IterDomain*> logicalNoReductions() const;
  int64_t nDims() const { return static_cast<int64_t>(logical_.size()); }
  /// The user-visible rank (reductions excluded).
  int64_t rank() const { return static_cast<int64_t>(logicalNoReductions().size()); }
  IterDomain* axis(int64_t logical_position) const;
  bool hasReduction() const;

  /// The domain the defining op's dims refer to. It is the logical domain for every tensor
  /// except the producer rFactor creates: that tensor's logical domain is derived from its root
  /// by the Split/Merge exprs of the reduction axes it splits off, so that the partial results
  /// it keeps become dims of its own (the root maps to the op's input, the logical domain to
  /// the consumer that finishes the reduction).
  const std::vector<IterDomain*>& root() const { return root_.empty() ? logical_ : root_; }
  bool hasRoot() const { return !root_.empty(); }

  const std::vector<IterDomain*>& loop() const { return loop_; }
  /// Replaces the loop domain; only the scheduling primitives call this.
  void setLoop(std::vector<IterDomain*> loop) { loop_ = std::move(loop); }
  /// Replaces the root and logical domains; only the scheduling primitives call this (cacheBefore
  /// of a reduction, rFactor), which keep the user-visible dims. An empty `root` means "same as
  /// logical".
  void setDomains(std::vector<IterDomain*> root, std::vector<IterDomain*> logical);

  /// Allocation order over logicalNoReductions() positions, outermost first. Identity unless
  /// set for an input with another memory layout.
  const std::vector<int64_t>& allocationOrder() const { return allocation_order_; }
  /// Per logicalNoReductions() position: true/false for Iteration dims, nullopt for Broadcast.
  const std::vector<std::optional<bool>>& contiguity() const { return contiguity_; }
  void setLayout(std::vector<int64_t> allocation_order,
                 std::vector<std::optional<bool>> contiguity);

  MemoryType memoryType() const { return memory_type_; }
  void setMemoryType(MemoryType type) { memory_type_ = type; }

  /// The axis the runtime slices this tensor along, one slice per stream-loop iteration
  /// (braze/ir/stream_axes.h); nullopt for a tensor computed whole.
  const std::optional<StreamAxis>& streamAxis() const { return stream_axis_; }
  void setStreamAxis(std::optional<StreamAxis> axis) { stream_axis_ = std::move(axis); }

  /// The devices this tensor is spread over and its sharded axes (braze/ir/sharding.h); nullopt
  /// for a tensor of a single-device fusion.
  const std::optional<Sharding>& sharding() const { return sharding_; }
  void setSharding(std::optional<Sharding> sharding) { sharding_ = std::move(sharding); }
  /// Places this tensor on `mesh`, replicated until an axis is parallelized as DIDx / DIDy
  /// (after a split by the mesh dim's size).
  TensorView* setDeviceMesh(DeviceMesh mesh) {
    sharding_ = Sharding{std::move(mesh), {}, {}};
    return this;
  }

  // ---- Scheduling primitives (implemented in core/src/sched). They change only the loop
  // domain, parallel types, memory type and inline position, never the math. Axes index the
  // loop domain (negative counts from the end). Each returns `this` for chaining unless noted;
  // an invalid request is refused with an Error naming the tensor and the axis.

  /// Loop IterDomain at `axis` (negative counts from the end).
  IterDomain* loopAxis(int64_t axis) const;
  int64_t nLoopDims() const { return static_cast<int64_t>(loop_.size()); }

  /// Replaces loop axis `axis` by (outer, inner) with inner extent `factor` (outer extent
  /// when !inner_split). A factor that does not divide the extent leaves a remainder that
  /// lowering predicates.
  TensorView* split(int64_t axis, int64_t factor, bool inner_split = true);
  TensorView* split(int64_t axis, Scalar* factor, bool inner_split = true);
  /// Replaces loop axes `outer` and `inner` by one axis iterating over both (outer-major).
  TensorView* merge(int64_t outer, int64_t inner);
  TensorView* merge(int64_t outer) { return merge(outer, outer + 1); }
  /// Moves loop axes: old_to_new[i] = {old position, new position}; unnamed axes keep their
  /// relative order.
  TensorView* reorder(const std::vector<std::pair<int64_t, int64_t>>& old_to_new);
  TensorView* parallelize(int64_t axis, ParallelType type);

  /// Splits this reduction into two: a new producer that reduces the loop axes `axes` (which
  /// must be Reduction axes) and this tensor, which reduces the rest of them from the
  /// producer's partial results. Returns the new producer.
  TensorView* rFactor(const std::vector<int64_t>& axes);
  /// Inserts a copy (Set) before this tensor: the copy takes this tensor's definition and
  /// this tensor becomes a Set of it. Returns the copy (the new producer).
  TensorView* cacheBefore();
  /// Inserts a copy after this tensor that all its consumers read instead. Returns the copy.
  TensorView* cacheAfter();
  /// For a fusion output that is also read inside the fusion: the consumers keep reading this
  /// tensor while a copy becomes the fusion output. Returns the copy.
  TensorView* cacheFork();

  /// This tensor is computed inside the first `inlinePosition()` loops of its consumers.
  int64_t inlinePosition() const { return inline_position_; }
  /// Sets the inline position after checking it against consumers (sched/inlining.h);
  /// scheduling code calls inlineAt() rather than this.
  void setInlinePosition(int64_t position) { inline_position_ = position; }

  /// "T<number>".
  std::string name() const override;

 private:
  friend class Fusion;
  Statement* cloneInto(Fusion& target, const CloneMap& map) const override;
  /// Called by Fusion::clone once every statement exists: rFactor and cacheBefore can give a
  /// tensor root or logical IterDomains created after the tensor itself.
  void restoreDomains(const TensorView& original, const CloneMap& map);
  std::vector<IterDomain*> logical_;
  std::vector<IterDomain*> root_;  // empty unless it differs from logical_
  std::vector<IterDomain*> loop_;
  std::vector<int64_t> allocation_order_;
  std::vector<std::optional<bool>> contiguity_;
  MemoryType memory_type_ = MemoryType::Global;
  int64_t inline_position_ = 0;
  std::optional<StreamAxis> stream_axis_;
  std::optional<Sharding> sharding_;
};

}  // namespace braze
