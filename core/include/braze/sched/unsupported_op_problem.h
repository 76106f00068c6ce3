#pragma once

#include <optional>
#include <string>

#include "braze/ir/fusion.h"

namespace braze {

/// Says why a scheduler does not handle an op, or nullopt when it does: each scheduler's own
/// table of the ops its kernel shape covers.
using OpRefusal = std::optional<std::string> (*)(OpKind op);

/// The first op of `fusion` (in topological order) that `refusal` refuses, as the reason a
/// scheduler returns: "<op> is not supported: <refusal's reason>"; nullopt when it refuses none.
std::optional<std::string> unsupportedOpProblem(const Fusion& fusion, OpRefusal refusal);

}  // namespace braze
