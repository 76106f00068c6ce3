#pragma once

#include "braze/ir/fusion.h"

namespace braze {

/// Sets every tensor of `fusion` that is neither an input nor an output to MemoryType::Local.
/// For kernels in which each intermediate is produced and consumed by the same thread, so none
/// needs shared or global memory; a scheduler that needs other memory for some tensors sets it
/// after this call.
void keepIntermediatesInRegisters(Fusion& fusion);

}  // namespace braze
