#pragma once
// Saved fusion definitions: one braze::Fusion in a file <name>.bzf (serde/schema/
// fusion_definition.fbs), so that a build step (`braze compile`) can fill the persistent cache
// for a fusion that a later process defines again.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "braze/ir/fusion.h"

namespace braze::serde {

/// The file name extension of saved definitions ("bzf", as the schema's file_extension).
inline constexpr std::string_view kFusionDefinitionExtension = "bzf";

/// The definition of `fusion` (its inputs, each expression of fusion.exprs() by op name with
/// its arguments and attributes, its outputs, and the SHA-256 of its canonical form) as the
/// bytes of a .bzf file. The schedule (loop domains, parallel and memory types, launch bounds)
/// is not part of a definition and is not saved. Before returning, the bytes are decoded
/// again and must give the same canonical form: an op that cannot be rebuilt through the op
/// builders (a Set made by scheduling, a slice whose bounds the builders would normalize
/// differently) is an Error naming the op and its position, never a file that cannot be loaded.
std::vector<uint8_t> encodeFusionDefinition(const Fusion& fusion);

/// Rebuilds a fusion from `bytes`. Nothing in the bytes is trusted: the flatbuffers verifier,
/// the file identifier ("BRZF") and the schema version are checked first, then every
/// expression is replayed through the validating op builders with every value number
/// range-checked, and the result's canonical form must hash to the recorded SHA-256. Any
/// problem is a braze::Error that starts with `where` (a path, or a label of the caller's) and
/// names the expression's position and op.
std::unique_ptr<Fusion> decodeFusionDefinition(std::span<const uint8_t> bytes,
                                               std::string_view where);

/// Writes encodeFusionDefinition(fusion) to `path` through a temporary file in the same folder
/// and a rename (creating the folder), so a reader never sees half a file. Throws an Error
/// naming the path when it cannot.
void saveFusionDefinition(const Fusion& fusion, const std::filesystem::path& path);

/// Reads and decodes the definition at `path` (at most 256 MiB); a missing, unreadable or
/// non-regular file is an Error naming the path.
std::unique_ptr<Fusion> loadFusionDefinition(const std::filesystem::path& path);

}  // namespace braze::serde
