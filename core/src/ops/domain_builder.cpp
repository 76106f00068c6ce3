#include "ops/domain_builder.h"

namespace braze::ops_detail {

int64_t normalizeDim(std::string_view op, const TensorView* x, int64_t dim, int64_t rank) {
  BRAZE_USER_CHECK(dim >= -rank && dim < rank)
      << op << ": dim " << dim << " is out of range for " << tensorLabel(x) << " of rank "
      << x->rank() << "; valid dims are " << -rank << " .. " << rank - 1;
  return dim < 0 ? dim + rank : dim;
}

IterDomain* freshIterDomain(const IterDomain* like, bool keep_reduction) {
  const IterType type =
      like->isReduction() && !keep_reduction ? IterType::Iteration : like->iterType();
  return like->fusion().create<IterDomain>(like->extent(), type, like->expandedExtent());
}

std::vector<IterDomain*> freshDomain(const TensorView* x) {
  std::vector<IterDomain*> domain;
  for (IterDomain* id : x->logicalNoReductions()) domain.push_back(freshIterDomain(id));
  return domain;
}

IterDomain* iterDomainOfExtent(Fusion& fusion, Scalar* extent) {
  if (extent->isConstantEqualTo(1)) {
    return fusion.create<IterDomain>(extent, IterType::Broadcast);
  }
  return fusion.create<IterDomain>(extent, IterType::Iteration);
}

Scalar* toIndexScalar(Fusion& fusion, const Operand& operand, std::string_view op,
                      std::string_view argument) {
  if (!operand.isVal()) {
    const ScalarValue& value = operand.constant();
    BRAZE_USER_CHECK(std::holds_alternative<int64_t>(value))
        << op << ": " << argument << " must be an integer, got " << toString(value);
    return fusion.constantIndex(std::get<int64_t>(value));
  }
  Val* val = operand.val();
  BRAZE_USER_CHECK(&val->fusion() == &fusion)
      << op << ": " << argument << " (" << val->name() << ") belongs to another fusion";
  BRAZE_USER_CHECK(val->isA<Scalar>())
      << op << ": " << argument << " must be an integer scalar, got tensor " << val->name();
  BRAZE_USER_CHECK(isIntegral(val->dtype()))
      << op << ": " << argument << " must be an integer scalar, got " << val->name() << " of dtype "
      << val->dtype();
  return val->as<Scalar>();
}

std::string tensorLabel(const TensorView* tv) {
  const int64_t input = tv->fusion().inputIndex(tv);
  if (input < 0) return tv->name();
  return tv->name() + " (input " + std::to_string(input) + ")";
}

}  // namespace braze::ops_detail
