#pragma once

#include <string>
#include <string_view>

#include "braze/codegen/generated_kernel.h"
#include "braze/ir/fusion.h"
#include "braze/lower/kernel_ir.h"
#include "braze/lower/lower.h"

namespace braze {

/// Lowers a scheduled fusion (lowerFusion) and prints the kernel as CUDA C++.
///
/// The source is self-contained: the runtime headers the kernel uses come first (each of
/// core/src/codegen/runtime/*.cuh that defines a `braze::` name the kernel names, and the
/// headers those need; NVRTC parses nothing else), then `using IndexT = int;` (or long long),
/// then one `extern "C" __global__` kernel whose name is "braze_" followed by 16 hex digits of
/// a hash of everything after the runtime headers, so identical kernels have identical names.
/// Parameters, launch sizes (as the fusion's scalar Vals), launch checks and alignment
/// requirements come with it; see GeneratedKernel. The fusion must outlive the result.
GeneratedKernel generateCuda(const Fusion& scheduled, const LowerOptions& options = {});

/// The kernel of a fusion scheduled with a kernel template (Fusion::setKernelTemplate): the
/// template's source behind the runtime headers it names and `using IndexT = int;`, its entry
/// point named like a lowered kernel's, its parameters and launch as the template states them.
/// generateCuda takes this path for such a fusion.
GeneratedKernel generateFromTemplate(const Fusion& fusion, const KernelTemplate& kernel);

/// Prints an already lowered kernel.
GeneratedKernel generateCuda(const kir::Kernel& kernel);

/// The source of `kernel` (made by generateCuda) with every runtime header in front instead of
/// those it uses: what kernels carried before generateCuda left unused headers out. It
/// compiles to the same PTX and cubin (tests/cpp/codegen checks this); the compile-time
/// benchmark times both.
std::string sourceWithAllRuntimeHeaders(const GeneratedKernel& kernel);

/// The runtime headers a kernel source written outside code generation needs (a plugin's
/// kernel template, a test kernel), to put in front of it: each of
/// core/src/codegen/runtime/*.cuh that defines a `braze::` name `kernel_source` uses, and the
/// headers those need, without include guards. A source that names no Hopper machinery
/// (braze::tma, braze::wgmma, ...) carries none of it. A `braze::` name that no header
/// defines is an Error naming it.
std::string runtimeHeadersFor(std::string_view kernel_source);

}  // namespace braze
