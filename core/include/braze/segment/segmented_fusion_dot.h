#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "braze/segment/segmented_fusion.h"

namespace braze {

/// What a DOT graph of a segmentation shows beyond its structure.
struct DotAnnotations {
  /// Extra lines of a segment's label after its id and scheduler (its params summary, ...).
  std::function<std::vector<std::string>(const Segment&)> segment_lines;
  /// The bytes of an original tensor, shown on the edges that carry it; nullopt (or unset):
  /// no bytes shown.
  std::function<std::optional<int64_t>(const TensorView&)> tensor_bytes;
};

/// The segmentation as a Graphviz digraph: one box per segment (id, scheduler, extra lines),
/// one ellipse per original input and output, and an edge per tensor passed between them,
/// labelled with the tensor's original name and its bytes when known. Extents passed as scalars
/// are not drawn. Deterministic, so it can be compared as text.
std::string toDot(const SegmentedFusion& segmented, const DotAnnotations& annotations = {});

}  // namespace braze
