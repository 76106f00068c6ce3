#pragma once

#include <optional>
#include <string>
#include <vector>

#include "braze/ir/iter_domain.h"
#include "braze/ir/statement.h"

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

  const std::vector<IterDomain*>& loop() const { return loop_; }
  /// Replaces the loop domain; only the scheduling primitives call this.
  void setLoop(std::vector<IterDomain*> loop) { loop_ = std::move(loop); }

  /// Allocation order over logicalNoReductions() positions, outermost first. Identity unless
  /// set for an input with another memory layout.
  const std::vector<int64_t>& allocationOrder() const { return allocation_order_; }
  /// Per logicalNoReductions() position: true/false for Iteration dims, nullopt for Broadcast.
  const std::vector<std::optional<bool>>& contiguity() const { return contiguity_; }
  void setLayout(std::vector<int64_t> allocation_order,
                 std::vector<std::optional<bool>> contiguity);

  MemoryType memoryType() const { return memory_type_; }
  void setMemoryType(MemoryType type) { memory_type_ = type; }

  /// "T<number>".
  std::string name() const override;

 private:
  Statement* cloneInto(Fusion& target, const CloneMap& map) const override;
  std::vector<IterDomain*> logical_;
  std::vector<IterDomain*> loop_;
  std::vector<int64_t> allocation_order_;
  std::vector<std::optional<bool>> contiguity_;
  MemoryType memory_type_ = MemoryType::Global;
};

}  // namespace braze
