#pragma once

#include "braze/codegen/generated_kernel.h"
#include "braze/ir/fusion.h"
#include "braze/lower/kernel_ir.h"
#include "braze/lower/lower.h"

namespace braze {

/// Lowers a scheduled fusion (lowerFusion) and prints the kernel as CUDA C++.
///
/// The source is self-contained: Braze's runtime headers (core/src/codegen/runtime/*.cuh)
/// come first, then `using IndexT = int;` (or long long), then one `extern "C" __global__`
/// kernel whose name is "braze_" followed by 16 hex digits of a hash of everything after the
/// runtime headers, so identical kernels have identical names. Parameters, launch sizes (as
/// the fusion's scalar Vals), launch checks and alignment requirements come with it; see
/// GeneratedKernel. The fusion must outlive the result.
GeneratedKernel generateCuda(const Fusion& scheduled, const LowerOptions& options = {});

/// Prints an already lowered kernel.
GeneratedKernel generateCuda(const kir::Kernel& kernel);

}  // namespace braze
