#pragma once

#include <string>
#include <vector>

namespace braze::cli {

/// `braze cache ARGS...` (args without "braze cache"); returns the exit code.
int runCacheCommand(const std::vector<std::string>& args);

}  // namespace braze::cli
