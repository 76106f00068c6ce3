#pragma once

// Files of the persistent caches: one file per entry, named by its key, written through a
// temporary file in the same folder and a rename (atomic: readers see a whole old file or a
// whole new one, and concurrent writers need no lock), read with a size cap.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace braze::serde::detail {

/// 64 lowercase hex digits.
bool isKey(std::string_view text);

/// The whole file, or nullopt with `problem` set: "absent", "not a regular file", too large,
/// unreadable. Never reads more than `cap` bytes.
std::optional<std::vector<uint8_t>> readCapped(const std::filesystem::path& path, int64_t cap,
                                               std::string& problem);

/// Writes `bytes` to `folder`/`name` (creating the folder); the reason when it could not.
std::optional<std::string> writeAtomically(const std::filesystem::path& folder,
                                           const std::string& name, std::span<const uint8_t> bytes);

/// Removes the least recently used (by modification time) files of `folder` ending in
/// `suffix` until those left take at most `max_bytes`, and temporary files of writers that died
/// (older than an hour); returns the entries removed.
int64_t pruneLeastRecentlyUsed(const std::filesystem::path& folder, std::string_view suffix,
                               int64_t max_bytes);

/// Removes every file of `folder` ending in `suffix`, and writers' temporary files; returns the
/// entries removed.
int64_t removeEntries(const std::filesystem::path& folder, std::string_view suffix);

/// Seconds since the epoch, as entries record when they were written.
int64_t unixSecondsNow();

/// The suffix of writers' temporary files.
inline constexpr std::string_view kTemporarySuffix = ".tmp";

}  // namespace braze::serde::detail
