#pragma once

// After merging, a segment computes again an intermediate that another segment would write
// for it, when the cheap ops that compute it read fewer bytes than the round trip through
// memory costs (SegmenterOptions::recompute_intermediates). Internal to core/src/segment.

#include <cstdint>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::segment_detail {

/// What recomputeIntermediates reads of the segmenter: its nodes (the tensor Exprs that are
/// neither forwarded nor scalar, in topological order), what a tensor costs in memory, and the
/// checker.
class RecomputeGraph {
 public:
  virtual ~RecomputeGraph() = default;
  virtual const std::vector<const Expr*>& nodes() const = 0;
  /// The node of `expr`, or -1 for a forwarded or scalar Expr.
  virtual int32_t nodeOf(const Expr& expr) const = 0;
  /// What a segment reads from memory for `tv`, the output of a forwarded Expr: the fusion
  /// input its forwarded chain starts from, or null for a factory's chain.
  virtual const TensorView* memorySource(const TensorView& tv) const = 0;
  /// The bytes `tv` takes in memory (SegmenterOptions::tensor_bytes).
  virtual double bytesOf(const TensorView& tv) const = 0;
  virtual bool isOriginalOutput(const Val& val) const = 0;
  /// Whether the checker accepts the segment of `nodes` (ascending; their forwarded Exprs come
  /// along) writing `outputs` (any order). Asked at most once per question.
  virtual bool accepts(const std::vector<int32_t>& nodes, std::vector<const Val*> outputs) = 0;
};

/// A merged group after recomputeIntermediates.
struct RecomputedGroup {
  /// Its own nodes that something still needs, and those it computes again; ascending.
  std::vector<int32_t> nodes;
  /// What it writes: tensors of its own nodes that an original output is or another group
  /// reads; by id.
  std::vector<const Val*> outputs;
  /// Whether its nodes or outputs differ from the merged group's (it must be extracted and
  /// checked again).
  bool changed = false;
};

/// For `groups` (each one's nodes ascending, the groups in an order where every group reads
/// only what earlier ones write, each accepted by the checker): replaces a tensor T that a
/// group B reads from another group A by recomputation in B, when
///   - T's Expr and the Exprs it needs up to B's sources are cheap (isCheapToRecompute), at
///     most kMaxRecomputedExprs of them; the sources are fusion inputs, tensors some group
///     writes anyway (they precede B) and tensors B computes;
///   - the bytes of the sources B does not read yet are fewer than B saves: T's read, and T's
///     write when B was its last reader and T is not an original output;
///   - the checker accepts B with the copied Exprs, and every group that then writes less
///     (A drops T from its outputs and the nodes that only computed T; a group left without
///     outputs disappears, which may release what it read, and so on).
/// Otherwise T stays materialized. Groups are visited in order and each one's intermediates
/// by bytes (largest first), all that are worth it at once (one question per changed group),
/// and one at a time when the checker refuses that; rounds repeat while some group changes
/// (at most kMaxRecomputeRounds), so that a chain whose sources another recomputation removed
/// from memory, or whose last other reader recomputed it, is tried again. Returns the groups
/// left, in the same order. Deterministic. Cost per round: linear in the groups' nodes, a walk
/// of at most kMaxRecomputedExprs per intermediate, and for each group that recomputes, the
/// extraction of the groups that change (per intermediate when the checker refuses them all).
std::vector<RecomputedGroup> recomputeIntermediates(
    RecomputeGraph& graph, const std::vector<std::vector<int32_t>>& groups);

inline constexpr int64_t kMaxRecomputedExprs = 32;
inline constexpr int kMaxRecomputeRounds = 4;

}  // namespace braze::segment_detail
