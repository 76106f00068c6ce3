#pragma once

// Runs a segmentation segment by segment on the reference evaluator, passing tensors between
// segments and evaluating extent scalars on the original, as the runtime does on the GPU.

#include <vector>

#include "braze/eval/reference_evaluator.h"
#include "braze/segment/segmented_fusion.h"

namespace braze::test {

/// The original fusion's outputs, in order, computed by evaluating `segmented`'s segments in
/// order with `arguments` (the original's inputs). Fails (an Error) when a segment reads a
/// tensor no earlier segment wrote, or when two segments write the same tensor.
std::vector<EvaluatorArgument> evaluateSegmented(const SegmentedFusion& segmented,
                                                 const std::vector<EvaluatorArgument>& arguments);

/// Random arguments for `fusion`'s inputs: tensors of `tensor_sizes` (in order of the tensor
/// inputs) with values in [low, high], scalars from `scalars` (in order of the scalar inputs).
std::vector<EvaluatorArgument> randomArguments(
    const Fusion& fusion, const std::vector<std::vector<int64_t>>& tensor_sizes,
    const std::vector<ScalarValue>& scalars = {}, uint64_t seed = 7, double low = -2.0,
    double high = 2.0);

/// Expects `segmented` evaluated segment by segment to give what the whole fusion gives.
void expectSameAsWhole(const SegmentedFusion& segmented,
                       const std::vector<EvaluatorArgument>& arguments);

}  // namespace braze::test
