#pragma once

// The lowering passes, in the order lower/pipeline.cpp runs them. Each is one free function
// in the file named after it, taking the kernel by value and returning it changed.

#include "braze/lower/kernel_ir.h"
#include "lower/lower_context.h"

namespace braze::lower {

kir::Kernel buildLoopNests(kir::Kernel kernel, const LowerContext& ctx);
kir::Kernel allocate(kir::Kernel kernel, const LowerContext& ctx);
kir::Kernel indexAccesses(kir::Kernel kernel, const LowerContext& ctx);
kir::Kernel insertPredicates(kir::Kernel kernel, const LowerContext& ctx);
kir::Kernel hoistParallelReductions(kir::Kernel kernel, const LowerContext& ctx);
kir::Kernel vectorizeAccesses(kir::Kernel kernel, const LowerContext& ctx);
kir::Kernel unswitch(kir::Kernel kernel, const LowerContext& ctx);
kir::Kernel issueLoadsEarly(kir::Kernel kernel, const LowerContext& ctx);
kir::Kernel groupBlockReductions(kir::Kernel kernel, const LowerContext& ctx);
kir::Kernel insertSyncs(kir::Kernel kernel, const LowerContext& ctx);
kir::Kernel recordLaunchChecks(kir::Kernel kernel, const LowerContext& ctx);

}  // namespace braze::lower
