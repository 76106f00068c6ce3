#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// One segment of a fusion: a standalone, unscheduled Fusion that computes part of an original
/// fusion, and where each of its inputs and outputs lives in the original.
///
/// Its inputs are, in order of `fusion->inputs()`: original fusion inputs (tensors and scalars),
/// intermediates another segment writes (new input TensorViews: contiguous, reduction dims
/// dropped, an expanded broadcast dim an Iteration dim of its expanded extent), and Index scalars
/// for extents the segment uses but cannot bind from its own tensor inputs. `inputs[i]` is the
/// original Val of input i: a TensorView, a scalar input, or an extent Scalar of the original
/// (whose value the caller evaluates on the original fusion, so an extent reaches a segment without
/// its producer's tensor).
struct Segment {
  int64_t id = 0;  ///< position in SegmentedFusion::segments
  std::unique_ptr<Fusion> fusion;
  std::vector<const Val*> inputs;   ///< original Val of each fusion->inputs()[i]
  std::vector<const Val*> outputs;  ///< original TensorView of each fusion->outputs()[i]
  /// The original Exprs the segment computes, topologically ordered; forwarded and recomputed
  /// ones (replicated into several segments) included, and the scalar Exprs copied for its
  /// extents and scalar operands.
  std::vector<const Expr*> exprs;
  /// The scheduler that accepted the segment while segmenting ("id@version"), or empty.
  std::string scheduler;
};

/// A fusion split into segments that schedulers accept, in an order where every tensor input
/// of a segment is an original input or an output of an earlier segment.
///
/// Every tensor output of the original that some Expr computes is an output of exactly one
/// segment. Original outputs no segment writes (kernels write tensors only): an output that is
/// also an original input, and a scalar output (computed by scalar Exprs, evaluated on the
/// original like an extent).
struct SegmentedFusion {
  const Fusion* original = nullptr;
  std::vector<Segment> segments;

  /// BRAZE_DUMP=segments: each segment with its inputs, outputs (original names), scheduler
  /// and math.
  std::string toString() const;
};

/// Decides whether a candidate segment can be scheduled. The segmenter asks it at most once
/// per candidate group of original Exprs.
class SegmentChecker {
 public:
  virtual ~SegmentChecker() = default;
  /// The name of a scheduler ("id@version") that accepts `segment` (a standalone fusion whose
  /// input i is `original_inputs[i]` of the original fusion), or nullopt.
  virtual std::optional<std::string> accepts(const Segment& segment) = 0;
  /// Why no scheduler accepts `segment`, for the error segmentFusion throws when an Expr fits
  /// no segment; empty when the checker cannot say. Asked only then, after accepts refused it.
  virtual std::string refusalReason(const Segment& /*segment*/) { return {}; }
};

struct SegmenterOptions {
  /// Replicate cheap unary chains that start at fusion inputs, and factory ops (full, iota,
  /// arange), into every segment that uses them instead of passing them through memory.
  /// Forwarded: Exprs with one tensor input, which is a fusion input or forwarded, that are
  /// elementwise (unary ops, casts, binary and ternary ops whose other operands are scalars),
  /// broadcast, expand, squeeze or set; and factories (full, iota). Only such Exprs that some
  /// other Expr needs are forwarded.
  bool forward_input_chains = true;
  /// After merging, let a segment compute again an intermediate another segment would write
  /// for it, when the Exprs computing it are cheap (elementwise, casts, broadcast, expand,
  /// squeeze, set: no reductions) and the sources they read that the segment does not read
  /// already (fusion inputs, tensors some segment writes anyway) take fewer bytes than the
  /// segment saves: the intermediate's read, and its write when no one else reads it. The
  /// writer then drops it from its outputs. Kept only where the checker accepts every changed
  /// segment. (A layer norm backward's column sums read x, 2 bytes an element in bfloat16,
  /// instead of xhat, written and read as float32.)
  bool recompute_intermediates = true;
  /// The bytes of an original tensor, which orders merges (the largest intermediates are kept
  /// on chip first). Nullopt or unset: the dtype's size times the product of the tensor's
  /// user-visible extents, a symbolic extent counting as kSymbolicExtent elements. A runtime
  /// that knows the input sizes passes the real bytes.
  std::function<std::optional<int64_t>(const TensorView&)> tensor_bytes;
  /// The stage of each tensor Expr when the fusion runs in stages (host::StreamStages: stream
  /// loops and what runs between them): no segment holds Exprs of two stages, and a forwarded
  /// output is written by a segment of its own Expr's stage. Unset: one stage.
  std::function<int32_t(const Expr&)> stage_of;
  /// What a symbolic extent counts for in the default estimate of bytes: large, so that a
  /// tensor over [rows, row] outweighs one over [rows].
  static constexpr int64_t kSymbolicExtent = 1024;
};

/// Builds the segment computing `exprs` (original Exprs, any order) of `original`: its inputs
/// are what the Exprs read that none of them computes; its outputs are what they compute that
/// an original output or an Expr outside `exprs` reads.
///
/// The segment is valid input for the reference evaluator and the schedulers (see
/// extract_segment.cpp for what is copied and what becomes an input). Requires an unscheduled
/// fusion; a scheduled tensor is an Error naming it.
Segment extractSegment(const Fusion& original, std::span<const Expr* const> exprs);

/// As above, with the outputs chosen by the caller: original TensorViews the Exprs compute, in
/// the order the segment returns them. For a caller that replicates Exprs into several segments
/// (forwarding) and decides which of them writes each tensor.
Segment extractSegment(const Fusion& original, std::span<const Expr* const> exprs,
                       std::span<const Val* const> outputs);

/// Splits `fusion` into segments `checker` accepts: the whole fusion when it is accepted whole,
/// else groups merged from one per Expr without creating cycles, preferring merges that keep
/// the largest intermediates on chip. Throws braze::Error naming an Expr no scheduler accepts
/// even alone.
///
/// Merging (segment_fusion.cpp): producer-consumer neighbours first, those that save the most
/// bytes of memory traffic first (SegmenterOptions::tensor_bytes), in rounds until no merge is
/// accepted; then groups that read a common tensor (siblings, such as two column sums of one
/// input), the same way. Two groups that another path connects (A -> C -> B) merge only
/// together with every group on such paths, so no cycle appears. Scalar Exprs and forwarded
/// Exprs (SegmenterOptions) are replicated into each segment that needs them. Then
/// intermediates cheaper to compute again than to pass through memory are recomputed by their
/// readers (SegmenterOptions::recompute_intermediates). The checker is asked at most once per
/// candidate group and set of outputs. Cost: near-linear in the number of Exprs while segments
/// stay small (each accepted merge or recomputation extracts the changed groups once).
SegmentedFusion segmentFusion(const Fusion& fusion, SegmentChecker& checker,
                              const SegmenterOptions& options = {});

}  // namespace braze
