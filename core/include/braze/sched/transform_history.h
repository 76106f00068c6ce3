#pragma once

#include <vector>

#include "braze/ir/fusion.h"

namespace braze {

/// The Split/Merge exprs on the paths from `from` to `to`, in topological (creation) order.
/// Found by walking definitions backward from `to` and stopping at IterDomains of `from`, so a
/// transform that a later schedule replaced (still listed in an IterDomain's uses) is never
/// included.
std::vector<Expr*> transformsBetween(const std::vector<IterDomain*>& from,
                                     const std::vector<IterDomain*>& to);

/// The exprs that derive `tv`'s loop domain from its logical domain: what lowering walks
/// backward to turn loop indices into logical coordinates.
std::vector<Expr*> loopTransforms(const TensorView* tv);

/// The exprs that derive `tv`'s logical domain from its root domain: empty unless `tv` is a
/// producer made by rFactor.
std::vector<Expr*> rootTransforms(const TensorView* tv);

/// The IterDomains of `domain` that `id` is derived from (itself when it is one of them), in
/// the order of `domain`.
std::vector<IterDomain*> sourcesIn(const IterDomain* id, const std::vector<IterDomain*>& domain);

}  // namespace braze
