#pragma once

#include <cstddef>
#include <string>

namespace braze {

class Fusion;

/// A canonical text of the fusion's definition: every reachable value renumbered in order of
/// first use, with dtypes, domains, layouts, constants, ops and attributes. Statement ids and
/// unreachable statements do not appear, so two fusions built the same way (or a fusion and
/// its clone) have the same canonical form. Schedules (loop domains, memory and parallel
/// types) are not part of a definition and do not appear either.
std::string canonicalForm(const Fusion& fusion);

/// Hash of canonicalForm(); the key of definition caches.
size_t structuralHash(const Fusion& fusion);

/// True when both fusions compute the same thing the same way (equal canonical forms).
bool structurallyEqual(const Fusion& a, const Fusion& b);

}  // namespace braze
