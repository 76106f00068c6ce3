#pragma once

// What a kernel IR statement touches and whether it waits for other threads: the facts the
// passes that move statements within a scope (issue-loads-early, group-block-reductions) check
// before a statement crosses another.

#include <set>

#include "braze/ir/tensor_view.h"
#include "braze/lower/kernel_ir.h"

namespace braze::lower {

/// Every tensor `stmt` (and what it contains) reads, writes or allocates, added to `touched`.
void touchedTensors(const kir::Stmt& stmt, std::set<const TensorView*>& touched);

/// Every tensor `stmt` (and what it contains) writes or allocates, added to `written`.
void writtenTensors(const kir::Stmt& stmt, std::set<const TensorView*>& written);

/// Whether `stmt` (or what it contains) waits for other threads: a barrier, a block or grid
/// reduction.
bool synchronizes(const kir::Stmt& stmt);

}  // namespace braze::lower
