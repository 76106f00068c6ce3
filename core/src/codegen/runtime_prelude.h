#pragma once

// The runtime headers in front of a generated kernel: only those that define a `braze::` name
// the kernel uses, and the headers those need. NVRTC's front end then parses only what the
// kernel calls (the elementwise math functions alone cost about 2.5 ms per compile on the
// 2-core build machine); the machine code is the same as with every header.

#include <string>
#include <string_view>
#include <vector>

namespace braze::codegen {

/// The runtime headers (file names, "math.cuh") that `kernel_text` needs, in dependency order:
/// each header that defines a `braze::` name the text uses, and the headers it needs. Throws an
/// internal error for a `braze::` name that no header defines (a header's table in
/// runtime_prelude.cpp lacks it).
std::vector<std::string_view> runtimeHeadersUsedBy(std::string_view kernel_text);

/// Every runtime header, in dependency order.
std::vector<std::string_view> allRuntimeHeaders();

/// The runtime headers `kernel_text` needs (runtimeHeadersUsedBy), as runtimePrelude gives them,
/// for sources written by hand: a `braze::` name no header defines is a user error.
std::string runtimePreludeFor(std::string_view kernel_text);

/// The text of `headers` in front of a kernel: each behind a "// ---- name ----" line, without
/// its include guard.
std::string runtimePrelude(const std::vector<std::string_view>& headers);

}  // namespace braze::codegen
