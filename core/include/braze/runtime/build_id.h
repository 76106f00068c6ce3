#pragma once

#include <string>

namespace braze {

/// The identity of this libbraze_core build: its GNU build id (the linker's hash of the
/// library's contents, as hex), or "braze <version>" where the library has none. Part of the key
/// of every kept runtime decision, so a rebuilt core never restores decisions an older one
/// made (kernels are content-addressed and need no such key).
const std::string& coreBuildId();

}  // namespace braze
