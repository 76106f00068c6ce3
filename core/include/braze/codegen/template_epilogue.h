#pragma once

// The epilogue of a kernel template (KernelTemplate::Epilogue): the fusion's exprs after the
// template's anchor, which code generation writes as a device function the template calls
// with its fp32 results. What it covers:
//   - elementwise ops (unary, binary, ternary, casts), broadcasts, expands and sets, applied
//     per element of the anchor: bias rows and columns, activations, residual adds, scalings
//     by constants or scalar inputs, output casts;
//   - fusion inputs read through their strides at the anchor's index (broadcast dims of an
//     input are not indexed), scalar inputs passed by value;
//   - every fusion output, the anchor's shape, each depending on the anchor (the anchor
//     itself may be one).
// Ops that move elements between positions (permutes, reshapes, slices, reductions) and
// anything computed before the anchor are not part of an epilogue.
//
// Besides braze_epilogue (KernelTemplate::Epilogue), code generation writes
// braze_epilogue_if(bool store, i0, ..., values ...), which stores only where `store` holds
// but reads its inputs either way: a template that calls it with indices clamped into the
// anchor for elements outside it needs one copy of the epilogue for whole and edge tiles, and
// the epilogue's loads carry no branch. braze_epilogue_staged(bool store, i0, ...,
// values, braze_staged_output& staged ...) is braze_epilogue_if with the fusion's first output
// handed back in `staged` (a braze::Vector of its storage type, `vector` wide) instead of
// stored: a template that writes that output through shared memory with bulk tensor copies
// (tails clipped by the copy engine) calls it and stores the rest as braze_epilogue_if would.
// Both take a template argument, braze_vector_inputs (default 0): where its bit k is set, the
// caller vouches that fusion input k has stride 1 along its innermost dim and that the groups
// of `vector` elements it reads are aligned to their size, and an input read along the
// anchor's innermost dim is then loaded a group at a time instead of element by element.

#include <optional>
#include <string>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// Why code generation cannot write the rest of `fusion` as the epilogue of a template that
/// computes `anchor` (adding `accumulator_bias`, a 1-d input, before rounding) and the
/// `prologue` tensors (KernelTemplate::Epilogue::prologue), or nullopt. The message names the
/// op or tensor at fault. Schedulers call it from canSchedule.
std::optional<std::string> templateEpilogueProblem(const Fusion& fusion, const TensorView* anchor,
                                                   const TensorView* accumulator_bias = nullptr,
                                                   const std::vector<TensorView*>& prologue = {});

}  // namespace braze
