#pragma once

// Fusions the segmenter's tests split, each with input sizes for the reference evaluator.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "braze/eval/reference_evaluator.h"
#include "braze/ir/fusion.h"

namespace braze::test {

struct SegmentCase {
  std::string name;
  std::function<std::unique_ptr<Fusion>()> make;
  std::vector<std::vector<int64_t>> sizes;  ///< of the tensor inputs, in order
  std::vector<ScalarValue> scalars = {};    ///< of the scalar inputs, in order
};

/// Layer norm backward (float32 and bfloat16), softmax + GELU, two reductions over different
/// axes of one input, a reduction feeding a broadcast feeding a second reduction, a slice and a
/// reshape, an expand to a size only another input has, scalar inputs, an iota, and a cast of
/// an input that is both an output and read by two reductions.
const std::vector<SegmentCase>& segmentCases();

/// The case named `name`.
const SegmentCase& segmentCase(const std::string& name);

}  // namespace braze::test
