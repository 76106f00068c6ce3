#pragma once

#include <cstdint>

#include "braze/ir/fusion.h"

namespace braze {

/// Lays out the buffers of resharding steps so that NCCL moves each part as one block: for an
/// allgather, or a reduce-scatter, along an axis that is neither the outermost nor the innermost
/// in memory, the step's input is written by its producer with that axis outermost (a
/// `stride_order` after it, which the producing kernel absorbs) and the step's output is laid
/// out the same way (its allocation order, which the reading kernels follow). Parts along an
/// outermost axis are blocks already. Left to the collectives' strided copies:
/// - a split axis innermost in memory (the last dim of a row-major tensor): with it outermost
///   the kernels on either side would read or write across rows, a transpose;
/// - all-to-all (its input and output split along different axes);
/// - steps whose tensors are sliced by a stream loop (the loop needs its axis outermost);
/// - a step whose output is a fusion output (the caller gets it row-major);
/// - a step reading another's result or read by another (2-D meshes, one dim at a time).
/// Run after insertResharding. Returns the number of steps laid out.
int64_t layoutCommunicatedBuffers(Fusion& fusion);

}  // namespace braze
