#pragma once

// The machine code (SASS) of a compiled kernel, for tests that check which instructions the
// compiler emitted: the bulk copy engine (UTMALDG), the tensor cores (HGMMA), no local memory
// (STL/LDL). Disassembled with nvdisasm, which the CUDA toolkit on the build machine lacks;
// tools/install-deps.sh installs it from PyPI.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace braze::test {

/// The nvdisasm to use: $BRAZE_NVDISASM, then $BRAZE_TOOLS_DIR (default /opt/braze-tools)
/// /nvidia/cu13/bin/nvdisasm, /usr/local/cuda/bin/nvdisasm, then nvdisasm on the PATH.
/// nullopt when none exists; `reason` then says where it looked and how to install it.
std::optional<std::string> findNvdisasm(std::string* reason = nullptr);

/// The SASS text of `cubin`. Throws a braze::Error with nvdisasm's output when it fails.
std::string disassemble(const std::string& nvdisasm, const std::vector<char>& cubin);

/// How many instructions of `sass` have the opcode `opcode` ("HGMMA" counts every
/// "HGMMA.64x128x16.F32.BF16"; "STL" does not count "USTL").
int countInstructions(std::string_view sass, std::string_view opcode);

}  // namespace braze::test
