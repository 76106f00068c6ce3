#pragma once

// Compact text for what op-builder tests check: a tensor's logical domain and the scalar
// expressions behind its extents, without depending on statement numbering beyond the
// symbolic leaves a test creates itself.

#include <string>
#include <unordered_set>

#include <gtest/gtest.h>

#include "braze/ir/fusion.h"

namespace braze::test {

/// A scalar as an expression tree: constants by value, symbolic leaves by name ("s0"), scalar
/// Exprs as "op(a, b)": "ceil_div(sub(s0, 2), 3)".
inline std::string scalarText(const Scalar* scalar) {
  const Expr* def = scalar->definition();
  if (def == nullptr) return scalar->name();
  std::string text = std::string(toString(def->op())) + "(";
  for (size_t i = 0; i < def->inputs().size(); ++i) {
    if (i > 0) text += ", ";
    text += scalarText(def->input(i)->as<Scalar>());
  }
  if (def->op() == OpKind::Cast) text += ", " + std::string(toString(scalar->dtype()));
  return text + ")";
}

/// The logical domain: iteration dims by extent, "r:<extent>" for reductions, "b" for a
/// broadcast and "b ex <extent>" for an expanded one: "[s0, r:3, b, b ex 4]".
inline std::string domainText(const TensorView* tv) {
  std::string text = "[";
  for (size_t i = 0; i < tv->logical().size(); ++i) {
    const IterDomain* id = tv->logical()[i];
    if (i > 0) text += ", ";
    if (id->isReduction()) text += "r:";
    if (id->isBroadcast()) {
      text += id->extent()->isConstantEqualTo(1) ? "b" : "b{" + scalarText(id->extent()) + "}";
      if (id->hasExpandedExtent()) text += " ex " + scalarText(id->expandedExtent());
    } else {
      text += scalarText(id->extent());
    }
  }
  return text + "]";
}

/// The Expr that defines `tv`, checked to be `op`.
inline const Expr* definitionOf(const TensorView* tv, OpKind op) {
  const Expr* def = tv->definition();
  EXPECT_NE(def, nullptr) << tv->name() << " has no definition";
  if (def != nullptr) {
    EXPECT_EQ(def->op(), op) << tv->name() << " is defined by " << def->op();
  }
  return def;
}

/// Every TensorView of the fusion owns its IterDomains: none appears in two logical domains.
inline ::testing::AssertionResult ownsItsDomains(const Fusion& fusion) {
  std::unordered_set<const IterDomain*> seen;
  for (const TensorView* tv : fusion.allTensors()) {
    for (const IterDomain* id : tv->logical()) {
      if (!seen.insert(id).second) {
        return ::testing::AssertionFailure()
               << id->name() << " appears in " << tv->name() << " and in another tensor";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace braze::test
