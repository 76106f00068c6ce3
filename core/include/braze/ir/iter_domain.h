#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "braze/ir/statement.h"

namespace braze {

class Scalar;

/// What a dimension does: iterate over data, get reduced away, or stand for a broadcast
/// (extent 1, possibly expanded to a larger logical extent without storage).
enum class IterType : uint8_t { Iteration, Reduction, Broadcast };

/// How a loop IterDomain is executed. Only scheduling changes it.
enum class ParallelType : uint8_t {
  Serial,
  BIDx,
  BIDy,
  BIDz,
  TIDx,
  TIDy,
  TIDz,
  Vectorize,
  Unroll,
  Unswitch,
  Stream,
  DIDx,  ///< split over the last dim of the tensor's device mesh (braze/ir/sharding.h)
  DIDy,  ///< split over the first dim of a 2-D device mesh
};

std::string_view toString(IterType type);
std::string_view toString(ParallelType type);
bool isThreadDim(ParallelType type);  ///< TIDx/y/z
bool isBlockDim(ParallelType type);   ///< BIDx/y/z
std::ostream& operator<<(std::ostream& os, IterType type);
std::ostream& operator<<(std::ostream& os, ParallelType type);

/// One dimension of a TensorView's logical or loop domain: an extent (an Index scalar Val),
/// an IterType and a ParallelType. A Broadcast IterDomain has extent 1; when it is expanded
/// (`expand`, `broadcast_in_dim`), `expandedExtent()` is the logical size it stands for, with
/// no storage behind it.
class IterDomain : public Val {
 public:
  static bool classof(const Statement* s) {
    return s->statementKind() == StatementKind::IterDomain;
  }

  IterDomain(Fusion& fusion, Scalar* extent, IterType iter_type, Scalar* expanded_extent = nullptr);

  Scalar* extent() const { return extent_; }
  /// The extent a user sees: the expanded extent of an expanded broadcast, else extent().
  Scalar* logicalExtent() const { return expanded_extent_ ? expanded_extent_ : extent_; }
  Scalar* expandedExtent() const { return expanded_extent_; }
  bool hasExpandedExtent() const { return expanded_extent_ != nullptr; }

  IterType iterType() const { return iter_type_; }
  bool isIteration() const { return iter_type_ == IterType::Iteration; }
  bool isReduction() const { return iter_type_ == IterType::Reduction; }
  bool isBroadcast() const { return iter_type_ == IterType::Broadcast; }

  ParallelType parallelType() const { return parallel_type_; }
  void parallelize(ParallelType type) { parallel_type_ = type; }

  /// A serial loop over this axis runs from the last index down to 0. Where a row is read in
  /// several passes, alternating directions makes each pass start on what the previous one
  /// read last, which is still in L2. Meaningful for serial loops only.
  bool isReversed() const { return reversed_; }
  void setReversed(bool reversed) { reversed_ = reversed; }

  /// "i5{s0}", "r7{s1}", "b3{1}", "b3{1 ex s4}"; parallelized axes add their type
  /// ("i5{s0}:TIDx"), reversed ones ":reversed".
  std::string name() const override;

 private:
  Statement* cloneInto(Fusion& target, const CloneMap& map) const override;
  Scalar* extent_;
  Scalar* expanded_extent_;
  IterType iter_type_;
  ParallelType parallel_type_ = ParallelType::Serial;
  bool reversed_ = false;
};

}  // namespace braze
