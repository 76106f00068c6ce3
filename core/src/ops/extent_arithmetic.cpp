#include "ops/extent_arithmetic.h"

#include "braze/ops/elementwise.h"
#include "ops/domain_builder.h"

namespace braze::ops_detail {

namespace {

Scalar* asExtent(Val* result, std::string_view what) {
  BRAZE_INTERNAL_CHECK(result->isA<Scalar>()) << what << " of two extents did not produce a scalar";
  return result->as<Scalar>();
}

}  // namespace

Scalar* addExtents(Scalar* a, Scalar* b) {
  return asExtent(add(a, b), "add");
}
Scalar* subExtents(Scalar* a, Scalar* b) {
  return asExtent(sub(a, b), "sub");
}
Scalar* mulExtents(Scalar* a, Scalar* b) {
  return asExtent(mul(a, b), "mul");
}
Scalar* ceilDivExtents(Scalar* a, Scalar* b) {
  return asExtent(ceil_div(a, b), "ceil_div");
}
Scalar* maxExtents(Scalar* a, Scalar* b) {
  return asExtent(maximum(a, b), "maximum");
}
Scalar* minExtents(Scalar* a, Scalar* b) {
  return asExtent(minimum(a, b), "minimum");
}

Scalar* productOfExtents(Fusion& fusion, const std::vector<IterDomain*>& dims) {
  // Constants are multiplied here, not by the builders, so that [2, s0, 3] gives s0 * 6 with
  // one mul instead of a chain whose constants never meet.
  int64_t constant = 1;
  Scalar* symbolic = nullptr;
  for (IterDomain* id : dims) {
    Scalar* extent = id->logicalExtent();
    if (std::optional<int64_t> value = extent->constantInt()) {
      constant *= *value;
    } else {
      symbolic = symbolic == nullptr ? extent : mulExtents(symbolic, extent);
    }
  }
  if (symbolic == nullptr) return fusion.constantIndex(constant);
  if (constant == 1) return symbolic;
  return mulExtents(symbolic, fusion.constantIndex(constant));
}

Scalar* indexScalar(Fusion& fusion, const Operand& operand, std::string_view op,
                    std::string_view argument) {
  Scalar* scalar = toIndexScalar(fusion, operand, op, argument);
  if (scalar->dtype() == DataType::Index) return scalar;
  if (std::optional<int64_t> value = scalar->constantInt()) return fusion.constantIndex(*value);
  return asExtent(cast(scalar, DataType::Index), "cast");
}

Scalar* scalarOfType(Fusion& fusion, const Operand& operand, DataType dtype, std::string_view op,
                     std::string_view argument) {
  if (!operand.isVal()) return fusion.constant(operand.constant(), dtype);
  Val* val = operand.val();
  BRAZE_USER_CHECK(&val->fusion() == &fusion)
      << op << ": " << argument << " (" << val->name() << ") belongs to another fusion";
  BRAZE_USER_CHECK(val->isA<Scalar>())
      << op << ": " << argument << " must be a scalar, got tensor " << val->name();
  auto* scalar = val->as<Scalar>();
  if (scalar->dtype() == dtype) return scalar;
  if (scalar->isConstant()) return fusion.constant(*scalar->value(), dtype);
  return asExtent(cast(scalar, dtype), "cast");
}

std::string shapeText(const TensorView* x) {
  std::string text = "[";
  const std::vector<IterDomain*> dims = x->logicalNoReductions();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ", ";
    text += dims[i]->logicalExtent()->name();
  }
  return text + "]";
}

}  // namespace braze::ops_detail
