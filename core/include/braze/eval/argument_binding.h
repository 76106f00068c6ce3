#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "braze/eval/expression_evaluator.h"
#include "braze/eval/host_tensor.h"
#include "braze/ir/fusion.h"

namespace braze {

/// What argument validation reads of a tensor: its metadata, never its elements, so that host
/// tensors (the reference evaluator) and device tensors (kernel launches) obey the same rules.
struct TensorArgumentInfo {
  DataType dtype = DataType::Float32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  ///< in elements
  bool has_storage = true;       ///< false when a tensor with elements has no data
  std::string description;       ///< how messages show it: "float32[2, 3] strides [3, 1]"
};

/// One argument as validation sees it: a tensor's metadata or a scalar input's value.
using ArgumentInfo = std::variant<TensorArgumentInfo, ScalarValue>;

/// The metadata of a host tensor.
TensorArgumentInfo argumentInfoOf(const HostTensor& tensor);

/// Validates the arguments of a run of `fusion` against its inputs, before any work: their
/// number, each tensor's dtype and rank, fixed sizes, broadcast dims (size 1), sizes shared
/// between inputs, and the declared layouts (contiguity, allocation order). Then binds scalar
/// inputs (cast to their dtype, floats rounded to its precision) and input extents in
/// `scalars`. `caller` begins the message about a wrong argument count ("evaluateFusion");
/// every other message names the input by position and IR name, the dim, what was expected
/// and what was found.
void validateAndBindArguments(const Fusion& fusion, const std::vector<ArgumentInfo>& arguments,
                              std::string_view caller, ExpressionEvaluator& scalars);

}  // namespace braze
