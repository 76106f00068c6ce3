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
/// dropped), and Index scalars for extents the segment uses but cannot bind from its own tensor
/// inputs. `inputs[i]` is the original Val of input i: a TensorView, a scalar input, or an
/// extent Scalar of the original (whose value the caller evaluates on the original fusion, so
/// an extent reaches a segment without its producer's tensor).
struct Segment {
  int64_t id = 0;  ///< position in SegmentedFusion::segments
  std::unique_ptr<Fusion> fusion;
  std::vector<const Val*> inputs;   ///< original Val of each fusion->inputs()[i]
  std::vector<const Val*> outputs;  ///< original TensorView of each fusion->outputs()[i]
  /// The original Exprs the segment computes, topologically ordered; forwarded ones (replicated
  /// into several segments) included.
  std::vector<const Expr*> exprs;
  /// The scheduler that accepted the segment while segmenting ("id@version"), or empty.
  std::string scheduler;
};

/// A fusion split into segments that schedulers accept, in an order where every tensor input
/// of a segment is an original input or an output of an earlier segment.
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
};

struct SegmenterOptions {
  /// Replicate cheap unary chains that start at fusion inputs, and factory ops (full, iota,
  /// arange), into every segment that uses them instead of passing them through memory.
  bool forward_input_chains = true;
};

/// Builds the segment computing `exprs` (original Exprs, any order) of `original`: its inputs
/// are what the Exprs read that none of them computes; its outputs are what they compute that
/// an original output or an Expr outside `exprs` reads.
Segment extractSegment(const Fusion& original, std::span<const Expr* const> exprs);

/// Splits `fusion` into segments `checker` accepts: the whole fusion when it is accepted whole,
/// else groups merged from one per Expr without creating cycles, preferring merges that keep
/// the largest intermediates on chip. Throws braze::Error naming an Expr no scheduler accepts
/// even alone.
SegmentedFusion segmentFusion(const Fusion& fusion, SegmentChecker& checker,
                              const SegmenterOptions& options = {});

}  // namespace braze
