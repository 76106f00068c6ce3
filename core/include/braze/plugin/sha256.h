#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

namespace braze {

/// SHA-256 of `bytes` as 64 lowercase hex digits (FIPS 180-4).
std::string sha256Hex(std::span<const uint8_t> bytes);

/// SHA-256 of a file's contents as 64 lowercase hex digits. Throws braze::Error naming the
/// path when the file cannot be read.
std::string sha256OfFile(const std::filesystem::path& path);

}  // namespace braze
