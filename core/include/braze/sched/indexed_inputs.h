#pragma once

// Tensors read at data-dependent positions. select, index_select and gather read their first
// input at positions that come from data (a scalar, or the elements of an index tensor), not
// from the loop that computes their output:
//
//   T2[i0, i1] = index_select(T0[i2, i3], 0, T1[i4])    T0 is read at [T1[i0], i1]
//
// Such an input cannot be cached in registers or shared memory along the loop (another thread
// may need any element of it), and a kernel cannot read it from other blocks while it is being
// written: it must be in global memory before the kernel starts.

#include <optional>
#include <string>
#include <vector>

#include "braze/eval/expression_evaluator.h"
#include "braze/ir/fusion.h"

namespace braze {

/// True when input `input` of `expr` is read at data-dependent positions: input 0 of Select,
/// IndexSelect and Gather.
bool isIndexedOperand(const Expr& expr, size_t input);

/// The tensors of `fusion` some op reads at data-dependent positions, in topological order of
/// their readers, each once.
std::vector<TensorView*> indexedTensors(const Fusion& fusion);

/// Why one kernel cannot compute `fusion`, or nullopt: a tensor read at data-dependent
/// positions is computed in the fusion rather than being a fusion input. The segmenter then
/// puts its producer and its reader in different kernels.
std::optional<std::string> indexedIntermediateProblem(const Fusion& fusion);

/// Why a kernel cannot run `fusion` with the extents bound in `evaluator` (see
/// evaluateExtents), or nullopt: an op reads a dim of size 0 at data-dependent positions while
/// its output is not empty, so every position it reads is out of range (kernels clamp positions
/// into the dim, and an empty dim has none to clamp to).
std::optional<std::string> emptyIndexedDimProblem(const Fusion& fusion,
                                                  ExpressionEvaluator& evaluator);

}  // namespace braze
