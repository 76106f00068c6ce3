#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "braze/ir/fusion.h"
#include "braze/ir/stream_axes.h"

namespace braze::host {

/// A run of a fusion's tensor Exprs, consecutive in Fusion::exprs() order, that the host
/// program executes once or, for a loop stage, once per slice of a stream axis.
struct StreamStage {
  bool loop = false;
  /// Loop stages: how the stream axis is sliced, and a tensor of the stage whose stream axis
  /// (reference->streamAxis()) gives the extent the loop runs over.
  StreamAxis slicing;
  const TensorView* reference = nullptr;
  std::vector<const Expr*> exprs;
};

/// Which Exprs of a fusion run in stream loops (ARCHITECTURE.md, "The runtime's plan is a host
/// program"): an Expr whose outputs have a stream axis (TensorView::streamAxis) runs in a loop;
/// consecutive such Exprs whose stream axes are mapped (the same index space, carried through
/// the ops' dims) and sliced alike share one loop; an Expr without a stream axis between them
/// splits the loop in two. Inside a loop stage each tensor an Expr reads is sliced along its
/// dim mapped to the stream axis, or read whole when it has none (a matmul's weight, a row of
/// weights broadcast over the sliced rows).
///
/// Refused with the tensor and the axis named: Exprs whose outputs disagree (some streamed,
/// some not, or on unmapped axes), a tensor with two dims mapped to one loop's axis, an op
/// that moves the stream axis' elements (reshape, slice, pad, cat, gather, ...) reading a
/// tensor without it, and a sliced tensor whose stream axis is not its outermost dim in memory
/// (its slices would not be one stride step).
class StreamStages {
 public:
  explicit StreamStages(const Fusion& fusion);

  bool hasLoops() const { return has_loops_; }
  const std::vector<StreamStage>& stages() const { return stages_; }
  /// The stage of a tensor Expr; -1 for scalar Exprs (replicated wherever needed).
  int32_t stageOf(const Expr& expr) const;
  /// The user-visible position (logicalNoReductions) along which loop stage `stage` slices
  /// `tv`, or nullopt when the stage reads it whole (or `stage` is not a loop).
  std::optional<int64_t> slicedAxis(const TensorView& tv, int32_t stage) const;
  /// The extent loop stage `stage` runs over: its reference tensor's stream axis extent.
  const Scalar* extentOf(int32_t stage) const;

  /// One line per stage: "stage 1: loop over T2 axis 0 in 4 slices: T2, T3".
  std::string toString() const;

 private:
  int32_t classOf(const IterDomain* id) const;
  int32_t rootOf(int32_t index) const;
  std::optional<int64_t> slicedAxisInClass(const TensorView& tv, int32_t axis_class) const;
  void check(int32_t stage) const;

  std::unordered_map<const IterDomain*, int32_t> id_index_;
  mutable std::vector<int32_t> parent_;  // union-find over id_index_
  std::vector<StreamStage> stages_;
  std::vector<int32_t> stage_classes_;  // per stage: the stream axis' class, -1 if no loop
  std::unordered_map<const Expr*, int32_t> stage_of_;
  bool has_loops_ = false;
};

/// Tensors that rewrites created after takeStreamAxes (statement id >= `first_new_statement`)
/// take the stream axis of the streamed tensors they feed, on the dim the op maps to it (where
/// that dim iterates), so that ops a rewrite put in place of streamed ones stay in their loop:
/// the sums that replace a Welford in a streamed layer norm.
void streamRewrittenProducers(Fusion& fusion, int64_t first_new_statement);

}  // namespace braze::host
