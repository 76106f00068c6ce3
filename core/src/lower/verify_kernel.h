#pragma once

#include <string_view>

#include "braze/lower/kernel_ir.h"
#include "lower/lower_context.h"

namespace braze::lower {

/// Checks the invariants of kernel IR after pass `after`: loop indices are unique, registers
/// and shared memory are accessed inside the scope of their allocation (once allocation ran),
/// every access has an offset (when `indexed`), and no barrier or block/grid reduction sits in
/// a branch. A violation is an internal error naming the pass.
void verifyKernel(const kir::Kernel& kernel, const LowerContext& ctx, std::string_view after,
                  bool indexed);

}  // namespace braze::lower
