#pragma once

// Kernel IR to CUDA C++: the `extern "C" __global__` function (signature and body), without
// the runtime headers codegen.cpp puts in front.

#include <string>

#include "braze/lower/kernel_ir.h"

namespace braze::codegen {

/// The kernel definition named `name`, one statement per line, two-space indents.
std::string printKernel(const kir::Kernel& kernel, const std::string& name);

}  // namespace braze::codegen
