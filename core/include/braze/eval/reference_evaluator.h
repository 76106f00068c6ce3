#pragma once

#include <variant>
#include <vector>

#include "braze/eval/host_tensor.h"
#include "braze/ir/fusion.h"

namespace braze {

/// One argument of a fusion run: a host tensor for a tensor input, a value for a scalar input.
using EvaluatorArgument = std::variant<HostTensor, ScalarValue>;

/// Runs a Fusion on host tensors: the oracle of every GPU test and the fallback where no GPU
/// exists.
///
/// Inputs may have any strides (non-contiguous, permuted, broadcast by stride 0); every
/// computation happens in float64 (int64 for integers, bool for bools), and values are rounded
/// to a narrower float only at Cast ops and when stored to an output of that dtype. Outputs are
/// new contiguous tensors (0-d outputs of shape []).
///
/// Arguments are validated before any work: their number, each tensor's dtype and rank against
/// the fusion's input, fixed sizes, broadcast dims (size 1), sizes shared between inputs, and
/// the declared layout (contiguity, allocation order). Each error names the input by position
/// and IR name, the dim, what was expected and what was found.
std::vector<EvaluatorArgument> evaluateFusion(const Fusion& fusion,
                                              const std::vector<EvaluatorArgument>& arguments);

/// Convenience for fusions whose inputs and outputs are all tensors. (A separate name, so
/// that `evaluateFusionTensors(f, {a, b})` is never ambiguous.)
std::vector<HostTensor> evaluateFusionTensors(const Fusion& fusion,
                                              const std::vector<HostTensor>& inputs);

}  // namespace braze
