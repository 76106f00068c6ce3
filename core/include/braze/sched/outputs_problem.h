#pragma once

#include <optional>
#include <string>

#include "braze/ir/fusion.h"

namespace braze {

/// Why no kernel can be scheduled for `fusion`'s outputs as they stand, or nullopt: it has no
/// outputs, an output is a scalar (kernels write tensors), or an output is also an input (there
/// is nothing to compute). Every scheduler refuses these before looking at its ops.
std::optional<std::string> outputsProblem(const Fusion& fusion);

/// Why one loop nest over `reference` cannot write every output, or nullopt: an output has
/// another rank than the reference. Requires outputsProblem to be nullopt.
std::optional<std::string> outputRankProblem(const Fusion& fusion, const TensorView* reference);

}  // namespace braze
