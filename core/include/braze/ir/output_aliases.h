#pragma once

#include <cstdint>

#include "braze/ir/fusion.h"

namespace braze {

/// Whether writing `output` straight into `input`'s memory (Fusion::aliasOutputToInput) can
/// never change a value the fusion reads, whatever the segmentation and schedule. It can when
/// every read of an element of `input` happens before the write of that element:
///  - the fusion does not read `input` at all;
///  - one elementwise op reads it and a chain of elementwise ops leads from there to `output`:
///    each element of `output` then depends on the same element of `input`, so the kernel that
///    stores it has loaded that element first, and no other kernel or thread loads it;
///  - it is the tensor a scatter writes into, and `output` is that scatter's result (the
///    scatter then writes only the positions it changes).
/// Anything else (a second reader, a reduction, a transpose or a slice of `input` on the way)
/// could read an element after another thread or a later kernel wrote it.
bool writesInPlaceSafely(const Fusion& fusion, const TensorView* output, const TensorView* input);

/// For each aliased output that writesInPlaceSafely rejects, computes it into a fresh tensor as
/// before and adds a segment_set copy of it as the aliased output: the copy reads no input, so
/// it can run after every reader of the input (buildHostProgram orders it so). Returns how many
/// outputs were rewritten. The executor cache applies it to its copy of a fusion before
/// segmentation.
int64_t copyUnsafeAliasedOutputs(Fusion& fusion);

}  // namespace braze
