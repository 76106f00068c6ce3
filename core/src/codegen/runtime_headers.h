#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace braze::codegen {

/// The CUDA headers generated kernels rely on (core/src/codegen/runtime/*.cuh), as
/// (file name, text), embedded at build time.
const std::vector<std::pair<std::string_view, std::string_view>>& runtimeHeaders();

}  // namespace braze::codegen
