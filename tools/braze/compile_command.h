#pragma once

#include <string>
#include <vector>

namespace braze::cli {

/// `braze compile DEFINITION.bzf --arch ARCH [--dir DIR] (--signature SIG)... [--signatures
/// FILE]` (args without "braze compile"): builds the persistent cache entries (kernels and
/// runtime decisions) of a saved fusion definition for each input signature, on a machine
/// with or without a GPU. Returns the exit code: 0 when every signature built.
int runCompileCommand(const std::vector<std::string>& args);

}  // namespace braze::cli
