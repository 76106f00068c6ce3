#pragma once

// A segment's kernel recipe (braze/runtime/kernel_recipe.h) inside a runtime entry: encoding,
// decoding with every enum checked, and its part of the entry's content hash.

#include <flatbuffers/flatbuffers.h>

#include <optional>
#include <string>

#include "braze/runtime/content_hash.h"
#include "braze/runtime/kernel_recipe.h"
#include "braze/serde/runtime_entry_generated.h"

namespace braze::serde::detail {

flatbuffers::Offset<fb::KernelRecipe> encodeKernelRecipe(flatbuffers::FlatBufferBuilder& builder,
                                                         const KernelRecipe& recipe);

/// The recipe, or nullopt with `problem` set (an unknown op, dtype or kind, a missing field).
/// Indices are checked later, against the segment (rebuildKernel).
std::optional<KernelRecipe> decodeKernelRecipe(const fb::KernelRecipe& stored,
                                               std::string& problem);

/// Adds every field of `recipe` to `hasher`.
void hashKernelRecipe(ContentHasher& hasher, const KernelRecipe& recipe);

}  // namespace braze::serde::detail
