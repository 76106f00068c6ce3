#include "sched/iter_domain_transforms.h"

#include "braze/ops/elementwise.h"

namespace braze::sched_detail {

namespace {

Scalar* asScalar(Val* value) {
  BRAZE_INTERNAL_CHECK(value != nullptr && value->isA<Scalar>())
      << "extent arithmetic did not produce a scalar";
  return value->as<Scalar>();
}

Scalar* ceilDiv(Scalar* a, Scalar* b) {
  return asScalar(ceil_div(Operand(a), Operand(b)));
}

Scalar* product(Scalar* a, Scalar* b) {
  return asScalar(mul(Operand(a), Operand(b)));
}

}  // namespace

SplitIds splitIterDomain(IterDomain* in, Scalar* factor, bool inner_split,
                         std::optional<IterType> outer_type, std::optional<IterType> inner_type) {
  Fusion& fusion = in->fusion();
  const IterType type = in->iterType();
  IterDomain* outer = nullptr;
  IterDomain* inner = nullptr;
  if (in->isBroadcast()) {
    // A broadcast has no storage and iterates once whatever the split: both halves keep
    // extent 1. An expanded broadcast still splits the size it stands for, so that the
    // halves line up with the iteration dims they are combined with.
    Scalar* one = fusion.constantIndex(1);
    Scalar* outer_expanded = nullptr;
    Scalar* inner_expanded = nullptr;
    if (in->hasExpandedExtent()) {
      Scalar* rest = ceilDiv(in->expandedExtent(), factor);
      outer_expanded = inner_split ? rest : factor;
      inner_expanded = inner_split ? factor : rest;
    }
    outer = fusion.create<IterDomain>(one, type, outer_expanded);
    inner = fusion.create<IterDomain>(one, type, inner_expanded);
  } else {
    Scalar* rest = ceilDiv(in->extent(), factor);
    outer = fusion.create<IterDomain>(inner_split ? rest : factor, outer_type.value_or(type));
    inner = fusion.create<IterDomain>(inner_split ? factor : rest, inner_type.value_or(type));
  }
  fusion.create<Expr>(OpKind::Split, std::vector<Val*>{in, factor}, std::vector<Val*>{outer, inner},
                      std::vector<Attribute>{{"inner_split", inner_split}});
  return {outer, inner};
}

std::optional<std::string> mergeProblem(const IterDomain* outer, const IterDomain* inner) {
  if ((outer->isReduction() && inner->isIteration()) ||
      (outer->isIteration() && inner->isReduction())) {
    return "a Reduction axis and an Iteration axis cannot share one loop";
  }
  if ((outer->isReduction() && inner->hasExpandedExtent()) ||
      (inner->isReduction() && outer->hasExpandedExtent())) {
    return "a Reduction axis cannot be merged with an expanded Broadcast axis, whose size is "
           "part of the tensor's shape";
  }
  return std::nullopt;
}

IterDomain* mergeIterDomains(IterDomain* outer, IterDomain* inner,
                             std::optional<IterType> type_override) {
  BRAZE_INTERNAL_CHECK(!mergeProblem(outer, inner).has_value())
      << "merge of " << outer->name() << " and " << inner->name() << " was not checked";
  Fusion& fusion = outer->fusion();
  IterDomain* out = nullptr;
  if (outer->isBroadcast() && inner->isBroadcast()) {
    Scalar* expanded = nullptr;
    if (outer->hasExpandedExtent() || inner->hasExpandedExtent()) {
      expanded = product(outer->logicalExtent(), inner->logicalExtent());
    }
    out = fusion.create<IterDomain>(fusion.constantIndex(1), IterType::Broadcast, expanded);
  } else {
    // A plain broadcast contributes a factor of 1, so the other extent is reused as it is; an
    // expanded one iterates over the size it stands for.
    const IterType type = type_override.value_or(
        outer->isReduction() || inner->isReduction() ? IterType::Reduction : IterType::Iteration);
    Scalar* extent = nullptr;
    if (outer->isBroadcast() && !outer->hasExpandedExtent()) {
      extent = inner->extent();
    } else if (inner->isBroadcast() && !inner->hasExpandedExtent()) {
      extent = outer->extent();
    } else {
      extent = product(outer->logicalExtent(), inner->logicalExtent());
    }
    out = fusion.create<IterDomain>(extent, type);
  }
  fusion.create<Expr>(OpKind::Merge, std::vector<Val*>{outer, inner}, std::vector<Val*>{out});
  return out;
}

bool sameScalar(const Scalar* a, const Scalar* b) {
  if (a == b) return true;
  const std::optional<int64_t> va = a->constantInt();
  const std::optional<int64_t> vb = b->constantInt();
  return va.has_value() && vb.has_value() && *va == *vb;
}

bool isSplitOf(const Expr* expr, const Scalar* factor, bool inner_split) {
  return expr->op() == OpKind::Split && expr->attribute<bool>("inner_split") == inner_split &&
         sameScalar(expr->input(1)->as<Scalar>(), factor);
}

int64_t normalizeLoopAxis(const TensorView* tv, int64_t axis, std::string_view call) {
  const int64_t n = tv->nLoopDims();
  BRAZE_USER_CHECK(axis >= -n && axis < n)
      << call << " on " << tensorLabel(tv) << ": loop axis " << axis << " is out of range; "
      << tv->name() << " has " << n << " loop axes"
      << (n > 0 ? " (valid: " + std::to_string(-n) + " .. " + std::to_string(n - 1) + ")" : "");
  return axis < 0 ? axis + n : axis;
}

std::string tensorLabel(const TensorView* tv) {
  const int64_t input = tv->fusion().inputIndex(tv);
  if (input < 0) return tv->name();
  return tv->name() + " (input " + std::to_string(input) + ")";
}

}  // namespace braze::sched_detail
